"""Tiny random Hugging Face encoders of each family users bring, saved as
``save_pretrained`` saves a real one (model, config, tokenizer files): nothing is
downloaded.

Each is 2 layers (``build_encoder(..., layers=N)`` for more), hidden 32, 2 heads, with a
vocabulary trained here on a few sentences with the ``tokenizers`` library in its
family's scheme (WordPiece; byte-level BPE saved without a prefix space, as roberta-base
is; SentencePiece-style Unigram with the ``▁`` Metaspace), wrapped in its family's fast
tokenizer class. Their windows hold 32 positions (special tokens included; RoBERTa-style
learned positions: 34 rows with ``padding_idx`` 1), so that a sentence of 40 words is
split.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List

from srl_testing import TEXT_SENTENCES

FAMILIES = [
    "bert", "electra", "distilbert", "roberta", "xlm-roberta", "mpnet", "deberta-v3", "modernbert",
]  # fmt: skip
WINDOW = 32  # positions per window, special tokens included

CORPUS = [text for text, *_ in TEXT_SENTENCES] + [
    "The dog that barked ran away .",
    "An unbelievably good day outmanoeuvred us .",
    "Our neighbour found the old bike in Paris last year .",
]
# 40 words: more wordpieces than a window holds in every family
LONG_WORDS = ("John sold the car to Mary and she said she would come " * 4).split()[:40]


def _trained(model: Any, trainer: Any, pre_tokenizer: Any, decoder: Any, normalizer=None) -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer(model)
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoder
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def _wordpiece(lowercase: bool, specials: List[str]) -> Any:
    """A WordPiece vocabulary (BERT's scheme) with ``specials`` first; its post-processor
    is the caller's."""
    from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

    return _trained(
        models.WordPiece(unk_token="[UNK]"),
        trainers.WordPieceTrainer(vocab_size=150, special_tokens=specials),
        pre_tokenizers.BertPreTokenizer(),
        decoders.WordPiece(),
        normalizers.BertNormalizer(lowercase=lowercase),
    )


def _byte_level_bpe(specials: List[str]) -> Any:
    """Byte-level BPE saved without a prefix space (as roberta-base and ModernBERT are)."""
    from tokenizers import decoders, models, pre_tokenizers, trainers

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    return _trained(
        models.BPE(),
        trainers.BpeTrainer(vocab_size=400, special_tokens=specials, initial_alphabet=alphabet),
        pre_tokenizers.ByteLevel(add_prefix_space=False),
        decoders.ByteLevel(),
    )


def _unigram(specials: List[str], unk: str) -> Any:
    """SentencePiece-style: Unigram pieces, words marked by a leading ``▁``."""
    from tokenizers import decoders, models, pre_tokenizers, trainers

    return _trained(
        models.Unigram(),
        trainers.UnigramTrainer(vocab_size=150, special_tokens=specials, unk_token=unk),
        pre_tokenizers.Metaspace(),
        decoders.Metaspace(),
    )


def build_encoder(family: str, out: Path, layers: int = 2, positions: int = WINDOW) -> Path:
    """Save a tiny random encoder of ``family`` with ``layers`` blocks and windows of
    ``positions`` (model, config, tokenizer files) to ``out``, as ``save_pretrained``
    saves a real one."""
    import transformers as hf
    from tokenizers import processors

    sizes = dict(
        hidden_size=32, num_hidden_layers=layers, num_attention_heads=2, intermediate_size=64
    )
    bert_specials = dict(
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
    )
    roberta_specials = dict(
        bos_token="<s>", eos_token="</s>", sep_token="</s>", cls_token="<s>",
        unk_token="<unk>", pad_token="<pad>", mask_token="<mask>",
    )  # fmt: skip
    if family in ("bert", "electra", "distilbert"):
        lowercase = family != "bert"
        tok = _wordpiece(lowercase, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
        )
        vocab = tok.get_vocab_size()
        classes = {
            "bert": hf.BertTokenizerFast,
            "electra": hf.ElectraTokenizerFast,
            "distilbert": hf.DistilBertTokenizerFast,
        }
        tokenizer = classes[family](tokenizer_object=tok, do_lower_case=lowercase, **bert_specials)
        if family == "bert":
            config = hf.BertConfig(vocab_size=vocab, max_position_embeddings=positions, **sizes)
            model = hf.BertModel(config)
        elif family == "electra":
            # embeddings narrower than the hidden size (projected): the indicator takes
            # the embeddings' width
            config = hf.ElectraConfig(
                vocab_size=vocab, embedding_size=16, max_position_embeddings=positions, **sizes
            )
            model = hf.ElectraModel(config)
        else:
            config = hf.DistilBertConfig(
                vocab_size=vocab, dim=32, n_layers=layers, n_heads=2, hidden_dim=64,
                max_position_embeddings=positions,
            )  # fmt: skip
            model = hf.DistilBertModel(config)
    elif family == "mpnet":
        # MPNet: WordPiece (lower-cased) wrapped in <s> ... </s>, RoBERTa-style learned
        # positions after padding_idx 1, relative position buckets shared by all blocks
        # (32: the count transformers computes them with, whatever the config says)
        tok = _wordpiece(True, ["<s>", "<pad>", "</s>", "[UNK]", "<mask>"])
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>",
            pair="<s> $A </s> </s> $B </s>",
            special_tokens=[("<s>", 0), ("</s>", 2)],
        )
        tokenizer = hf.MPNetTokenizerFast(tokenizer_object=tok, do_lower_case=True)
        config = hf.MPNetConfig(
            vocab_size=tok.get_vocab_size(), max_position_embeddings=positions + 2,
            pad_token_id=1, bos_token_id=0, eos_token_id=2,
            **sizes,
        )  # fmt: skip
        model = hf.MPNetModel(config)
    elif family in ("roberta", "xlm-roberta"):
        specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
        if family == "roberta":
            tok = _byte_level_bpe(specials)
            # sep and cls by position: tokenizers 0.22 names the second ``cls``, 0.23
            # ``cls_token``
            tok.post_processor = processors.RobertaProcessing(
                ("</s>", 2), ("<s>", 0), add_prefix_space=False, trim_offsets=True
            )
            tokenizer = hf.RobertaTokenizerFast(
                tokenizer_object=tok, add_prefix_space=False, **roberta_specials
            )
            config_class, model_class = hf.RobertaConfig, hf.RobertaModel
        else:
            tok = _unigram(specials, "<unk>")
            tok.post_processor = processors.TemplateProcessing(
                single="<s> $A </s>",
                pair="<s> $A </s> </s> $B </s>",
                special_tokens=[("<s>", 0), ("</s>", 2)],
            )
            tokenizer = hf.XLMRobertaTokenizerFast(tokenizer_object=tok, **roberta_specials)
            config_class, model_class = hf.XLMRobertaConfig, hf.XLMRobertaModel
        # learned positions after padding_idx (1): positions + 2 rows, as roberta-base's 514
        config = config_class(
            vocab_size=tok.get_vocab_size(), max_position_embeddings=positions + 2,
            pad_token_id=1, bos_token_id=0, eos_token_id=2, type_vocab_size=1, **sizes,
        )  # fmt: skip
        model = model_class(config)
    elif family == "deberta-v3":
        specials = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"]
        tok = _unigram(specials, "[UNK]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
        )
        tokenizer = hf.DebertaV2TokenizerFast(
            tokenizer_object=tok, bos_token="[CLS]", eos_token="[SEP]", **bert_specials
        )
        # DeBERTa-v3's settings: relative attention only, no token types
        config = hf.DebertaV2Config(
            vocab_size=tok.get_vocab_size(), max_position_embeddings=positions, type_vocab_size=0,
            relative_attention=True, position_buckets=16, max_relative_positions=-1,
            pos_att_type=["p2c", "c2p"], position_biased_input=False,
            norm_rel_ebd="layer_norm", share_att_key=True, **sizes,
        )  # fmt: skip
        model = hf.DebertaV2Model(config)
    elif family == "modernbert":
        # ModernBERT's tokenizer: byte-level BPE, [CLS] ... [SEP], in the plain
        # PreTrainedTokenizerFast (tokenizer_class of answerdotai/ModernBERT-base)
        specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
        tok = _byte_level_bpe(specials)
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
        )
        tokenizer = hf.PreTrainedTokenizerFast(
            tokenizer_object=tok, model_input_names=["input_ids", "attention_mask"], **bert_specials
        )
        config = hf.ModernBertConfig(
            vocab_size=tok.get_vocab_size(), max_position_embeddings=positions, pad_token_id=3,
            cls_token_id=1, sep_token_id=2, bos_token_id=1, eos_token_id=2,
            global_attn_every_n_layers=2, local_attention=16, **sizes,
            # its default initialisation (0.02) leaves a tiny random model's blocks close to
            # the identity (states change by ~0.005 per block): too close to tell them apart
            initializer_range=0.3,
        )  # fmt: skip
        model = hf.ModernBertModel(config)
    else:
        raise AssertionError(family)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def encoder_builder(root: Path, **options: Any) -> Callable[[str], Path]:
    """A function giving the directory of a family's tiny encoder (``build_encoder``'s
    ``options``), built (seed 0) into ``root`` the first time the family is asked for: a
    module-scoped fixture's value."""
    built: Dict[str, Path] = {}

    def get(family: str) -> Path:
        if family not in built:
            import torch

            torch.manual_seed(0)
            built[family] = build_encoder(family, root / family, **options)
        return built[family]

    return get
