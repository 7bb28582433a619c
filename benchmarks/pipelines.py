"""A pipeline built from a training config as ``spacy train`` builds it, for the
benchmarks that time ``nlp.update`` and ``nlp.pipe`` outside ``spacy train``. Imported by
the scripts of this folder, run as ``python benchmarks/NAME.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional, Tuple, Union

from spacy.language import Language
from spacy.util import load_config, load_model_from_config
from thinc.api import Config


def pipeline_from_config(
    path: Union[str, Path], overrides: Optional[Dict[str, Any]] = None
) -> Tuple[Language, Config]:
    """The untrained pipeline of the config at ``path`` (with ``overrides``) and the
    config filled with spaCy's defaults, then interpolated: the project's configs state
    only what differs from the defaults (``training.max_steps`` among them), so the file
    alone cannot be interpolated."""
    config = Config(Language.default_config).merge(load_config(path, overrides=overrides or {}))
    config = config.interpolate()
    return load_model_from_config(config, auto_fill=True), config


# the sizes of an encoder "shrunk to almost nothing": what is left of a step's time is the
# host's work (batching, wordpieces, targets, decoding), the most a faster device can save
TINY_LISA = {
    "width": 16,
    "n_heads": 2,
    "ffn_width": 16,
    "parse_dep_width": 16,
    "parse_head_width": 16,
    "role_width": 16,
}


def shrunk_config(config: Config, tiny_transformer: Path) -> Config:
    """A copy of the filled pipeline ``config`` with the ``lisa_srl`` encoder shrunk to
    almost nothing: LISA's layers 16 wide, a hash-embedding tok2vec 16 wide and one layer
    deep, a transformer tok2vec reading ``tiny_transformer`` (see
    :func:`save_tiny_transformer`) with the same tokenizer. Depths, windows, batching and
    decoding stay as configured."""
    config = Config(config).copy()
    model = config["components"]["lisa_srl"]["model"]
    model.update(TINY_LISA)
    tok2vec = model["tok2vec"]
    if "name" in tok2vec:  # spacy-lisa.TransformerTok2Vec.v1
        tok2vec["name"] = str(tiny_transformer)
    else:  # spacy.Tok2Vec.v2 over spacy-lisa.MultiHashEmbed.v1
        tok2vec["embed"]["width"] = TINY_LISA["width"]
        tok2vec["encode"].update(width=TINY_LISA["width"], depth=1)
    return config


def save_tiny_transformer(tokenizer_source: str, path: Path) -> Path:
    """A one-layer, 16-wide BERT with random weights and the tokenizer of
    ``tokenizer_source`` (a directory or ``package:subdir``), saved to ``path``: the same
    wordpieces as the real encoder at almost no compute."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from spacy_lisa.models.pretrained import local_model_path

    tokenizer = AutoTokenizer.from_pretrained(local_model_path(tokenizer_source))
    hf_config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=1,
        intermediate_size=16,
        max_position_embeddings=512,
        type_vocab_size=2,
    )
    BertModel(hf_config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
