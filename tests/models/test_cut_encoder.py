"""``num_layers``: a transformer cut to its embeddings and lower blocks, on tiny random
encoders of every family (``encoder_testing``). The reference is the full encoder's own
``output_hidden_states``, pooled into tokens here."""

from __future__ import annotations

import copy
import io
import re
import shutil
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable, Dict, List, Set

import numpy
import pytest
import spacy
import srsly
import torch
from encoder_testing import FAMILIES, LONG_WORDS, encoder_builder
from spacy.tokens import Doc
from spacy.util import registry
from srl_testing import TEXT_SENTENCES, TINY_MODEL, gold_examples
from thinc.api import Adam, ConfigValidationError

from spacy_lisa.models.transformer import _encode, _plan, encode_marked
from spacy_lisa.models.transformer_torch import encoder_blocks
from spacy_lisa.models.wordpieces import MarkedWindows, doc_windows, marked_windows

TOK2VEC = "spacy-lisa.TransformerTok2Vec.v1"
DEPTH = 4  # blocks of the tiny encoders here
# transformers 5 ends ModernBERT's hidden_states with the final-normed state, 4 without
NORMED_LAST_STATE = int(version("transformers").split(".")[0]) >= 5
# a block's parameter: encoder.layer.2., transformer.layer.2. (DistilBERT), layers.2.
BLOCK = re.compile(r"\blayers?\.(\d+)\.")
SENTENCES = [
    "John sold the car to Mary .".split(),
    "She said she would come back tomorrow .".split(),
    LONG_WORDS,  # more wordpieces than a window holds: split in two windows
]


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    return encoder_builder(tmp_path_factory.mktemp("cut_encoders"), layers=DEPTH)


@pytest.fixture(scope="module")
def vocab() -> Any:
    return spacy.blank("en").vocab


def make_tok2vec(path: Any, **options: Any) -> Any:
    config = {"@architectures": TOK2VEC, "name": str(path), "hidden_dropout": 0.0, **options}
    model = registry.resolve({"m": config})["m"]
    model.initialize()
    return model


def shim_of(model: Any) -> Any:
    return model.shims[0]


def blocks_of(model: Any) -> List[Any]:
    return list(getattr(*encoder_blocks(shim_of(model).encoder.transformer)))


def docs_of(vocab: Any) -> List[Doc]:
    return [Doc(vocab, words=words) for words in SENTENCES]


def pooled_states(
    full: Any, raw: List[Any], lengths: List[int], states: List[int], *, normed_last: bool
) -> List[numpy.ndarray]:
    """The mean over ``states`` (indices into the full encoder's ``hidden_states``) of
    each token's wordpiece-mean, per entry of ``lengths``, computed with the full
    tok2vec's transformer and windows; ``normed_last``: the last of ``states`` through
    what the encoder puts after its last block (ModernBERT's final norm), as the cut
    encoder's last state comes out of it."""
    transformer = shim_of(full).encoder.transformer
    windows = _plan(full, raw)
    width = int(transformer.config.hidden_size)
    sums = numpy.zeros((sum(lengths), width), dtype="float64")
    counts = numpy.zeros(sum(lengths))
    with torch.no_grad():
        for sub in _encode(full, windows):
            marks = {} if sub.marks is None else {"token_type_ids": sub.marks}
            out = transformer(
                input_ids=sub.input_ids, attention_mask=sub.attention_mask,
                output_hidden_states=True, return_dict=True, **marks,
            )  # fmt: skip
            chosen = [out.hidden_states[k] for k in states]
            if normed_last and hasattr(transformer, "final_norm"):
                chosen[-1] = transformer.final_norm(chosen[-1])
            state = torch.stack(chosen).mean(dim=0)
            flat = state.reshape(-1, width).numpy()
            for position, row in enumerate(sub.token_index.tolist()):
                if row >= 0:
                    sums[row] += flat[position]
                    counts[row] += 1
    pooled = (sums / numpy.maximum(counts, 1)[:, None]).astype("float32")
    return numpy.split(pooled, numpy.cumsum(lengths)[:-1])


def saved_transformer(model_bytes: bytes) -> Dict[str, Any]:
    """The transformer a saved tok2vec holds: its HF config, its state dict and the
    state's size in bytes."""
    msg = srsly.msgpack_loads(model_bytes)
    payloads = [srsly.msgpack_loads(shim) for shims in msg["shims"] for shim in shims]
    # a lisa_srl model holds the LISA layers' torch shim too
    (payload,) = [p for p in payloads if isinstance(p, dict) and "hf_config" in p]
    state = torch.load(io.BytesIO(payload["state"]), weights_only=True)
    return {"hf_config": payload["hf_config"], "state": state, "n_bytes": len(payload["state"])}


