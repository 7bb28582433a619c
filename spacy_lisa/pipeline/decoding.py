"""From role logits to frames, and from head scores to a tree (plain numpy, no spaCy).

- :func:`decode_frames`: role logits of a batch -> per frame the predicate and role
  spans, as ``lisa_srl`` writes them (log-softmax, Viterbi or greedy from
  :mod:`spacy_lisa.pipeline.viterbi`, BIO -> spans on arrays: :func:`paths_to_spans`,
  :func:`spans_to_frames`).
- :func:`unique_core_roles`: re-decode the frames whose path holds a core role
  (``ARG0``-``ARG5``, ``ARGA``) in two spans, until none does.
- :func:`mst_decode`: maximum spanning tree over a head-score matrix with exactly one
  root, through ``ufal.chu_liu_edmonds``.

Convention: ``head_scores[i, j]`` is the score of "the head of token ``i`` is token
``j``", ``j == i`` meaning ``i`` is the root.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from ufal.chu_liu_edmonds import chu_liu_edmonds

from ..errors import Errors
from .viterbi import BioLabels, _checked_scores, _floored, bio_labels, greedy_paths, viterbi_paths

# Log-probabilities below this are clamped in mst_decode: the single-root penalty is
# derived from the score range, and a bounded range keeps that penalty numerically exact.
_MST_LOGP_FLOOR = -1e4


def paths_to_spans(
    paths: np.ndarray, info: BioLabels
) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Labelled spans of padded label id paths (``[F, T]``, ``-1`` = padding), read as
    conlleval reads tags (lenient: an ``I-X`` that continues no ``X`` span opens one).
    Returns ``(frame, start, end, type_id)`` arrays, ordered by frame then start;
    ``end`` is exclusive, ``type_id`` indexes ``info.types``."""
    paths = np.asarray(paths, dtype=np.int64)
    if paths.ndim != 2:
        raise ValueError(
            Errors.E251.format(what="paths", message=f"expected 2 dims, got {paths.shape}")
        )
    prefix = info.prefix[paths]
    types = info.type_id[paths]
    in_span = prefix > 0
    # continues[f, t]: position t extends the span open at t - 1
    continues = np.zeros_like(in_span)
    continues[:, 1:] = (prefix[:, 1:] == 2) & in_span[:, :-1] & (types[:, 1:] == types[:, :-1])
    opens = in_span & ~continues
    closes = in_span.copy()  # a span closes after t unless t + 1 continues it
    closes[:, :-1] &= ~continues[:, 1:]
    frame, start = np.nonzero(opens)
    _, last = np.nonzero(closes)  # row-major: the k-th close of a frame ends its k-th span
    return frame, start, last + 1, types[frame, start]


FrameSpans = Tuple[Tuple[int, int], List[List[Any]]]


def spans_to_frames(
    spans: Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    positions: np.ndarray,
    info: BioLabels,
    offsets: Optional[np.ndarray] = None,
) -> List[FrameSpans]:
    """Per frame ``((pred_start, pred_end), [[start, end, label], ...])`` from
    :func:`paths_to_spans`, as the component writes them: the ``V`` span around the
    predicate token is the predicate (else the token alone); other ``V`` spans and spans
    covering the predicate token are dropped. ``positions`` are the predicate tokens
    (window offsets), ``offsets`` (default 0) are added to every returned offset."""
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
    the window starts in the doc (added to every returned offset).
    """
    label_tuple = tuple(labels)
    info = bio_labels(label_tuple)
    scores = _checked_scores(role_scores, len(label_tuple))
    if scores.shape[0] == 0:
        return []
    log_probs = _log_softmax(scores, axis=-1)
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
    return spans_to_frames(paths_to_spans(paths, info), positions, info, offsets)


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
                paths[f, b:e] = _outside_id(info)
            else:
                role_labels = label_ids[info.type_id[:-1] == type_id[i]]
                log_probs[f, b:e][:, role_labels] = _FORBIDDEN  # a view: in place
        if round_ < _MAX_ROUNDS:
            redo = np.unique(frame[losers])
            paths[redo] = decode(log_probs[redo], lengths[redo])
    return paths


def _outside_id(info: BioLabels) -> int:
    return info.labels.index("O")


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


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def mst_decode(head_scores: np.ndarray) -> List[int]:
    """Heads (window offsets, root = own index) of the maximum spanning tree with
    exactly one root for ``head_scores`` (``[T, T]`` logits, ``[i, j]`` = head of ``i``
    is ``j``, ``j == i`` = root)."""
    logits = np.asarray(head_scores, dtype=np.float64)
    if logits.ndim != 2 or logits.shape[0] != logits.shape[1]:
        raise ValueError(
            Errors.E251.format(what="head_scores", message=f"expected [T, T], got {logits.shape}")
        )
    logits = _floored(logits, "head_scores")
    n = logits.shape[0]
    if n == 0:
        return []
    if n == 1:
        return [0]
    # log-softmax over candidate heads: rows become comparable log-probabilities, so the
    # tree maximises the joint probability of the heads rather than raw logit sums
    logp = np.maximum(_log_softmax(logits, axis=1), _MST_LOGP_FLOOR)
    root = np.diag(logp).copy()
    # Single root: every arc from the artificial root pays a penalty larger than any
    # possible difference between two trees' other arcs, so the MST takes as few root
    # arcs as possible (one) and, among single-root trees, the best one. Exact, and one
    # CLE call instead of one per candidate root.
    penalty = n * (float(logp.max()) - float(logp.min())) + 1.0
    matrix = np.full((n + 1, n + 1), np.nan, dtype=np.float64)
    matrix[1:, 1:] = logp
    matrix[np.arange(1, n + 1), np.arange(1, n + 1)] = np.nan  # no self-loops
    matrix[1:, 0] = root - penalty
    heads, _ = chu_liu_edmonds(np.ascontiguousarray(matrix))
    # heads[k] for node k >= 1 is its head node, 0 = the artificial root (node k is
    # token k - 1); convert to window offsets with the root pointing to itself
    return [i if heads[i + 1] == 0 else int(heads[i + 1]) - 1 for i in range(n)]
