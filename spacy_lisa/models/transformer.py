"""``spacy-lisa.TransformerTok2Vec.v1``: a fast transformer tok2vec for ``lisa_srl``.

Why not spacy-transformers: its strided 128/96 spans run every wordpiece ~1.3 times, its
batches pad to the longest span, and it pools per doc in Thinc. Here:

- windows are the doc's sentences (or the whole doc), no overlap, split greedily by
  tokens past the model's maximum, sorted by wordpiece length and run in sub-batches
  padded under ``max_batch_wordpieces``;
- wordpieces are pooled into tokens inside torch (one ``index_add_``);
- ``frozen`` runs the transformer without gradients, and ``cache_tokens`` then keeps the
  pooled per-layer outputs of seen windows in training, so a frozen transformer runs once
  per sentence over all epochs (prediction never uses the cache);
- ``trainable_layers`` freezes the embeddings and all but the top blocks: with
  ``cache_tokens`` the frozen part's output (the boundary state of each wordpiece) of
  seen windows is kept in training, so that a step costs the top blocks' share of the
  encoder once a window has been seen (see :func:`_run` for what is a hit);
- ``num_layers`` keeps the encoder's lower blocks only (the top ones dropped at load);
- ``learn_rate_scale`` scales the optimizer's learning rate for the transformer weights.

Any Hugging Face encoder with a fast tokenizer: WordPiece (BERT, ELECTRA, DistilBERT),
byte-level BPE (RoBERTa, ModernBERT: loaded with a prefix space before every word, so a
word's pieces are those it has in running text) and SentencePiece ``▁`` (XLM-R,
DeBERTa-v3); windows are cut to the encoder's own position limit with its special tokens
(:mod:`.wordpieces`). The predicate-aware mark reaches the transformer as token type 1
or a learned indicator (``predicate_mark``, :mod:`.transformer_torch`).

Weights come from a local directory, ``"python_package:subdir"`` or a hub name
(:mod:`.pretrained`), loaded at ``initialize``; a saved pipeline holds config, tokenizer
and weights, so it loads without that directory. torch and transformers are imported
inside functions only (spaCy imports this module through an entry point).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, ConfigValidationError, Model, torch2xp, xp2torch
from thinc.types import Floats2d

from ..errors import Errors
from .pretrained import (
    DEFAULT_ENCODER,
    config_error,
    float32_weights,
    load_pretrained,
    load_tokenizer,
    model_source,
)
from .transformer_shim import TransformerShim
from .wordpieces import (
    MarkedWindows,
    RawWindow,
    Window,
    doc_windows,
    marked_windows,
    max_content,
    plan_windows,
    prefix_spaced,
    sub_batches,
)

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


@dataclass(frozen=True)
class TransformerSettings:
    """The settings of ``spacy-lisa.TransformerTok2Vec.v1``, each with what it does
    (docs/encoders.md tells how to choose them); :meth:`check` refuses those that cannot
    work, :meth:`build_model` assembles the layer."""

    # a local directory, "python_package:subdir" or a hub name such as "roberta-base"
    # (resolved at initialize, so a saved pipeline loads where it does not exist)
    name: str
    # no gradients into the transformer (the same as trainable_layers = 0)
    frozen: bool
    # the top blocks that fine-tune (None: all); the embeddings and the blocks below get
    # no gradient and no dropout; a number at or above the depth trains all (with
    # num_layers: counted from the top of the blocks kept, at most num_layers)
    trainable_layers: Optional[int]
    # the encoder cut to its embeddings and lower blocks 0..num_layers-1 (None: all
    # blocks): the output is the hidden state after block num_layers; the top blocks are
    # dropped when the weights are loaded (before the encoder moves to its device), so
    # they cost no time or memory in training or prediction and the saved pipeline holds
    # only the blocks kept
    num_layers: Optional[int]
    # ELMo-style softmax-weighted sum of the hidden states times gamma (all of them incl.
    # the embeddings, of the blocks kept; under partial freezing the boundary state and
    # the top blocks' outputs); else the last hidden state
    layer_mix: bool
    # with frozen, keep up to this many tokens' pooled outputs (float16) of windows seen
    # in training in memory; under partial freezing, up to this many wordpieces' boundary
    # states (float16: cache_tokens x hidden size x 2 bytes at most). The least recently
    # used window leaves past the cap and is recomputed when seen again. Training only:
    # prediction is always a fresh pass
    cache_tokens: int
    # lr multiplier for the transformer weights (1.0 for the mix and the predicate
    # indicator)
    learn_rate_scale: float
    # override the HF config's hidden_dropout_prob (DistilBERT: dropout) and
    # attention_probs_dropout_prob (DistilBERT, ModernBERT: attention_dropout; attention
    # dropout is costly on CPU: 0.0 by default), see DROPOUT_KEYS; ModernBERT's
    # embedding and MLP dropouts keep its config's values
    hidden_dropout: float
    attention_dropout: float
    # padded rows x length per transformer call
    max_batch_wordpieces: int
    # reduced precision around the transformer forward, per device: bfloat16 on the CPU
    # and on GPUs with native bfloat16, float16 on older GPUs at prediction only (see
    # spacy_lisa.device.choose_autocast)
    autocast: bool
    # how a marked predicate (PredicateAwareLISA.v1 with reencode) enters the
    # transformer: "token_type" (token type 1), "indicator" (a learned vector added to
    # its input word embeddings) or "auto" (token_type where the HF config has two token
    # types, else indicator), resolved at initialize and saved with the weights
    predicate_mark: str

    def check(self) -> None:
        """Raise ``ValueError`` for settings that cannot work together or are out of
        range (E163, E193, E184, E162, E179); num_layers above the depth is E192 at
        :func:`init`, where the depth is known."""
        for option, blocks, least in (
            ("trainable_layers", self.trainable_layers, 0),
            ("num_layers", self.num_layers, 1),
        ):
            if blocks is not None and blocks < least:
                need = f">= {least}, or null for all"
                raise ValueError(Errors.E163.format(option=option, value=blocks, need=need))
        if (
            self.num_layers is not None
            and self.trainable_layers is not None
            and self.trainable_layers > self.num_layers
        ):
            raise ValueError(
                Errors.E193.format(trainable=self.trainable_layers, value=self.num_layers)
            )
        if self.frozen and self.trainable_layers:
            raise ValueError(Errors.E184.format(value=self.trainable_layers))
        if self.cache_tokens and not (self.frozen or self.trainable_layers is not None):
            raise ValueError(Errors.E162.format(value=self.cache_tokens))
        if self.predicate_mark not in PREDICATE_MARKS:
            choices = ", ".join(PREDICATE_MARKS)
            raise ValueError(Errors.E179.format(value=self.predicate_mark, choices=choices))
        for option, value, minimum in (
            ("max_batch_wordpieces", self.max_batch_wordpieces, 1),
            ("cache_tokens", self.cache_tokens, 0),
            ("learn_rate_scale", self.learn_rate_scale, 0),
        ):
            if value < minimum:
                need = f">= {minimum}"
                raise ValueError(Errors.E163.format(option=option, value=value, need=need))

    def build_model(self) -> Model[List[Doc], List[Floats2d]]:
        """The Thinc layer: the torch encoder in its shim, without weights until
        :func:`init` loads them."""
        from .transformer_torch import TransformerTokenEncoder

        encoder = TransformerTokenEncoder(
            layer_mix=self.layer_mix,
            frozen=self.frozen,
            trainable_layers=self.trainable_layers,
            num_layers=self.num_layers,
            autocast=self.autocast,
        )
        shim = TransformerShim(
            encoder, learn_rate_scale=self.learn_rate_scale, cache_tokens=self.cache_tokens
        )
        return Model(
            "transformer_tok2vec",
            forward,
            init=init,
            shims=[shim],
            dims={"nO": None},
            attrs={
                "name": self.name,
                "frozen": self.frozen,
                "num_layers": self.num_layers,
                "hidden_dropout": self.hidden_dropout,
                "attention_dropout": self.attention_dropout,
                "max_batch_wordpieces": self.max_batch_wordpieces,
                "predicate_mark": self.predicate_mark,
                # encode_marked() runs it on marked windows (the predicate-aware architecture)
                "marks_predicates": True,
            },
        )


@registry.architectures("spacy-lisa.TransformerTok2Vec.v1")
def build_transformer_tok2vec(
    name: str = DEFAULT_ENCODER,
    pooling: str = "mean",
    frozen: bool = False,
    trainable_layers: Optional[int] = None,
    num_layers: Optional[int] = None,
    layer_mix: bool = False,
    cache_tokens: int = 0,
    learn_rate_scale: float = 1.0,
    layer_decay: float = 1.0,
    hidden_dropout: float = 0.1,
    attention_dropout: float = 0.0,
    max_batch_wordpieces: int = 4096,
    autocast: bool = False,
    predicate_mark: str = "auto",
) -> Model[List[Doc], List[Floats2d]]:
    """Token vectors from a Hugging Face encoder (``nO`` = its hidden size, set at
    ``initialize``): each word's vector is the mean of its wordpieces' vectors. What
    each setting does: :class:`TransformerSettings`. ``pooling`` ("mean" only, E054) and
    ``layer_decay`` (1.0 only, E055) are removed, kept as keywords so that configs saved
    with them load."""
    from ..device import check_torch_follows_thinc

    if pooling != "mean":
        raise ConfigValidationError(title=Errors.E054.format(value=pooling), desc="")
    if layer_decay != 1.0:
        raise ConfigValidationError(title=Errors.E055.format(value=layer_decay), desc="")
    check_torch_follows_thinc("spacy-lisa.TransformerTok2Vec.v1")
    settings = TransformerSettings(
        name=name,
        frozen=frozen,
        trainable_layers=trainable_layers,
        num_layers=num_layers,
        layer_mix=layer_mix,
        cache_tokens=cache_tokens,
        learn_rate_scale=learn_rate_scale,
        hidden_dropout=hidden_dropout,
        attention_dropout=attention_dropout,
        max_batch_wordpieces=max_batch_wordpieces,
        autocast=autocast,
        predicate_mark=predicate_mark,
    )
    settings.check()
    return settings.build_model()


def init(model: Model, X: Optional[List[Doc]] = None, Y: Any = None) -> None:
    """Load the weights and tokenizer (local directory, package or hub name: see
    :mod:`.pretrained`), resolve the predicate mark; set ``nO``. The encoder is cut to
    ``num_layers`` blocks when the shim builds it, before it moves to the device."""
    from transformers import AutoConfig, AutoModel

    source = model_source(model.attrs["name"])
    config = load_pretrained(AutoConfig, source)
    num_layers, depth = model.attrs["num_layers"], int(config.num_hidden_layers)
    if num_layers is not None and num_layers > depth:  # before the weights are read
        raise config_error(Errors.E192.format(value=num_layers, name=source.name, depth=depth))
    for option, keys in DROPOUT_KEYS.items():
        for key in keys:
            if hasattr(config, key):
                setattr(config, key, model.attrs[option])
    transformer = load_pretrained(AutoModel, source, config=config, **float32_weights())
    try:
        tokenizer = load_tokenizer(source)
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
    shim.build(transformer, prefix_spaced(tokenizer), predicate_mark=mark)
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


def _plan(model: Model, raw: List[RawWindow]) -> List[Window]:
    """The windows ``raw`` tokenised with the model's tokenizer (or as they were when
    seen before), cut to its limit."""
    shim = _shim(model)
    limit = max_content(shim.encoder.transformer, shim.tokenizer, shim.special_ids)
    return plan_windows(shim.tokenizer, raw, limit, shim.pieces)


def _encode(model: Model, windows: List[Window]) -> List[Any]:
    """The windows' padded sub-batches for the model's transformer call."""
    shim = _shim(model)
    pad_id = shim.tokenizer.pad_token_id
    return sub_batches(
        windows,
        special=shim.special_ids,
        pad_id=pad_id if pad_id is not None else 0,
        budget=model.attrs["max_batch_wordpieces"],
        device=shim.device,
    )


# --- forward -------------------------------------------------------------------------


def forward(
    model: Model[List[Doc], List[Floats2d]], docs: List[Doc], is_train: bool
) -> Tuple[List[Floats2d], Callable[[List[Floats2d]], Any]]:
    """Token vectors per doc; the frozen transformer's cache is used in training."""
    raw, lengths = doc_windows(docs)
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
    raw, lengths = marked_windows(X)
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

    # training only (epochs see each sentence again; prediction gets a fresh, exact
    # float32 pass and holds no memory)
    use_cache = is_train and cacheable and bool(shim.cache.max_tokens)
    if use_cache and shim.encoder.frozen:
        inputs = _with_cached_layers(model, windows, n_tokens, width)
    elif use_cache and shim.encoder.n_top:
        inputs = _with_cached_boundaries(model, windows, n_tokens)
    else:
        inputs = EncoderInputs(sub_batches=_encode(model, windows), n_tokens=n_tokens)
    # train through torch only when something there takes gradients (a frozen
    # transformer without the mix has none: run it as a prediction)
    trainable = is_train and any(p.requires_grad for p in shim.encoder.parameters())
    result, backprop_torch = shim(ArgsKwargs(args=(inputs,), kwargs={}), trainable)
    output = result.vectors
    if result.layers is not None:
        _store_layers(shim, inputs, result.layers)
    if inputs.return_boundary:
        _store_boundaries(shim, inputs, result.boundaries)
    flat = torch2xp(output.detach(), ops=ops)
    Xs = _split_rows(flat, lengths)

    def backprop(dXs: List[Floats2d]) -> None:
        if not (trainable and output.requires_grad):
            return
        d_flat = ops.xp.concatenate([ops.asarray2f(d) for d in dXs], axis=0)
        grad = xp2torch(d_flat, device=output.device)
        backprop_torch(ArgsKwargs(args=(output,), kwargs={"grad_tensors": (grad,)}))

    return Xs, backprop


