"""From role logits to frames (plain numpy, no spaCy).

- :func:`decode_frames`: role logits of a batch -> per frame the predicate and role
  spans, as ``lisa_srl`` writes them (log-softmax, Viterbi or greedy from
  :mod:`spacy_lisa.decoding.viterbi`, BIO -> spans on arrays:
  :func:`~spacy_lisa.decoding.bio.paths_to_spans`, :func:`spans_to_frames`).
- :func:`unique_core_roles`: re-decode the frames whose path holds a core role
  (``ARG0``-``ARG5``, ``ARGA``) in two spans, until none does.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import Errors
from .bio import OUTSIDE, BioLabels, bio_labels, paths_to_spans
from .confidence import calibrated, span_scores
from .scores import host_scores, log_softmax
from .viterbi import greedy_paths, viterbi_paths

FrameSpans = Tuple[Tuple[int, int], List[List[Any]]]


def spans_to_frames(
    spans: Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    positions: np.ndarray,
    info: BioLabels,
    offsets: Optional[np.ndarray] = None,
    scores: Optional[np.ndarray] = None,
) -> List[FrameSpans]:
    """Per frame ``((pred_start, pred_end), [[start, end, label], ...])`` from
    :func:`paths_to_spans`, as the component writes them: the ``V`` span around the
    predicate token is the predicate (else the token alone); other ``V`` spans and spans
    covering the predicate token are dropped. ``positions`` are the predicate tokens
    (window offsets), ``offsets`` (default 0) are added to every returned offset; with
    ``scores`` (one per span), each role is ``[start, end, label, score]``."""
    frame, start, end, type_id = spans
    positions = np.asarray(positions, dtype=np.int64).reshape(-1)
    n_frames = positions.shape[0]
    shift = (
        np.zeros(n_frames, dtype=np.int64)
        if offsets is None
        else np.asarray(offsets, dtype=np.int64).reshape(-1)
    )
    pos = positions[frame]
    covers = (start <= pos) & (pos < end)
    is_verb = type_id == info.verb_type
    pred_start = positions + shift
    pred_end = pred_start + 1
    chosen = is_verb & covers  # spans do not overlap: at most one per frame
    pred_start[frame[chosen]] = start[chosen] + shift[frame[chosen]]
    pred_end[frame[chosen]] = end[chosen] + shift[frame[chosen]]
    keep = ~is_verb & ~covers
    role_frame = frame[keep]
    role_shift = shift[role_frame]
    names = info.types
    roles = [
        [b, e, names[k]]
        for b, e, k in zip(
            (start[keep] + role_shift).tolist(),
            (end[keep] + role_shift).tolist(),
            type_id[keep].tolist(),
            strict=True,
        )
    ]
    if scores is not None:
        for role, score in zip(roles, scores[keep].tolist(), strict=True):
            role.append(score)
    bounds = np.searchsorted(role_frame, np.arange(n_frames + 1)).tolist()
    return [
        ((ps, pe), roles[bounds[f] : bounds[f + 1]])
        for f, (ps, pe) in enumerate(zip(pred_start.tolist(), pred_end.tolist(), strict=True))
    ]


def decode_frames(
    role_scores: np.ndarray,
    positions: np.ndarray,
    lengths: Sequence[int],
    labels: Sequence[str],
    *,
    offsets: Optional[np.ndarray] = None,
    decoding: str = "viterbi",
    transitions: Optional[Any] = None,
    start: Optional[Any] = None,
    transition_weight: float = 1.0,
    unique_core: bool = False,
    score_temperature: Optional[float] = None,
    score_calibration: Tuple[float, float] = (1.0, 0.0),
) -> List[FrameSpans]:
    """Decode every frame of a batch in one go: role logits ``[F, T, L]`` (padded) ->
    per frame ``((pred_start, pred_end), [[start, end, label], ...])``.

    Exactly what ``lisa_srl`` wrote frame by frame: log-softmax over labels (once, on the
    whole batch), then Viterbi with hard BIO constraints plus ``transition_weight`` times
    the stored ``transitions``/``start`` log-probabilities (none when either is empty or
    the weight is 0), or greedy argmax; then BIO -> spans on arrays
    (:func:`paths_to_spans`) and the predicate / role rules of :func:`spans_to_frames`.
    The predicate token is constrained to ``B-V``/``I-V``, so no role covers it. With
    ``unique_core``, no frame holds a core role in two spans (:func:`unique_core_roles`).
    ``positions`` are the predicate tokens, ``lengths`` the window lengths, ``offsets``
    the window starts in the doc (added to every returned offset). With a
    ``score_temperature``, every role ends with its score: its probability under the
    per-token distributions at that temperature
    (:func:`~spacy_lisa.decoding.confidence.span_scores`), mapped by
    ``score_calibration`` (:func:`~spacy_lisa.decoding.confidence.calibrated`).
    """
    label_tuple = tuple(labels)
    info = bio_labels(label_tuple)
    scores = host_scores(role_scores, len(label_tuple))
    if scores.shape[0] == 0:
        return []
    log_probs = log_softmax(scores, axis=-1)
    _predicate_is_verb(log_probs, positions, info)
    if decoding == "viterbi":
        trans = first = None
        if transitions is not None and len(transitions) and transition_weight:
            # float32 as the component always scaled them (bit-identical paths)
            trans = transition_weight * np.asarray(transitions, dtype="f")
            first = transition_weight * np.asarray(start, dtype="f")

        def decode(lp: np.ndarray, ln: Any) -> np.ndarray:
            return viterbi_paths(lp, ln, label_tuple, trans, first)

    elif decoding == "greedy":

        def decode(lp: np.ndarray, ln: Any) -> np.ndarray:
            return greedy_paths(lp, ln)

    else:
        raise ValueError(
            Errors.E024.format(value=decoding, option="decoding", choices="viterbi, greedy")
        )
    sizes = np.asarray(lengths, dtype=np.int64).reshape(-1)
    paths = decode(log_probs, sizes)
    if unique_core:
        paths = unique_core_roles(log_probs, paths, sizes, info, decode)
    spans = paths_to_spans(paths, info)
    span_probs = None
    if score_temperature is not None:
        span_probs = span_scores(scores, spans, sizes, info, score_temperature)
        span_probs = calibrated(span_probs, *score_calibration)
    return spans_to_frames(spans, positions, info, offsets, span_probs)


# PropBank's numbered arguments: at most one span of each per frame (never two in the EWT
# training frames); modifiers (ARGM-*) and C-/R- spans may repeat
NUMBERED_ARGUMENT = re.compile(r"ARG[0-9A]")
# rounds of re-decoding before the remaining duplicates are dropped (one round settles
# nearly every frame: a round forbids the label on the spans that lose it)
_MAX_ROUNDS = 8


def unique_core_roles(
    log_probs: np.ndarray,
    paths: np.ndarray,
    lengths: np.ndarray,
    info: BioLabels,
    decode: Callable[[np.ndarray, Any], np.ndarray],
) -> np.ndarray:
    """``paths`` (``[F, T]``) with no core role in two spans of a frame.

    Where a frame's path has a core role in several spans, the span whose label gains
    most over the best other label at its tokens (summed log-probabilities) keeps it;
    the role is forbidden at the other spans' tokens (``log_probs`` is changed in place)
    and only those frames are decoded again with ``decode(log_probs, lengths)``, so they
    may take another label there, or the role elsewhere. Repeated while duplicates remain,
    at most ``_MAX_ROUNDS`` times; a duplicate left after that is read as ``O``.
    """
    core = np.array([bool(NUMBERED_ARGUMENT.fullmatch(name)) for name in info.types] + [False])
    label_ids = np.arange(len(info.labels))
    for round_ in range(_MAX_ROUNDS + 1):
        frame, start, end, type_id = paths_to_spans(paths, info)
        is_core = core[type_id]
        frame, start, end, type_id = frame[is_core], start[is_core], end[is_core], type_id[is_core]
        keys = frame * len(info.types) + type_id
        _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
        repeated = np.flatnonzero(counts[inverse] > 1)
        if not len(repeated):
            break
        best: Dict[int, Tuple[float, int]] = {}
        for i in repeated.tolist():
            f, b, e = int(frame[i]), int(start[i]), int(end[i])
            scores = log_probs[f, b:e]
            chosen = scores[np.arange(e - b), paths[f, b:e]].sum()
            other = scores[:, info.type_id[:-1] != type_id[i]].max(axis=-1).sum()
            gain = float(chosen - other)
            key = int(keys[i])
            if key not in best or gain > best[key][0]:
                best[key] = (gain, i)
        losers = [i for i in repeated.tolist() if best[int(keys[i])][1] != i]
        for i in losers:
            f, b, e = int(frame[i]), int(start[i]), int(end[i])
            if round_ == _MAX_ROUNDS:
                paths[f, b:e] = info.labels.index(OUTSIDE)
            else:
                role_labels = label_ids[info.type_id[:-1] == type_id[i]]
                log_probs[f, b:e][:, role_labels] = _FORBIDDEN  # a view: in place
        if round_ < _MAX_ROUNDS:
            redo = np.unique(frame[losers])
            paths[redo] = decode(log_probs[redo], lengths[redo])
    return paths


# log-probability of the labels a predicate token may not take: far below any real one,
# finite so that Viterbi's sums stay comparable
_FORBIDDEN = -1e9


def _predicate_is_verb(log_probs: np.ndarray, positions: np.ndarray, info: BioLabels) -> None:
    """Only ``B-V``/``I-V`` at each frame's predicate token (in place; no-op without a
    ``V`` label). Otherwise a role decoded across its own predicate would have to be
    dropped from the frame: the constraint decodes the best frame that has none."""
    if info.verb_type < 0 or log_probs.shape[0] == 0:
        return
    not_verb = np.flatnonzero(info.type_id[:-1] != info.verb_type)  # label ids
    frames = np.arange(log_probs.shape[0])[:, None]
    tokens = np.asarray(positions, dtype=np.int64).reshape(-1, 1)
    log_probs[frames, tokens, not_verb[None, :]] = _FORBIDDEN  # [F, n_not_verb] cells
