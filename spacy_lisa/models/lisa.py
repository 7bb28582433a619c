"""The single-pass LISA architecture, ``spacy-lisa.LISA.v1``, and the Thinc pieces every
LISA architecture shares (building the torch layer, initialising it, the encoder's
input).

``Model[LisaBatch, LisaOutput]`` = a tok2vec sublayer (``Model[List[Doc], List[Floats2d]]``:
``spacy.Tok2Vec.v2``, a ``spacy.Tok2VecListener.v1``, spacy-transformers'
``TransformerListener.v1`` or ``spacy-lisa.TransformerTok2Vec.v1``) followed by the torch
:class:`~.lisa_torch.LisaTorchModel` in a ``PyTorchWrapper_v2`` (its shim
:class:`~spacy_lisa.patches.AveragedPyTorchShim`), whose converters
(:mod:`.lisa_convert`) pad the windows, build the masks, move arrays to the torch device
and back (numpy or cupy, whichever ``model.ops`` uses). The predicate-aware architecture
(:mod:`.predicate_aware`) is built from the same pieces.

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

from dataclasses import asdict, fields
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, cast

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ConfigValidationError, Model, PyTorchShim
from thinc.types import Floats2d

from ..device import lisa_mixed_precision
from ..errors import Errors
from ..patches import averaged_pytorch_wrapper, torch_gemm
from ..signatures import with_fields_as_parameters
from . import lal as _lal  # noqa: F401  (registers the LabelAttentionLayer builder)
from . import lan as _lan  # noqa: F401  (registers the LANRoleScorer builder)
from .lisa_batch import PaddedBatch, predicate_tag_mask, prepare_batch
from .lisa_convert import FRAME_DIMS, convert_inputs, convert_outputs, empty_output, torch_device
from .types import LisaBatch, LisaOutput, LisaSizes

if TYPE_CHECKING:
    from torch import nn


DIMS = ("nI", "n_tags", "n_deps", "n_roles")
# the name of spacy-lisa.Ensemble.v1 models (spacy_lisa.ensemble.model): their layers are
# the LISA models they average
ENSEMBLE_NAME = "lisa_ensemble"


@registry.architectures("spacy-lisa.LISA.v1")
@with_fields_as_parameters(LisaSizes, defaults=True)
def build_lisa_model(
    tok2vec: Model[List[Doc], List[Floats2d]],
    *,
    role_scorer: Optional[Callable[[int, int], Any]] = None,
    top_layer: Optional[Callable[[int], Any]] = None,
    mixed_precision: bool = False,
    detach_frame_heads: bool = False,
    **sizes: Any,
) -> Model[LisaBatch, LisaOutput]:
    """LISA (Strubell et al. 2018) over token vectors from ``tok2vec``, one encoding per
    sentence scoring the roles of all its predicates (the single pass).

    The encoder's sizes and choices (``width``, ``depth``, ``tag_layer``, ``parse_layer``,
    ``sense_head``, ...) are :class:`~.types.LisaSizes`' fields, with its defaults.
    role_scorer: a builder (width, n_roles) -> module, e.g. ``spacy-lisa.LANRoleScorer.v1``;
    default bilinear. top_layer: a builder width -> module on top of the encoder, e.g.
    ``spacy-lisa.LabelAttentionLayer.v1``. mixed_precision: float16 autocast with thinc's
    gradient scaler on a CUDA GPU; ignored on the CPU. detach_frame_heads: removed,
    false only (E051), so that configs saved with it load.
    """
    from ..device import check_torch_follows_thinc

    check_removed_sizes("spacy-lisa.LISA.v1", detach_frame_heads)
    check_torch_follows_thinc("spacy-lisa.LISA.v1")
    return lisa_model(
        "lisa",
        forward,
        tok2vec,
        LisaSizes(**sizes),
        role_scorer=role_scorer,
        top_layer=top_layer,
        mixed_precision=mixed_precision,
    )


def check_removed_sizes(architecture: str, detach_frame_heads: bool) -> None:
    """Raise the numbered error of a removed encoder option set in a config (E051)."""
    if detach_frame_heads:
        message = Errors.E051.format(architecture=architecture)
        raise ConfigValidationError(title=message, desc="")


def lisa_model(
    name: str,
    forward: Callable,
    tok2vec: Model[List[Doc], List[Floats2d]],
    sizes: LisaSizes,
    *,
    role_scorer: Optional[Callable[[int, int], Any]],
    top_layer: Optional[Callable[[int], Any]],
    mixed_precision: bool = False,
    predicate_marker: bool = False,
    attrs: Optional[Dict[str, Any]] = None,
) -> Model[LisaBatch, LisaOutput]:
    """A LISA Thinc model running ``forward``: ``tok2vec`` its first layer, the torch
    layer (built by :func:`ensure_built`) its second. ``predicate_marker``: the torch
    module learns a predicate marker (a ``marked`` :class:`~.lisa_batch.ScoreRequest`)."""
    return Model(
        name,
        forward,
        init=init,
        layers=[tok2vec],
        refs={"tok2vec": tok2vec},
        dims={dim: None for dim in DIMS + FRAME_DIMS},
        attrs={
            "predicate_tags": [],
            "lisa_config": dict(
                asdict(sizes), mixed_precision=mixed_precision, predicate_marker=predicate_marker
            ),
            # builders of the optional parts: thinc skips them in to_bytes (the config
            # rebuilds them); keep them picklable (module-level functions or partials)
            "role_scorer": role_scorer,
            "top_layer": top_layer,
            **(attrs or {}),
        },
    )


@registry.architectures("spacy-lisa.BilinearRoleScorer.v1")
def bilinear_role_scorer(
    hidden_width: int = 200, dropout: float = 0.1, max_distance: int = 0
) -> Callable[[int, int], nn.Module]:
    """LISA's bilinear role scorer (eq. 6): (width, n_labels) -> module returning role
    logits [F, T, n_labels]. hidden_width: size of the predicate and role MLPs.
    max_distance: removed, 0 only (E052), so that configs saved with it load."""
    if max_distance != 0:
        raise ConfigValidationError(title=Errors.E052.format(value=max_distance), desc="")
    # a partial of a module-level function, not a closure, so that pipelines pickle
    return partial(_make_bilinear_role_scorer, hidden_width=hidden_width, dropout=dropout)


def _make_bilinear_role_scorer(
    width: int, n_labels: int, *, hidden_width: int, dropout: float
) -> nn.Module:
    from .role_scorer import BilinearRoleScorer

    return BilinearRoleScorer(width, n_labels, hidden_width, dropout)


def ensure_built(model: Model[LisaBatch, LisaOutput]) -> None:
    """Build the torch layer if it is not built yet (idempotent).

    Needs the dims n_tags, n_deps, n_roles and nI (or a tok2vec layer that knows its
    nO); raises ValueError (E152) naming the missing ones. Call it before loading
    weights into a freshly constructed model."""
    if torch_layer(model) is not None:
        return
    _infer_nI(model, None)
    missing = [name for name in DIMS if not model.has_dim(name)]
    if missing:
        raise ValueError(Errors.E152.format(dims=", ".join(missing)))
    # its shim an AveragedPyTorchShim, so that use_averages = true reaches the torch weights
    wrapper = averaged_pytorch_wrapper(
        _build_torch(model),
        convert_inputs=convert_inputs,
        convert_outputs=convert_outputs,
        # on the device the layers are built on: thinc's autocast is CUDA-only
        mixed_precision=lisa_mixed_precision(model.attrs["lisa_config"]["mixed_precision"]),
    )
    model.layers.append(wrapper)
    model.set_ref("lisa", wrapper)


def lisa_members(model: Model) -> List[Model]:
    """The LISA models inside ``model``: an ensemble's members, else ``[model]``."""
    return list(model.layers) if model.name == ENSEMBLE_NAME else [model]