# --- the caches of the frozen part (training only) ------------------------------------
#
# A window is looked up by its words: the transformer sees nothing outside its window, so
# its words (through the tokenizer: its wordpieces) decide what the frozen part computes.
# A window of sentences run together (the reader's merge_sentences) is another input to
# the transformer, whose attention crosses the sentences, so its states are not its
# sentences' states side by side: it is a miss, computed and kept as a window of its own.
# Reusing the sentences' states instead would train the top on states prediction never
# produces. Windows are planned from the words alone, so a sentence is the same window
# whatever batch it comes in; the sub-batches are built after the lookup.


def _with_cached_layers(model: Model, windows: List[Window], n_tokens: int, width: int) -> Any:
    """A frozen transformer's inputs: the pooled layers of the windows seen before, and
    sub-batches of the others (whose layers are returned to be kept)."""
    import torch

    from .transformer_torch import EncoderInputs

    shim = _shim(model)
    hits = [(w, shim.cache.get(tuple(w.words))) for w in windows]
    misses = [w for w, v in hits if v is None]
    cached = None
    if len(misses) < len(windows):
        buf = numpy.zeros((shim.encoder.n_layers, n_tokens, width), dtype="float32")
        for win, value in hits:
            if value is not None:
                buf[:, win.start : win.start + len(win.words)] = value
        cached = torch.from_numpy(buf)
    return EncoderInputs(
        sub_batches=_encode(model, misses),
        n_tokens=n_tokens,
        cached=cached,
        return_layers=bool(misses),
    )


