"""Thinc builders of the LISA model: ``spacy-lisa.LISA.v1`` and
``spacy-lisa.BilinearRoleScorer.v1``.

``Model[LisaBatch, LisaOutput]`` = a tok2vec sublayer (``Model[List[Doc], List[Floats2d]]``:
``spacy.Tok2Vec.v2``, a ``spacy.Tok2VecListener.v1`` or spacy-transformers'
``TransformerListener.v1``) followed by the torch :class:`~.lisa_torch.LisaTorchModel` in a
``PyTorchWrapper_v2``, whose converters pad the windows, build the masks, move arrays to
the torch device and back (numpy or cupy, whichever ``model.ops`` uses).

The torch layer is built lazily, once its dims are known: ``nI`` (the tok2vec width, from
its ``nO`` or from the sample given to ``initialize``), ``n_tags``, ``n_deps`` and
``n_roles`` (set by the component with ``model.set_dim``). The component also sets
``model.attrs["predicate_tags"]`` (indices of the ``TAG:PREDICATE`` labels). Loading saved
weights needs the same structure: restore the dims, call :func:`ensure_built`, then
``from_bytes``/``from_disk``.

spaCy imports this module through an entry point, so torch and the torch modules are
imported inside functions only.
"""

from __future__ import annotations

import bisect
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Tuple, cast

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import (
    ArgsKwargs,
    Model,
    NumpyOps,
    PyTorchShim,
    PyTorchWrapper_v2,
    torch2xp,
    xp2torch,
)
from thinc.types import Floats2d, Floats3d, Ints2d

from ..errors import Errors
from . import lal as _lal  # noqa: F401  (registers the LabelAttentionLayer builder)
from . import lan as _lan  # noqa: F401  (registers the LANRoleScorer builder)
from .averaged_shim import use_averaged_shim
from .types import LISA_DEFAULTS, PARSE_MODES, LisaBatch, LisaOutput, LisaSizes

if TYPE_CHECKING:
    import torch
    from torch import Tensor, nn

    from .lisa_torch import LisaTorchOutput

DIMS = ("nI", "n_tags", "n_deps", "n_roles")
# sizes of the per-predicate classifiers (roleset, lemma edit tree, UPOS); optional: 0 or
# unset leaves a classifier out (pipelines saved before they existed have none)
FRAME_DIMS = ("n_senses", "n_lemmas", "n_pred_pos")
FRAME_SCORES = {
    "n_senses": "sense_scores",
    "n_lemmas": "lemma_scores",
    "n_pred_pos": "pred_pos_scores",
}


