"""From role logits to frames, and from head scores to a tree (plain numpy, no spaCy).

- :func:`decode_frames`: role logits of a batch -> per frame the predicate and role
  spans, as ``lisa_srl`` writes them (log-softmax, Viterbi or greedy from
  :mod:`spacy_lisa.pipeline.viterbi`, BIO -> spans on arrays: :func:`paths_to_spans`,
  :func:`spans_to_frames`).
- :func:`mst_decode`: maximum spanning tree over a head-score matrix with exactly one
  root, through ``ufal.chu_liu_edmonds``.

Convention: ``head_scores[i, j]`` is the score of "the head of token ``i`` is token
``j``", ``j == i`` meaning ``i`` is the root.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

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
    :func:`spacy_lisa.bio.bio_to_spans` reads tags (lenient: an ``I-X`` that continues no
    ``X`` span opens one). Returns ``(frame, start, end, type_id)`` arrays, ordered by
    frame then start; ``end`` is exclusive, ``type_id`` indexes ``info.types``."""
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
) -> List[FrameSpans]:
    """Decode every frame of a batch in one go: role logits ``[F, T, L]`` (padded) ->
    per frame ``((pred_start, pred_end), [[start, end, label], ...])``.

    Exactly what ``lisa_srl`` wrote frame by frame: log-softmax over labels (once, on the
    whole batch), then Viterbi with hard BIO constraints plus ``transition_weight`` times
    the stored ``transitions``/``start`` log-probabilities (none when either is empty or
    the weight is 0), or greedy argmax; then BIO -> spans on arrays
    (:func:`paths_to_spans`) and the predicate / role rules of :func:`spans_to_frames`.
    The predicate token is constrained to ``B-V``/``I-V``, so no role covers it.
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
        paths = viterbi_paths(log_probs, lengths, label_tuple, trans, first)
    elif decoding == "greedy":
        paths = greedy_paths(log_probs, lengths)
    else:
        raise ValueError(Errors.E251.format(what="decoding", message=f"unknown: {decoding!r}"))
    return spans_to_frames(paths_to_spans(paths, info), positions, info, offsets)


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