def set_role_prior(model: Model[LisaBatch, LisaOutput], log_prior: numpy.ndarray) -> None:
    """Pass ``log_prior`` ([n_roles] log label frequencies) to the torch role scorer if it
    takes one (``set_label_prior``: the LAN decoder); other scorers ignore it."""
    lisa = torch_layer(model)
    if lisa is None:
        raise ValueError(Errors.E153)
    scorer = cast(PyTorchShim, lisa.shims[0])._model.role_scorer
    if hasattr(scorer, "set_label_prior"):
        scorer.set_label_prior(log_prior)


def _build_torch(model: Model) -> nn.Module:
    from .lisa_torch import LisaTorchModel

    config = model.attrs["lisa_config"]
    # the sizes' fields only: the attrs of a model saved before hold removed ones too
    sizes = LisaSizes(**{f.name: config[f.name] for f in fields(LisaSizes) if f.name in config})
    n_in, n_tags, n_deps, n_roles = (model.get_dim(name) for name in DIMS)
    return LisaTorchModel(
        n_in,
        n_tags,
        n_deps,
        n_roles,
        sizes,
        role_scorer=model.attrs["role_scorer"],
        top_layer=model.attrs["top_layer"],
        n_senses=model.maybe_get_dim("n_senses") or 0,
        n_lemmas=model.maybe_get_dim("n_lemmas") or 0,
        n_pred_pos=model.maybe_get_dim("n_pred_pos") or 0,
        predicate_marker=config["predicate_marker"],
    )