@registry.architectures("spacy-lisa.LISA.v1")
def build_lisa_model(
    tok2vec: Model[List[Doc], List[Floats2d]],
    width: int = LISA_DEFAULTS["width"],
    depth: int = LISA_DEFAULTS["depth"],
    n_heads: int = LISA_DEFAULTS["n_heads"],
    ffn_width: int = LISA_DEFAULTS["ffn_width"],
    dropout: float = LISA_DEFAULTS["dropout"],
    attention_dropout: float = LISA_DEFAULTS["attention_dropout"],
    tag_layer: int = LISA_DEFAULTS["tag_layer"],
    parse_layer: int = LISA_DEFAULTS["parse_layer"],
    parse_dep_width: int = LISA_DEFAULTS["parse_dep_width"],
    parse_head_width: int = LISA_DEFAULTS["parse_head_width"],
    role_width: int = LISA_DEFAULTS["role_width"],
    positions: str = LISA_DEFAULTS["positions"],
    detach_frame_heads: bool = LISA_DEFAULTS["detach_frame_heads"],
    sense_head: str = LISA_DEFAULTS["sense_head"],
    role_scorer: Optional[Callable[[int, int], Any]] = None,
    top_layer: Optional[Callable[[int], Any]] = None,
    mixed_precision: bool = False,
) -> Model[LisaBatch, LisaOutput]:
    """LISA (Strubell et al. 2018) over token vectors from ``tok2vec``.

    width / depth / n_heads / ffn_width: the self-attention encoder (J = depth layers).
    dropout: on the input, feed-forward, residual and the MLPs; attention_dropout: on
    attention probabilities. tag_layer r and parse_layer p (1-based, r < p <= depth):
    the layers feeding the joint POS/predicate classifier and holding the syntactic
    head; parse_layer = 0 removes the syntactic head (the paper's SA baseline).
    parse_dep_width / parse_head_width: sizes of Q_parse (dependent) and K_parse
    (parent). role_width: predicate/role (and POS/predicate) representation size of the
    default bilinear role scorer. positions: "absolute" (sinusoids added to the input)
    or "relative" (FLAT relative attention in every layer). detach_frame_heads: the
    per-predicate roleset, lemma and UPOS classifiers learn on the encoder's states
    without training the encoder (their losses then cannot cost SRL F1). sense_head:
    "shared" (the roleset classifier on the lemma/UPOS classifiers' MLP) or "separate"
    (its own MLP on detached states, drawing nothing from the model's random stream: the
    model's roles are then exactly those of the same model without a sense head) or
    "separate_context" (the same, also reading an attention summary of the predicate's
    window); "shared" stays the default for pipelines saved before the others existed.
    role_scorer: a builder (width, n_roles) -> module, e.g.
    ``spacy-lisa.LANRoleScorer.v1``; default bilinear.
    top_layer: a builder width -> module on top of the encoder, e.g.
    ``spacy-lisa.LabelAttentionLayer.v1``. mixed_precision: autocast on GPU.
    """
    from .lisa_torch import check_choices, check_layers

    for name, value in (
        ("width", width),
        ("depth", depth),
        ("n_heads", n_heads),
        ("ffn_width", ffn_width),
        ("parse_dep_width", parse_dep_width),
        ("parse_head_width", parse_head_width),
        ("role_width", role_width),
    ):
        if value < 1:
            raise ValueError(Errors.E151.format(name=name, value=value, constraint="at least 1"))
    for name, rate in (("dropout", dropout), ("attention_dropout", attention_dropout)):
        if not 0.0 <= rate < 1.0:
            raise ValueError(Errors.E151.format(name=name, value=rate, constraint="in [0, 1)"))
    if width % n_heads != 0:
        raise ValueError(Errors.E200.format(layer="LISA.v1", width=width, n_heads=n_heads))
    check_layers(depth, tag_layer, parse_layer)
    sizes = LisaSizes(
        width=width,
        depth=depth,
        n_heads=n_heads,
        ffn_width=ffn_width,
        dropout=dropout,
        attention_dropout=attention_dropout,
        tag_layer=tag_layer,
        parse_layer=parse_layer,
        parse_dep_width=parse_dep_width,
        parse_head_width=parse_head_width,
        role_width=role_width,
        positions=positions,
        detach_frame_heads=detach_frame_heads,
        sense_head=sense_head,
    )
    check_choices(sizes)

    return Model(
        "lisa",
        forward,
        init=init,
        layers=[tok2vec],
        refs={"tok2vec": tok2vec},
        dims={name: None for name in DIMS + FRAME_DIMS},
        attrs={
            "predicate_tags": [],
            "lisa_config": dict(asdict(sizes), mixed_precision=mixed_precision),
            # builders of the optional parts: thinc skips them in to_bytes (the config
            # rebuilds them); keep them picklable (module-level functions or partials)
            "role_scorer": role_scorer,
            "top_layer": top_layer,
        },
    )


@registry.architectures("spacy-lisa.BilinearRoleScorer.v1")
def bilinear_role_scorer(
    hidden_width: int = 200, dropout: float = 0.1, max_distance: int = 0
) -> Callable[[int, int], nn.Module]:
    """LISA's bilinear role scorer (eq. 6): (width, n_labels) -> module returning role
    logits [F, T, n_labels]. hidden_width: size of the predicate and role MLPs.
    max_distance: > 0 adds a learned per-label score of the token's distance to the
    predicate, clipped to that many tokens (0: the paper's scorer)."""
    if max_distance < 0:
        raise ValueError(
            Errors.E151.format(name="max_distance", value=max_distance, constraint="at least 0")
        )
    # a partial of a module-level function, not a closure, so that pipelines pickle
    return partial(
        _make_bilinear_role_scorer,
        hidden_width=hidden_width,
        dropout=dropout,
        max_distance=max_distance,
    )


def _make_bilinear_role_scorer(
    width: int, n_labels: int, *, hidden_width: int, dropout: float, max_distance: int = 0
) -> nn.Module:
    from .role_scorer import BilinearRoleScorer

    return BilinearRoleScorer(width, n_labels, hidden_width, dropout, max_distance)