def _store_layers(shim: TransformerShim, inputs: Any, layers: Any) -> None:
    """Keep the pooled layers [K, n_tokens, H] of the windows just computed (float16)."""
    import torch

    layers_np = layers.to(torch.float16).cpu().numpy()
    for sub in inputs.sub_batches:
        for win in sub.windows:
            end = win.start + len(win.words)
            shim.cache.put(tuple(win.words), layers_np[:, win.start : end].copy())


def _with_cached_boundaries(model: Model, windows: List[Window], n_tokens: int) -> Any:
    """A partially frozen transformer's inputs: sub-batches of the windows seen before
    with their boundary states (only the top blocks run on them), and sub-batches of
    the others (which run whole and return their boundary states to be kept)."""
    import torch

    from .transformer_torch import EncoderInputs

    shim = _shim(model)
    known = {}
    misses = []
    for win in windows:
        value = shim.cache.get(tuple(win.words))
        if value is None:
            misses.append(win)
        else:
            known[id(win)] = value
    hits = [w for w in windows if id(w) in known]
    # the boundary tensor of a sub-batch is [B, L, H] float32: the same budget of padded
    # pieces as the transformer's own calls
    hit_subs = _encode(model, hits)
    for sub in hit_subs:
        B, L = sub.input_ids.shape
        buf = numpy.zeros((B, L, shim.encoder.width), dtype="float32")
        for r, win in enumerate(sub.windows):
            value = known[id(win)]
            buf[r, : len(value)] = value
        sub.boundary = torch.from_numpy(buf).to(sub.input_ids.device)
    return EncoderInputs(
        sub_batches=_encode(model, misses) + hit_subs,
        n_tokens=n_tokens,
        return_boundary=bool(misses),
    )


def _store_boundaries(shim: TransformerShim, inputs: Any, boundaries: List[Any]) -> None:
    """Keep the boundary states of each window that ran whole (float16, its own
    positions, special tokens included: the top blocks attend to them too)."""
    import torch

    for sub, boundary in zip(inputs.sub_batches, boundaries, strict=True):
        if boundary is None:
            continue
        states = boundary.to(torch.float16).cpu().numpy()
        lengths = sub.attention_mask.sum(dim=1).tolist()
        for r, win in enumerate(sub.windows):
            n = int(lengths[r])
            shim.cache.put(tuple(win.words), states[r, :n].copy(), size=n)


def _split_rows(flat: Any, lengths: List[int]) -> List[Floats2d]:
    ends = numpy.cumsum(lengths).tolist()
    return [flat[end - n : end] for n, end in zip(lengths, ends, strict=True)]