def saved_depth(hf_config: Dict[str, Any]) -> int:
    """num_hidden_layers of a saved HF config (DistilBERT saves it as n_layers)."""
    from transformers import AutoConfig

    config = dict(hf_config)
    return int(AutoConfig.for_model(config.pop("model_type"), **config).num_hidden_layers)


def block_indices(state: Dict[str, Any]) -> Set[int]:
    """The block indices the transformer weights of a state dict belong to."""
    found = (BLOCK.search(key) for key in state if key.startswith("transformer."))
    return {int(match.group(1)) for match in found if match}


# --- what a cut encoder computes ---------------------------------------------------------


@pytest.mark.parametrize("num_layers", [1, DEPTH - 1])
@pytest.mark.parametrize("family", FAMILIES)
def test_a_cut_encoder_gives_the_full_encoders_state_after_its_last_block(
    family, num_layers, encoder_dir, vocab
):
    """The vectors of num_layers = k are the full encoder's hidden_states[k] pooled into
    tokens (through ModernBERT's final norm, which follows the blocks kept), and the top
    blocks are gone from the model: its block list, its config and its parameters."""
    full = make_tok2vec(encoder_dir(family))
    cut = make_tok2vec(encoder_dir(family), num_layers=num_layers)
    docs = docs_of(vocab)
    expected = pooled_states(full, *doc_windows(docs), [num_layers], normed_last=True)
    for got, want in zip(cut.predict(docs), expected, strict=True):
        numpy.testing.assert_allclose(got, want, atol=1e-5, rtol=0)
    assert len(blocks_of(cut)) == num_layers
    assert shim_of(cut).encoder.transformer.config.num_hidden_layers == num_layers
    top = sum(p.numel() for block in blocks_of(full)[num_layers:] for p in block.parameters())
    n_full = sum(p.numel() for p in shim_of(full).encoder.parameters())
    assert sum(p.numel() for p in shim_of(cut).encoder.parameters()) == n_full - top


@pytest.mark.parametrize("family", FAMILIES)
def test_the_mix_weighs_the_states_of_the_blocks_kept(family, encoder_dir, vocab):
    """layer_mix with num_layers = 2: three weights (the embeddings and two blocks); the
    untrained mix (uniform, gamma 1) is the mean of the full encoder's hidden_states[0..2]
    (the last as the encoder's hidden_states end: transformers 5 gives ModernBERT's
    through its final norm, transformers 4 before it)."""
    full = make_tok2vec(encoder_dir(family))
    cut = make_tok2vec(encoder_dir(family), num_layers=2, layer_mix=True)
    assert tuple(shim_of(cut).encoder.mix_weights.shape) == (3,)
    docs = docs_of(vocab)
    expected = pooled_states(full, *doc_windows(docs), [0, 1, 2], normed_last=NORMED_LAST_STATE)
    for got, want in zip(cut.predict(docs), expected, strict=True):
        numpy.testing.assert_allclose(got, want, atol=1e-5, rtol=0)


@pytest.mark.parametrize("family", FAMILIES)
def test_all_the_blocks_are_the_default(family, encoder_dir, vocab):
    default = make_tok2vec(encoder_dir(family))
    whole = make_tok2vec(encoder_dir(family), num_layers=DEPTH)
    assert len(blocks_of(whole)) == DEPTH
    keys = shim_of(default).encoder.state_dict().keys()
    assert shim_of(whole).encoder.state_dict().keys() == keys
    docs = docs_of(vocab)
    for got, want in zip(whole.predict(docs), default.predict(docs), strict=True):
        numpy.testing.assert_array_equal(got, want)