def ensure_built(model: Model[LisaBatch, LisaOutput]) -> None:
    """Build the torch layer if it is not built yet (idempotent).

    Needs the dims n_tags, n_deps, n_roles and nI (or a tok2vec layer that knows its
    nO); raises ValueError (E152) naming the missing ones. Call it before loading
    weights into a freshly constructed model."""
    if _lisa_layer(model) is not None:
        return
    _infer_nI(model, None)
    missing = [name for name in DIMS if not model.has_dim(name)]
    if missing:
        raise ValueError(Errors.E152.format(dims=", ".join(missing)))
    wrapper = PyTorchWrapper_v2(
        _build_torch(model),
        convert_inputs=_convert_inputs,
        convert_outputs=_convert_outputs,
        mixed_precision=model.attrs["lisa_config"]["mixed_precision"],
    )
    use_averaged_shim(wrapper)  # so that use_averages = true reaches the torch weights
    model.layers.append(wrapper)
    model.set_ref("lisa", wrapper)


def set_role_prior(model: Model[LisaBatch, LisaOutput], log_prior: numpy.ndarray) -> None:
    """Pass ``log_prior`` ([n_roles] log label frequencies) to the torch role scorer if it
    takes one (``set_label_prior``: the LAN decoder); other scorers ignore it."""
    lisa = _lisa_layer(model)
    if lisa is None:
        raise ValueError(Errors.E153)
    scorer = cast(PyTorchShim, lisa.shims[0])._model.role_scorer
    if hasattr(scorer, "set_label_prior"):
        scorer.set_label_prior(log_prior)


def _build_torch(model: Model) -> nn.Module:
    from .lisa_torch import LisaTorchModel

    config = dict(model.attrs["lisa_config"])
    config.pop("mixed_precision")
    n_in, n_tags, n_deps, n_roles = (model.get_dim(name) for name in DIMS)
    return LisaTorchModel(
        n_in,
        n_tags,
        n_deps,
        n_roles,
        LisaSizes(**config),
        role_scorer=model.attrs["role_scorer"],
        top_layer=model.attrs["top_layer"],
        n_senses=model.maybe_get_dim("n_senses") or 0,
        n_lemmas=model.maybe_get_dim("n_lemmas") or 0,
        n_pred_pos=model.maybe_get_dim("n_pred_pos") or 0,
    )


def _tok2vec_layer(model: Model) -> Model:
    # by position, not by ref: Model.copy() does not carry refs over
    return model.layers[0]


def _lisa_layer(model: Model) -> Optional[Model]:
    """The PyTorchWrapper once built (layers[1]), else None."""
    return model.layers[1] if len(model.layers) > 1 else None


def _infer_nI(model: Model, X: Optional[LisaBatch]) -> None:
    if model.has_dim("nI"):
        return
    tok2vec = _tok2vec_layer(model)
    if tok2vec.has_dim("nO"):
        model.set_dim("nI", tok2vec.get_dim("nO"))
    elif X is not None and any(len(doc) for doc in X.docs):
        # e.g. a transformer listener whose width is known only once the pipeline runs
        Xs = tok2vec.predict(X.docs)
        model.set_dim("nI", int(next(x for x in Xs if x.shape[0]).shape[1]))


def init(
    model: Model[LisaBatch, LisaOutput],
    X: Optional[LisaBatch] = None,
    Y: Optional[LisaOutput] = None,
) -> None:
    """Initialise the tok2vec layer, infer nI and build (or re-initialise) the torch layer."""
    tok2vec = _tok2vec_layer(model)
    X = None if X is None else as_batch(X)
    tok2vec.initialize(X=X.docs if X is not None else None)
    _infer_nI(model, X)
    wrapper = _lisa_layer(model)
    if wrapper is not None:
        # initialize() again: fresh weights (same dims, or the set_dim would have failed)
        cast(PyTorchShim, wrapper.shims[0])._model = _build_torch(model).to(_device(wrapper))
    else:
        ensure_built(model)
    _predicate_tag_mask(model)  # validate the component's predicate_tags now


