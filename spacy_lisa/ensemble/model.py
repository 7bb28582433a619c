"""``spacy-lisa.Ensemble.v1``: several trained LISA models as one, for prediction.

Each member scores the same :class:`~spacy_lisa.models.types.LisaBatch` (one set of
windows and, where the doc's parse is followed, one parse for all); their distributions
are averaged and the component decodes the average once. The output is a
:class:`~spacy_lisa.models.types.LisaOutput` of log mean probabilities, so the component
reads it as it reads one model's logits.

Predicted predicates need one answer before roles can be averaged: the members' POS /
predicate distributions are averaged first, the tokens whose averaged argmax is a
predicate tag are the frames, and a member that found other predicates in a doc scores
that doc again with those frames given (only the docs where it disagrees).

Members are trained alone (each a ``lisa_srl`` pipeline of the same labels) and joined
with ``spacy-lisa ensemble``; the ensemble itself does not train.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, cast

import numpy
from spacy.util import registry
from thinc.api import Model

from ..errors import Errors
from ..models.lisa import DIMS, ENSEMBLE_NAME, lisa_members
from ..models.lisa_batch import predicate_tag_mask
from ..models.lisa_convert import FRAME_DIMS
from ..models.types import MASK_VALUE, LisaBatch, LisaOutput

# log of a probability no member gave: far below any real one, far above MASK_VALUE
_LOG_FLOOR = 1e-30

Frame = Tuple[int, int]  # (window index, token offset in window)


@registry.architectures("spacy-lisa.Ensemble.v1")
def build_ensemble(*members: Model[LisaBatch, LisaOutput]) -> Model[LisaBatch, LisaOutput]:
    """The average of ``members`` (``spacy-lisa.LISA.v1`` or
    ``spacy-lisa.PredicateAwareLISA.v1`` models trained on the same labels), given in the
    config as ``[model.*.member0]``, ``[model.*.member1]``, ... Prediction only."""
    if not members:
        raise ValueError(Errors.E182)
    return Model(
        ENSEMBLE_NAME,
        forward,
        init=_no_init,
        layers=list(members),
        dims={dim: None for dim in DIMS + FRAME_DIMS},
        attrs={"predicate_tags": [], "lisa_config": dict(members[0].attrs["lisa_config"])},
    )


def forward(
    model: Model[LisaBatch, LisaOutput], batch: LisaBatch, is_train: bool
) -> Tuple[LisaOutput, Callable[[LisaOutput], LisaBatch]]:
    if is_train:
        raise ValueError(Errors.E183)
    members = lisa_members(model)
    outputs = [member.predict(batch) for member in members]
    if len(outputs) == 1 or not outputs[0].windows:
        return outputs[0], _no_backprop
    ops = model.ops
    host = [_to_host(ops, out) for out in outputs]
    tag_probs = _mean_probs([out.tag_scores for out in host])
    frames = [_frame_list(out) for out in host]
    if batch.predicates is None:
        agreed = _agreed_frames(tag_probs, host[0], predicate_tag_mask(members[0]))
    else:  # given predicates: every member scored the same frames
        agreed = frames[0]
    rows = [
        _frame_rows(member, batch, out, member_frames, agreed, ops)
        for member, out, member_frames in zip(members, host, frames, strict=True)
    ]
    averaged = _average(host, rows, agreed, tag_probs, batch.parse_mode == "given")
    return _to_device(ops, averaged), _no_backprop


def _no_backprop(d_output: LisaOutput) -> LisaBatch:
    raise ValueError(Errors.E183)


def _no_init(model: Model, X: Any = None, Y: Any = None) -> None:
    raise ValueError(Errors.E183)


# --------------------------------------------------------------------- predicates ------
def _agreed_frames(tag_probs: Any, out: LisaOutput, predicate_tags: Any) -> List[Frame]:
    """The frames the averaged POS/predicate distribution predicts: tokens whose argmax
    tag is a predicate tag, as (window, offset) in window order (the members' rule,
    ``LisaTorchModel.predict_predicates``)."""
    is_predicate = predicate_tags[tag_probs.argmax(axis=-1)]
    agreed: List[Frame] = []
    row = 0
    for s, (_, start, end) in enumerate(out.windows):
        offsets = numpy.flatnonzero(is_predicate[row : row + end - start])
        agreed.extend((s, int(t)) for t in offsets)
        row += end - start
    return agreed


def _frame_list(out: LisaOutput) -> List[Frame]:
    frames: Any = out.frames
    return [(int(s), int(t)) for s, t in frames.reshape(-1, 2)]


def _frame_rows(
    member: Model,
    batch: LisaBatch,
    out: LisaOutput,
    member_frames: List[Frame],
    agreed: List[Frame],
    ops: Any,
) -> List[Tuple[LisaOutput, int]]:
    """For each agreed frame, the output and row holding this member's scores of it:
    its own output where it found the same predicates in the doc, else the output of a
    second call on the docs where it did not, with the agreed predicates given."""
    own = {frame: f for f, frame in enumerate(member_frames)}
    doc_of = [w[0] for w in out.windows]
    differing: Set[int] = {doc_of[s] for s, _ in set(member_frames) ^ set(agreed)}
    rescored: Dict[Frame, Tuple[LisaOutput, int]] = {}
    if differing:
        docs = sorted(differing)
        sub_out = _host_predict(member, _sub_batch(batch, docs, out, agreed), ops)
        # the second call's windows are the same windows of fewer docs, in the same order
        window_of = {(docs[d], start): s for s, (d, start, _) in enumerate(sub_out.windows)}
        full_window = {
            window_of[(doc_i, start)]: s
            for s, (doc_i, start, _) in enumerate(out.windows)
            if (doc_i, start) in window_of
        }
        for f, (s, t) in enumerate(_frame_list(sub_out)):
            rescored[(full_window[s], t)] = (sub_out, f)
    return [
        rescored[frame] if doc_of[frame[0]] in differing else (out, own[frame]) for frame in agreed
    ]


def _sub_batch(
    batch: LisaBatch, docs: Sequence[int], out: LisaOutput, agreed: List[Frame]
) -> LisaBatch:
    """``batch`` cut to ``docs``, with the agreed predicates as absolute token indices."""
    predicates: Dict[int, List[int]] = {i: [] for i in docs}
    for s, t in agreed:
        doc_i, start, _ = out.windows[s]
        if doc_i in predicates:
            predicates[doc_i].append(start + t)
    return replace(
        batch,
        docs=[batch.docs[i] for i in docs],
        windows=[batch.windows[i] for i in docs],
        heads=None if batch.heads is None else [batch.heads[i] for i in docs],
        predicates=[cast(Any, numpy.asarray(sorted(predicates[i]), dtype="i")) for i in docs],
    )


# --------------------------------------------------------------------- averaging -------
def _average(
    outs: List[LisaOutput],
    rows: List[List[Tuple[LisaOutput, int]]],
    agreed: List[Frame],
    tag_probs: Any,
    parse_given: bool,
) -> LisaOutput:
    first = outs[0]
    head_probs = _mean_probs([out.head_scores for out in outs])
    head_scores = _log(head_probs, first.head_scores)
    used_heads = first.used_heads
    if used_heads is not None and not parse_given:
        # the parse written to the doc: the averaged parent distribution's argmax (the
        # members each followed their own)
        used_heads = head_probs.argmax(axis=-1).astype(used_heads.dtype)
    n_frames, width = len(agreed), first.role_scores.shape[1]
    per_frame: Dict[str, Any] = {}
    for field in ("role_scores", "sense_scores", "lemma_scores", "pred_pos_scores"):
        if getattr(first, field) is None or any(getattr(o, field) is None for o in outs):
            per_frame[field] = None
            continue
        member_scores = [_gather(field, member_rows, width, first) for member_rows in rows]
        per_frame[field] = _log(_mean_probs(member_scores), member_scores[0])
    attention: List[Any] = [out.label_attention for out in outs]
    return LisaOutput(  # host arrays: _to_device puts them where the members ran
        windows=list(first.windows),
        tag_scores=_log(tag_probs, first.tag_scores),
        head_scores=head_scores,
        dep_scores=_log(_mean_probs([out.dep_scores for out in outs]), first.dep_scores),
        frames=cast(Any, numpy.asarray(agreed, dtype=first.frames.dtype).reshape(n_frames, 2)),
        role_scores=per_frame["role_scores"],
        label_attention=(
            None if any(a is None for a in attention) else numpy.mean(attention, axis=0)
        ),
        used_heads=used_heads,
        sense_scores=per_frame["sense_scores"],
        lemma_scores=per_frame["lemma_scores"],
        pred_pos_scores=per_frame["pred_pos_scores"],
    )


def _gather(
    field: str, rows: List[Tuple[LisaOutput, int]], width: int, template: LisaOutput
) -> Any:
    """One member's ``field`` rows for the agreed frames; a second call's role scores,
    over fewer docs, may be padded to fewer tokens: padded here as masked."""
    picked = []
    for out, f in rows:
        values = getattr(out, field)[f]
        if field == "role_scores" and values.shape[0] < width:
            pad = numpy.full((width - values.shape[0], values.shape[1]), MASK_VALUE, "f")
            values = numpy.concatenate([values, pad])
        picked.append(values)
    if not picked:
        return numpy.zeros((0, *getattr(template, field).shape[1:]), dtype="f")
    return numpy.stack(picked).astype("f")


def _mean_probs(scores: Sequence[Any]) -> Any:
    """The mean over members of softmax(scores) on the last axis."""
    total: Optional[Any] = None
    for values in scores:
        values = numpy.asarray(values, dtype="f")
        shifted = numpy.exp(values - values.max(axis=-1, keepdims=True))
        probs = shifted / shifted.sum(axis=-1, keepdims=True)
        total = probs if total is None else total + probs
    assert total is not None
    return total / len(scores)


def _log(probs: Any, like: Any) -> Any:
    """log(probs) as logits; where the members' scores were masked, masked again."""
    logits = numpy.log(numpy.maximum(probs, _LOG_FLOOR)).astype("f")
    masked = numpy.asarray(like) <= MASK_VALUE / 2
    return numpy.where(masked, numpy.float32(MASK_VALUE), logits)


# --------------------------------------------------------------------- devices ---------
_ARRAYS = (
    "tag_scores",
    "head_scores",
    "dep_scores",
    "frames",
    "role_scores",
    "label_attention",
    "used_heads",
    "sense_scores",
    "lemma_scores",
    "pred_pos_scores",
)


def _to_host(ops: Any, out: LisaOutput) -> LisaOutput:
    return _with_arrays(out, ops.to_numpy)


def _to_device(ops: Any, out: LisaOutput) -> LisaOutput:
    return _with_arrays(out, ops.asarray)


def _with_arrays(out: LisaOutput, move: Callable[[Any], Any]) -> LisaOutput:
    moved: Dict[str, Any] = {}
    for name in _ARRAYS:
        value = getattr(out, name)
        moved[name] = None if value is None else move(value)
    return replace(out, **moved)


def _host_predict(member: Model, batch: LisaBatch, ops: Any) -> LisaOutput:
    return _to_host(ops, member.predict(batch))


__all__ = ["build_ensemble"]