# --- saving and loading ------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_the_saved_pipeline_holds_only_the_blocks_kept(family, encoder_dir, tmp_path, monkeypatch):
    """A lisa_srl pipeline on an encoder cut to 2 of its 4 blocks, trained a step: its
    saved transformer is a 2-block one (config, weights, fewer bytes than the whole
    encoder's), and it loads with the encoder directory moved away and the hub offline,
    as a 2-block encoder giving the same vectors."""
    local = tmp_path / family
    shutil.copytree(encoder_dir(family), local)
    model = copy.deepcopy(TINY_MODEL)
    model["tok2vec"] = {
        "@architectures": TOK2VEC, "name": str(local), "hidden_dropout": 0.0, "num_layers": 2,
    }  # fmt: skip
    nlp = spacy.blank("xx")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": model, "predicate_source": "doc"})
    examples = gold_examples(nlp, TEXT_SENTENCES)
    optimizer = nlp.initialize(lambda: examples)
    nlp.update(examples, sgd=optimizer, drop=0.0)
    tok2vec = nlp.get_pipe("lisa_srl").model.get_ref("tok2vec")
    texts = [text for text, *_ in TEXT_SENTENCES] + [" ".join(LONG_WORDS)]
    docs = [nlp.make_doc(text) for text in texts]
    expected = tok2vec.predict(docs)

    nlp.to_disk(tmp_path / "pipeline")
    saved = saved_transformer((tmp_path / "pipeline" / "lisa_srl" / "model").read_bytes())
    assert saved_depth(saved["hf_config"]) == 2
    assert block_indices(saved["state"]) == {0, 1}
    whole = saved_transformer(make_tok2vec(encoder_dir(family)).to_bytes())
    assert block_indices(whole["state"]) == set(range(DEPTH))
    assert saved["n_bytes"] < whole["n_bytes"]

    local.rename(tmp_path / "moved")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty_hf_home"))
    loaded = spacy.load(tmp_path / "pipeline")
    loaded_tok2vec = loaded.get_pipe("lisa_srl").model.get_ref("tok2vec")
    assert len(blocks_of(loaded_tok2vec)) == 2
    for got, want in zip(loaded_tok2vec.predict(docs), expected, strict=True):
        numpy.testing.assert_allclose(got, want, atol=1e-6, rtol=0)


# --- settings that cannot work -----------------------------------------------------------


def test_num_layers_out_of_range_is_refused(encoder_dir):
    base = {"@architectures": TOK2VEC, "name": "unused"}
    for value in (0, -1):
        with pytest.raises(ValueError, match=rf"\[E163\].*num_layers={value}"):
            registry.resolve({"m": {**base, "num_layers": value}})
    with pytest.raises(ValueError, match=r"\[E193\].*trainable_layers=3.*num_layers=2"):
        registry.resolve({"m": {**base, "num_layers": 2, "trainable_layers": 3}})
    # the depth is known once the encoder's config is read, at initialize
    with pytest.raises(ConfigValidationError) as info:
        make_tok2vec(encoder_dir("bert"), num_layers=DEPTH + 1)
    message = " ".join(str(info.value).split())
    assert f"[E192] spacy-lisa.TransformerTok2Vec.v1: num_layers={DEPTH + 1}" in message
    assert f"has {DEPTH} blocks" in message and str(encoder_dir("bert")) in message


@pytest.mark.parametrize(
    "saved_with,loaded_with", [(2, 3), (None, 2)], ids=["cut-loaded-deeper", "whole-loaded-cut"]
)
def test_a_saved_transformer_is_not_cut_again(saved_with, loaded_with, encoder_dir, vocab):
    """The saved blocks are those kept: a tok2vec whose num_layers differs from them
    refuses the bytes (E194); num_layers = null takes the saved blocks, all of them."""
    saved = make_tok2vec(encoder_dir("roberta"), num_layers=saved_with).to_bytes()
    n_saved = saved_with or DEPTH
    config = {"@architectures": TOK2VEC, "name": "/gone", "num_layers": loaded_with}
    with pytest.raises(ValueError, match=rf"\[E194\].*num_layers={loaded_with}.*{n_saved} blocks"):
        registry.resolve({"m": config})["m"].from_bytes(saved)
    anything = registry.resolve({"m": {**config, "num_layers": None}})["m"].from_bytes(saved)
    assert len(blocks_of(anything)) == n_saved


# --- with the other settings -------------------------------------------------------------


def changed_parameter_names(model: Any, docs: List[Doc]) -> List[str]:
    """The encoder parameters an update changes, after one hit step (the second pass)."""
    encoder = shim_of(model).encoder
    model.begin_update(docs)  # misses: the boundary states are kept
    before = {n: p.detach().clone() for n, p in encoder.named_parameters()}
    Xs, backprop = model.begin_update(docs)  # hits
    rng = numpy.random.RandomState(0)
    backprop([rng.normal(size=x.shape).astype("float32") for x in Xs])
    model.finish_update(Adam(0.01))
    return sorted(n for n, p in encoder.named_parameters() if not torch.equal(before[n], p))