def as_batch(X: Any) -> LisaBatch:
    """A LisaBatch as is; a plain list of Docs (what ``spacy debug model`` and other
    generic tools pass) as one window per doc, predicted predicates, the model's own
    argmax parse."""
    if isinstance(X, LisaBatch):
        return X
    docs = list(X)
    return LisaBatch(
        docs=docs, windows=[[(0, len(d))] if len(d) else [] for d in docs], parse_mode="argmax"
    )


def forward(
    model: Model[LisaBatch, LisaOutput], batch: LisaBatch, is_train: bool
) -> Tuple[LisaOutput, Callable[[LisaOutput], LisaBatch]]:
    lisa = _lisa_layer(model)
    if lisa is None:
        raise ValueError(Errors.E153)
    batch = as_batch(batch)
    tok2vec = _tok2vec_layer(model)
    with _torch_gemm(tok2vec, enabled=not is_train):
        Xs, backprop_tok2vec = tok2vec(batch.docs, is_train)
    prepared = _prepare(model, batch, Xs)
    if not prepared.windows:
        # only empty docs: nothing to encode and no gradient for the tok2vec (whose
        # backprop fails on zero rows; spaCy's components skip such batches anyway)
        return _empty_output(model), lambda d_output: batch
    output, backprop_lisa = lisa(prepared, is_train)

    def backprop(d_output: LisaOutput) -> LisaBatch:
        d_Xs = backprop_lisa(d_output)
        backprop_tok2vec(d_Xs)
        return batch

    return output, backprop


class TorchGemmOps(NumpyOps):
    """``NumpyOps`` whose ``gemm`` runs on torch's CPU BLAS (with torch's thread
    setting, which the component keeps at 1 in ``n_process`` workers). On the project's
    2-core AVX-512 box, blis (NumpyOps' default) takes ~3x as long for the tok2vec's
    maxout matmuls ([~500, 640] x [640, 384]): they were most of the tok2vec's time. The
    products differ from blis's by float rounding only."""

    def gemm(
        self,
        x: Any,
        y: Any,
        *,
        out: Optional[Any] = None,
        trans1: bool = False,
        trans2: bool = False,
    ) -> Any:
        import torch

        a = torch.from_numpy(self.as_contig(x))
        b = torch.from_numpy(self.as_contig(y))
        a = a.T if trans1 else a
        b = b.T if trans2 else b
        if out is None:
            return torch.matmul(a, b).numpy()
        torch.matmul(a, b, out=torch.from_numpy(out))
        return out


_TORCH_GEMM_OPS = TorchGemmOps()


@contextmanager
def _torch_gemm(layer: Model, enabled: bool = True) -> Iterator[None]:
    """Within the block, the nodes of ``layer`` that run on blis ``NumpyOps`` run on
    :class:`TorchGemmOps` instead. Prediction only: training keeps the ops it was
    configured with (and so its exact numerics)."""
    swapped = []
    if enabled:
        for node in layer.walk():
            ops = node.ops
            # exactly NumpyOps (not a subclass with other kernels), with blis
            if isinstance(ops, NumpyOps) and type(ops) is NumpyOps and ops.use_blis:
                swapped.append((node, ops))
                node.ops = _TORCH_GEMM_OPS
    try:
        yield
    finally:
        for node, ops in swapped:
            node.ops = ops


@dataclass
class _Prepared:
    """A LisaBatch turned into padded arrays (numpy metadata, ``ops`` token vectors)."""

    windows: List[Tuple[int, int, int]]  # (doc, start, end) per window, S entries
    doc_lengths: List[int]
    mask: Any  # numpy bool [S, T]
    X: Any  # ops array [S, T, nI], padded token vectors
    heads: Optional[numpy.ndarray]  # [S, T] parent offsets (-1 none) or None
    given_rows: numpy.ndarray  # [S] bool: windows following the given parse
    own_parse: str  # "soft" | "argmax" for the other windows
    dep_labels: bool  # score dependency labels (else dep_scores are zeros)
    # parent scores needed: not when every window follows the given parse and no labels
    # are scored (the component's prediction on docs with their own parse), where
    # nothing reads the head's own parse; training always scores them
    head_scores: bool
    frame_window: Optional[numpy.ndarray]  # [F] or None (predict predicates)
    frame_pos: Optional[numpy.ndarray]  # [F]
    predicate_tags: numpy.ndarray  # [n_tags] bool