def tok2vec_layer(model: Model) -> Model:
    """The model's tok2vec layer."""
    # by position, not by ref: Model.copy() does not carry refs over
    return model.layers[0]


def torch_layer(model: Model) -> Optional[Model]:
    """The PyTorchWrapper of the LISA network once built (layers[1]), else None."""
    return model.layers[1] if len(model.layers) > 1 else None


def _infer_nI(model: Model, X: Optional[LisaBatch]) -> None:
    if model.has_dim("nI"):
        return
    tok2vec = tok2vec_layer(model)
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
    tok2vec = tok2vec_layer(model)
    X = None if X is None else as_batch(X)
    tok2vec.initialize(X=X.docs if X is not None else None)
    _infer_nI(model, X)
    wrapper = torch_layer(model)
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


def encode_tokens(
    model: Model[LisaBatch, LisaOutput], X: Any, is_train: bool
) -> Tuple[LisaBatch, Model, List[Floats2d], Callable[[List[Floats2d]], Any], PaddedBatch]:
    """The first steps of every LISA forward: the batch (:func:`as_batch`), the built
    torch layer, the tok2vec's token vectors (and their backprop) and the batch laid out
    as padded windows."""
    batch = as_batch(X)
    lisa = torch_layer(model)
    if lisa is None:
        raise ValueError(Errors.E153)
    tok2vec = tok2vec_layer(model)
    with torch_gemm(tok2vec, enabled=not is_train):
        Xs, backprop_tok2vec = token_vectors(tok2vec, batch, is_train)
    return (
        batch,
        lisa,
        Xs,
        backprop_tok2vec,
        prepare_batch(model, batch, Xs, parts=batch.parts and not is_train),
    )


def token_vectors(
    tok2vec: Model, batch: LisaBatch, is_train: bool
) -> Tuple[List[Floats2d], Callable[[List[Floats2d]], Any]]:
    """The tok2vec's output on the batch's docs (and its backprop): at prediction with
    ``batch.vectors``, looked up there, the docs not found run and stored."""
    cache = batch.vectors
    if is_train or cache is None:
        return tok2vec(batch.docs, is_train)
    missing = [doc for doc in batch.docs if (tok2vec.id, id(doc)) not in cache]
    if missing:
        for doc, X in zip(missing, tok2vec.predict(missing), strict=True):
            cache[(tok2vec.id, id(doc))] = X
    return [cache[(tok2vec.id, id(doc))] for doc in batch.docs], lambda d_Xs: batch.docs


def forward(
    model: Model[LisaBatch, LisaOutput], batch: LisaBatch, is_train: bool
) -> Tuple[LisaOutput, Callable[[LisaOutput], LisaBatch]]:
    batch, lisa, _, backprop_tok2vec, prepared = encode_tokens(model, batch, is_train)
    if not prepared.windows:
        # only empty docs: nothing to encode and no gradient for the tok2vec (whose
        # backprop fails on zero rows; spaCy's components skip such batches anyway)
        return empty_output(model), lambda d_output: batch
    output, backprop_lisa = lisa(prepared, is_train)

    def backprop(d_output: LisaOutput) -> LisaBatch:
        backprop_tok2vec(backprop_lisa(d_output))
        return batch

    return output, backprop
