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

from dataclasses import asdict
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple, cast

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import (
    Model,
    PyTorchShim,
    PyTorchWrapper_v2,
)
from thinc.types import Floats2d

from ..device import lisa_mixed_precision
from ..errors import Errors
from . import lal as _lal  # noqa: F401  (registers the LabelAttentionLayer builder)
from . import lan as _lan  # noqa: F401  (registers the LANRoleScorer builder)
from .averaged_shim import use_averaged_shim
from .gemm_ops import torch_gemm
from .lisa_batch import predicate_tag_mask, prepare_batch
from .lisa_convert import FRAME_DIMS, convert_inputs, convert_outputs, empty_output, torch_device
from .types import LISA_DEFAULTS, LISA_V2_DEFAULTS, LisaBatch, LisaOutput, LisaSizes

if TYPE_CHECKING:
    from torch import nn


DIMS = ("nI", "n_tags", "n_deps", "n_roles")


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
    predicate_encoding: str = LISA_DEFAULTS["predicate_encoding"],
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
    predicate_encoding: "single_pass" (one encoding scores every predicate's roles),
    "marked" (each predicate's window encoded again with the predicate marked, in the
    tok2vec's input where it takes marks, e.g. ``TransformerTok2Vec.v1``'s token types,
    and at the LISA encoder's input; its roles scored from that) or "marked_upper" (the
    mark at the LISA encoder's input only: one tok2vec pass); see :mod:`.marked`.
    role_scorer: a builder (width, n_roles) -> module, e.g.
    ``spacy-lisa.LANRoleScorer.v1``; default bilinear.
    top_layer: a builder width -> module on top of the encoder, e.g.
    ``spacy-lisa.LabelAttentionLayer.v1``. mixed_precision: float16 autocast with
    thinc's gradient scaler on a CUDA GPU (single pass only, E457); ignored on the CPU.
    """
    from ..device import check_torch_follows_thinc
    from .lisa_torch import check_choices, check_layers

    check_torch_follows_thinc("spacy-lisa.LISA.v1")

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
        predicate_encoding=predicate_encoding,
    )
    check_choices(sizes)
    if mixed_precision and predicate_encoding != "single_pass":
        raise ValueError(Errors.E457.format(encoding=predicate_encoding))

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


V2 = LISA_V2_DEFAULTS


@registry.architectures("spacy-lisa.LISA.v2")
def build_lisa_model_v2(
    tok2vec: Model[List[Doc], List[Floats2d]],
    width: int = V2["width"],
    depth: int = V2["depth"],
    n_heads: int = V2["n_heads"],
    ffn_width: int = V2["ffn_width"],
    dropout: float = V2["dropout"],
    attention_dropout: float = V2["attention_dropout"],
    tag_layer: int = V2["tag_layer"],
    parse_layer: int = V2["parse_layer"],
    parse_dep_width: int = V2["parse_dep_width"],
    parse_head_width: int = V2["parse_head_width"],
    role_width: int = V2["role_width"],
    positions: str = V2["positions"],
    detach_frame_heads: bool = V2["detach_frame_heads"],
    sense_head: str = V2["sense_head"],
    predicate_encoding: str = V2["predicate_encoding"],
    role_scorer: Optional[Callable[[int, int], Any]] = None,
    top_layer: Optional[Callable[[int], Any]] = None,
    mixed_precision: bool = False,
) -> Model[LisaBatch, LisaOutput]:
    """:func:`build_lisa_model` (``LISA.v1``) with the best measured defaults
    (:data:`~.types.LISA_V2_DEFAULTS`: the encoder of configs/lisa_cpu.cfg, the roleset
    classifier on its own detached MLP with a summary of the predicate's window). The
    component's default model; ``LISA.v1`` keeps the defaults older pipelines were saved
    with."""
    return build_lisa_model(**locals())


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
        convert_inputs=convert_inputs,
        convert_outputs=convert_outputs,
        # on the device the layers are built on: thinc's autocast is CUDA-only
        mixed_precision=lisa_mixed_precision(model.attrs["lisa_config"]["mixed_precision"]),
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


def predicate_encoding(model: Model) -> str:
    """The model's ``predicate_encoding``; pipelines saved before the option existed
    store a ``lisa_config`` without it: single pass."""
    return str(model.attrs["lisa_config"].get("predicate_encoding", "single_pass"))


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
        cast(PyTorchShim, wrapper.shims[0])._model = _build_torch(model).to(torch_device(wrapper))
    else:
        ensure_built(model)
    predicate_tag_mask(model)  # validate the component's predicate_tags now


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
    with torch_gemm(tok2vec, enabled=not is_train):
        Xs, backprop_tok2vec = tok2vec(batch.docs, is_train)
    prepared = prepare_batch(model, batch, Xs)
    if not prepared.windows:
        # only empty docs: nothing to encode and no gradient for the tok2vec (whose
        # backprop fails on zero rows; spaCy's components skip such batches anyway)
        return empty_output(model), lambda d_output: batch
    if predicate_encoding(model) != "single_pass":
        from .marked import marked_forward

        output, backprop_marked = marked_forward(model, batch, prepared, Xs, is_train)

        def backprop_two_stages(d_output: LisaOutput) -> LisaBatch:
            backprop_tok2vec(backprop_marked(d_output))
            return batch

        return output, backprop_two_stages
    output, backprop_lisa = lisa(prepared, is_train)

    def backprop(d_output: LisaOutput) -> LisaBatch:
        d_Xs = backprop_lisa(d_output)
        backprop_tok2vec(d_Xs)
        return batch

    return output, backprop