def _prepare(model: Model, batch: LisaBatch, Xs: List[Floats2d]) -> _Prepared:
    """Validate a batch and lay it out as windows (numpy on the CPU, X with model.ops)."""
    ops = model.ops
    docs = batch.docs
    if len(Xs) != len(docs):
        raise ValueError(Errors.E157.format(what=f"{len(Xs)} arrays for {len(docs)} docs"))
    if len(batch.windows) != len(docs):
        message = f"{len(batch.windows)} window lists for {len(docs)} docs"
        raise ValueError(Errors.E156.format(doc=0, n_tokens="?", message=message))
    n_in = model.get_dim("nI")
    windows: List[Tuple[int, int, int]] = []
    for i, (doc, doc_windows, X) in enumerate(zip(docs, batch.windows, Xs, strict=True)):
        if X.shape[0] != len(doc) or (len(doc) and X.shape[1] != n_in):
            raise ValueError(
                Errors.E157.format(
                    what=f"an array of shape {X.shape} for doc {i} of {len(doc)} tokens, "
                    f"model width nI={n_in}"
                )
            )
        position = 0
        for start, end in doc_windows:
            if start != position or not start < end <= len(doc):
                message = f"window ({start}, {end}) after {position}"
                raise ValueError(Errors.E156.format(doc=i, n_tokens=len(doc), message=message))
            windows.append((i, int(start), int(end)))
            position = end
        if position != len(doc):
            raise ValueError(
                Errors.E156.format(doc=i, n_tokens=len(doc), message=f"windows end at {position}")
            )
    n_windows = len(windows)
    length = max((end - start for _, start, end in windows), default=0)
    mask = numpy.zeros((n_windows, length), dtype=bool)
    for s, (_, start, end) in enumerate(windows):
        mask[s, : end - start] = True
    X_pad = ops.alloc3f(n_windows, length, n_in)
    if n_windows:
        # windows cover the docs in order, so the real rows of X_pad in row-major order
        # are exactly the docs' rows concatenated
        X_pad[ops.xp.asarray(mask)] = ops.xp.concatenate([X for X in Xs if X.shape[0]], axis=0)
    mode = batch.parse_mode
    if mode not in PARSE_MODES:
        raise ValueError(Errors.E026.format(value=mode, choices=", ".join(PARSE_MODES)))
    if not 0.0 <= batch.gold_parse_prob <= 1.0:
        raise ValueError(Errors.E155.format(value=batch.gold_parse_prob))
    has_parser = model.attrs["lisa_config"]["parse_layer"] > 0
    heads = None
    given_rows = numpy.zeros((n_windows,), dtype=bool)
    if mode in ("given", "scheduled") and has_parser:
        if batch.heads is None:
            raise ValueError(Errors.E154.format(mode=mode))
        heads = _window_heads(batch, windows, length)
        if mode == "given":
            given_rows[:] = True
        else:  # scheduled sampling: per window (numpy's RNG, seeded by fix_random_seed)
            given_rows = numpy.random.random_sample(n_windows) < batch.gold_parse_prob
    # scheduled sampling falls back to the model's argmax parse (what test time uses)
    own_parse = "soft" if mode == "soft" else "argmax"
    frame_window, frame_pos = None, None
    if batch.predicates is not None:
        frame_window, frame_pos = _frames(batch, windows)
    return _Prepared(
        windows=windows,
        doc_lengths=[len(doc) for doc in docs],
        mask=mask,
        X=X_pad,
        heads=heads,
        given_rows=given_rows,
        own_parse=own_parse,
        dep_labels=batch.dep_labels,
        head_scores=batch.dep_labels or mode != "given",
        frame_window=frame_window,
        frame_pos=frame_pos,
        predicate_tags=_predicate_tag_mask(model),
    )


def _window_heads(
    batch: LisaBatch, windows: List[Tuple[int, int, int]], length: int
) -> numpy.ndarray:
    """Absolute heads per doc -> parent offsets per window [S, T]; unknown (-1) and
    heads outside the window become self-loops (root), padding -1."""
    assert batch.heads is not None
    heads = numpy.full((len(windows), length), -1, dtype="int64")
    doc_heads = [_host_ints(h) for h in batch.heads]
    if len(doc_heads) != len(batch.docs):
        raise ValueError(
            Errors.E156.format(doc=0, n_tokens="?", message=f"{len(doc_heads)} head arrays")
        )
    for s, (i, start, end) in enumerate(windows):
        if doc_heads[i].shape[0] != len(batch.docs[i]):
            raise ValueError(
                Errors.E156.format(
                    doc=i, n_tokens=len(batch.docs[i]), message=f"{doc_heads[i].shape[0]} heads"
                )
            )
        absolute = doc_heads[i][start:end]
        own = numpy.arange(end - start)
        inside = (absolute >= start) & (absolute < end)
        heads[s, : end - start] = numpy.where(inside, absolute - start, own)
    return heads