@pytest.mark.parametrize("layer_mix", [False, True], ids=["last", "mix"])
@pytest.mark.parametrize("family", FAMILIES)
def test_trainable_layers_count_from_the_top_of_the_blocks_kept(
    family, layer_mix, encoder_dir, vocab
):
    """num_layers = 3 of 4 with trainable_layers = 1: block 2, the top one kept, learns,
    and nothing below it; its boundary (block 1's output) is cached, and a hit gives the
    states a fresh pass gives."""
    model = make_tok2vec(
        encoder_dir(family), num_layers=3, trainable_layers=1, cache_tokens=10_000,
        layer_mix=layer_mix,
    )  # fmt: skip
    encoder = shim_of(model).encoder
    assert encoder.n_top == 1 and encoder.n_layers == (2 if layer_mix else 1)
    docs = docs_of(vocab)
    fresh = model.predict(docs)
    changed = changed_parameter_names(model, docs)
    blocks = {int(m.group(1)) for n in changed if (m := BLOCK.search(n))}
    assert blocks == {2}, changed
    outside = [n for n in changed if n.startswith("transformer.") and not BLOCK.search(n)]
    assert all(n.startswith("transformer.final_norm.") for n in outside), outside
    assert [block.training for block in blocks_of(model)] == [False, False, True]
    assert shim_of(model).cache.hits == len(_plan(model, doc_windows(docs)[0]))
    fresh_model = make_tok2vec(
        encoder_dir(family), num_layers=3, trainable_layers=1, cache_tokens=10_000,
        layer_mix=layer_mix,
    )  # fmt: skip
    fresh_model.begin_update(docs)
    again, _ = fresh_model.begin_update(docs)
    for x, y in zip(again, fresh, strict=True):  # from float16 boundaries: close
        numpy.testing.assert_allclose(x, y, atol=5e-3, rtol=0)


def test_all_the_blocks_kept_may_train(encoder_dir):
    model = make_tok2vec(encoder_dir("mpnet"), num_layers=2, trainable_layers=2)
    encoder = shim_of(model).encoder
    assert encoder.n_top == 0 and all(p.requires_grad for p in encoder.parameters())


@pytest.mark.parametrize("family", ["bert", "roberta", "mpnet"])
def test_a_frozen_cut_encoder_caches_the_states_it_mixes(family, encoder_dir, vocab):
    """frozen with cache_tokens and layer_mix, num_layers = 2: each token's three kept
    states are cached, and a hit gives the vectors of a fresh pass."""
    model = make_tok2vec(
        encoder_dir(family), num_layers=2, frozen=True, cache_tokens=10_000, layer_mix=True
    )
    docs = docs_of(vocab)
    fresh = model.predict(docs)
    model.begin_update(docs)
    again, _ = model.begin_update(docs)
    cache = shim_of(model).cache
    assert cache.hits == len(_plan(model, doc_windows(docs)[0]))
    assert {value.shape[0] for value, _ in cache._data.values()} == {3}
    for x, y in zip(again, fresh, strict=True):
        numpy.testing.assert_allclose(x, y, atol=5e-3, rtol=0)


@pytest.mark.parametrize("predicate_mark", ["token_type", "indicator"])
def test_the_marked_pass_runs_the_blocks_kept(predicate_mark, encoder_dir, vocab):
    """The predicate-aware pass of a cut encoder: with token types, the full encoder's
    hidden_states[2] with the predicate as token type 1; with the indicator (zero until
    trained), the unmarked vectors."""
    full = make_tok2vec(encoder_dir("bert"))
    cut = make_tok2vec(encoder_dir("bert"), num_layers=2, predicate_mark=predicate_mark)
    doc = Doc(vocab, words=SENTENCES[0])
    X = MarkedWindows([doc], [(0, 0, len(doc), 1)])
    (got,), _ = encode_marked(cut, X, False)
    unmarked = cut.predict([doc])[0]
    if predicate_mark == "indicator":
        numpy.testing.assert_allclose(got, unmarked, atol=1e-6, rtol=0)
    else:
        (want,) = pooled_states(full, *marked_windows(X), [2], normed_last=True)
        numpy.testing.assert_allclose(got, want, atol=1e-5, rtol=0)
        assert numpy.abs(got - unmarked).max() > 1e-3  # the mark counts