def _frames(
    batch: LisaBatch, windows: List[Tuple[int, int, int]]
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Given predicates (token indices per doc) -> (window, offset) per frame, in window
    then token order (each doc's predicates sorted, duplicates dropped)."""
    assert batch.predicates is not None
    by_doc: List[List[Tuple[int, int, int]]] = [[] for _ in batch.docs]
    for s, (i, start, _end) in enumerate(windows):
        by_doc[i].append((start, s, i))
    frame_window: List[int] = []
    frame_pos: List[int] = []
    for i, predicates in enumerate(batch.predicates):
        n_tokens = len(batch.docs[i])
        starts = [start for start, _, _ in by_doc[i]]
        for p in numpy.unique(_host_ints(predicates)):
            if not 0 <= p < n_tokens:
                raise ValueError(
                    Errors.E156.format(doc=i, n_tokens=n_tokens, message=f"predicate {p}")
                )
            k = bisect.bisect_right(starts, int(p)) - 1
            start, s, _ = by_doc[i][k]
            frame_window.append(s)
            frame_pos.append(int(p) - start)
    return numpy.asarray(frame_window, dtype="int64"), numpy.asarray(frame_pos, dtype="int64")


def _device(model: Model) -> torch.device:
    """The torch device of a PyTorchWrapper's module (where its parameters live)."""
    return cast(PyTorchShim, model.shims[0]).device


def _host_ints(values: Any) -> numpy.ndarray:
    """Index array on the CPU from numpy, cupy (``.get()``) or a plain list: [n] int64."""
    if hasattr(values, "get") and not isinstance(values, dict):
        values = values.get()
    return numpy.asarray(values, dtype="int64").reshape(-1)


def _predicate_tag_mask(model: Model) -> numpy.ndarray:
    n_tags = model.get_dim("n_tags")
    tags = [int(t) for t in model.attrs.get("predicate_tags") or []]
    bad = [t for t in tags if not 0 <= t < n_tags]
    if bad:
        raise ValueError(Errors.E159.format(value=bad, n_tags=n_tags))
    mask = numpy.zeros((n_tags,), dtype=bool)
    mask[tags] = True
    return mask


def _convert_inputs(
    model: Model, prepared: _Prepared, is_train: bool
) -> Tuple[ArgsKwargs, Callable[[ArgsKwargs], List[Floats2d]]]:
    """_Prepared -> torch arguments of LisaTorchModel.forward on the shim's device."""
    import torch

    ops = model.ops
    device = _device(model)

    def long(array: Optional[numpy.ndarray]) -> Optional[Tensor]:
        return None if array is None else torch.as_tensor(array, dtype=torch.long, device=device)

    x = xp2torch(prepared.X, requires_grad=is_train, device=device)  # [S, T, nI]
    kwargs = {
        "heads": long(prepared.heads),
        "given_rows": torch.as_tensor(prepared.given_rows, device=device),
        "own_parse": prepared.own_parse,
        "dep_labels": prepared.dep_labels,
        "head_scores": prepared.head_scores or is_train,
        "frame_window": long(prepared.frame_window),
        "frame_pos": long(prepared.frame_pos),
        "predicate_tags": torch.as_tensor(prepared.predicate_tags, device=device),
    }
    mask = torch.as_tensor(prepared.mask, device=device)
    mask_xp = ops.xp.asarray(prepared.mask)

    def backprop(d_inputs: ArgsKwargs) -> List[Floats2d]:
        d_x = d_inputs.args[0]
        if d_x is None:  # nothing flowed back to the input
            return [ops.alloc2f(n, model.get_dim("nI")) for n in prepared.doc_lengths]
        d_pad = cast(Floats3d, torch2xp(d_x, ops=ops))  # [S, T, nI]
        d_flat = d_pad[mask_xp]  # [N, nI]: the docs' rows in order
        return cast(List[Floats2d], ops.unflatten(d_flat, ops.asarray1i(prepared.doc_lengths)))

    return ArgsKwargs(args=(x, mask), kwargs=kwargs), backprop


def _convert_outputs(
    model: Model, inputs_outputs: Tuple[_Prepared, LisaTorchOutput], is_train: bool
) -> Tuple[LisaOutput, Callable[[LisaOutput], ArgsKwargs]]:
    """LisaTorchOutput -> LisaOutput in ops arrays (tag rows unpadded, float32)."""
    import torch

    ops = model.ops
    prepared, y = inputs_outputs
    device = _device(model)
    mask_xp = ops.xp.asarray(prepared.mask)
    # float32 for the loss even under autocast; .float() is the identity on float32
    scores = {
        "tag_scores": y.tag_scores.float(),
        "head_scores": y.head_scores.float(),
        "dep_scores": y.dep_scores.float(),
        "role_scores": y.role_scores.float(),
    }
    label_attention = None if y.label_attention is None else y.label_attention.float()
    frame_scores = {
        name: None if getattr(y, name) is None else getattr(y, name).float()
        for name in ("sense_scores", "lemma_scores", "pred_pos_scores")
    }
    tag_pad = torch2xp(scores["tag_scores"], ops=ops)  # [S, T, n_tags]
    frames = torch.stack([y.frame_window, y.frame_pos], dim=1).to(torch.int32)  # [F, 2]
    output = LisaOutput(
        windows=prepared.windows,
        tag_scores=cast(Floats2d, tag_pad[mask_xp]),  # [N, n_tags]
        head_scores=cast(Floats3d, torch2xp(scores["head_scores"], ops=ops)),
        dep_scores=cast(Floats3d, torch2xp(scores["dep_scores"], ops=ops)),
        frames=cast(Ints2d, torch2xp(frames, ops=ops)),
        role_scores=cast(Floats3d, torch2xp(scores["role_scores"], ops=ops)),
        label_attention=None
        if label_attention is None
        else cast(Floats3d, torch2xp(label_attention, ops=ops)),
        used_heads=None
        if y.used_heads is None
        else cast(Ints2d, torch2xp(y.used_heads.to(torch.int32), ops=ops)),
        **cast(
            Dict[str, Any],
            {
                name: None if tensor is None else cast(Floats2d, torch2xp(tensor, ops=ops))
                for name, tensor in frame_scores.items()
            },
        ),
    )

    def backprop(d_output: LisaOutput) -> ArgsKwargs:
        d_tag: Any = ops.alloc3f(*tag_pad.shape)
        d_tag[mask_xp] = d_output.tag_scores
        pairs = [
            (scores["tag_scores"], d_tag),
            (scores["head_scores"], d_output.head_scores),
            (scores["dep_scores"], d_output.dep_scores),
            (scores["role_scores"], d_output.role_scores),
            (label_attention, d_output.label_attention),
            *[(frame_scores[name], getattr(d_output, name)) for name in frame_scores],
        ]
        tensors, grads = [], []
        for tensor, grad in pairs:
            if tensor is None or grad is None or not tensor.requires_grad or tensor.numel() == 0:
                continue
            grad_t = xp2torch(ops.asarray(grad, dtype="float32"), device=device)
            tensors.append(tensor)
            grads.append(grad_t.reshape(tensor.shape))
        return ArgsKwargs(args=(tuple(tensors),), kwargs={"grad_tensors": tuple(grads)})

    return output, backprop


def _empty_output(model: Model) -> LisaOutput:
    ops = model.ops
    return LisaOutput(
        windows=[],
        tag_scores=ops.alloc2f(0, model.get_dim("n_tags")),
        head_scores=ops.alloc3f(0, 0, 0),
        dep_scores=ops.alloc3f(0, 0, model.get_dim("n_deps")),
        frames=ops.alloc2i(0, 2),
        role_scores=ops.alloc3f(0, 0, model.get_dim("n_roles")),
        used_heads=ops.alloc2i(0, 0) if model.attrs["lisa_config"]["parse_layer"] else None,
        **cast(
            Dict[str, Any],
            {
                FRAME_SCORES[name]: ops.alloc2f(0, n) if n else None
                for name in FRAME_DIMS
                for n in [model.maybe_get_dim(name) or 0]
            },
        ),
    )
