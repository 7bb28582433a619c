"""Decoders used by the ``lisa_srl`` component at inference (plain numpy, no spaCy).

- :func:`viterbi_decode`: best BIO role sequence of one frame under hard BIO constraints,
  optionally with transition/start log-probabilities estimated from the training data
  (:func:`estimate_transitions`), as in LISA §7 (Table 7: +0.2 to +0.6 F1 over greedy).
- :func:`greedy_decode`: per-token argmax (the baseline).
- :func:`mst_decode`: maximum spanning tree over a head-score matrix with exactly one
  root, through ``ufal.chu_liu_edmonds``.

Conventions: ``transitions[i, j]`` is the score of tag ``labels[j]`` following tag
``labels[i]`` (row = previous tag); ``head_scores[i, j]`` is the score of "the head of
token ``i`` is token ``j``", ``j == i`` meaning ``i`` is the root.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from ufal.chu_liu_edmonds import chu_liu_edmonds

from ..errors import Errors

# Scores below this are clamped to it. A finite floor (instead of -inf) keeps every path
# and every tree reachable, so the decoders always return a well-formed answer even when
# a caller masks labels or arcs with -inf; hard constraints use a real -inf on top.
_FLOOR = -1e30
# Log-probabilities below this are clamped in mst_decode: the single-root penalty is
# derived from the score range, and a bounded range keeps that penalty numerically exact.
_MST_LOGP_FLOOR = -1e4


def estimate_transitions(
    sequences: Iterable[Sequence[str]],
    labels: Sequence[str],
    smoothing: float = 1.0,
) -> Tuple[np.ndarray, np.ndarray]:
    """Log transition (``[L, L]``, row = previous tag) and log start (``[L]``)
    probabilities from training BIO sequences, add-``smoothing`` estimated.

    Invalid BIO transitions are not forbidden here (the decoder enforces them); never
    seen in valid data, they only receive smoothing mass. A previous tag never seen
    with ``smoothing=0`` gets a uniform row (no evidence either way).
    """
    if smoothing < 0:
        raise ValueError(Errors.E250.format(message=f"smoothing must be >= 0, got {smoothing}"))
    index: Dict[str, int] = {label: i for i, label in enumerate(labels)}
    n = len(index)
    if n != len(labels):
        raise ValueError(Errors.E250.format(message="labels contain duplicates"))
    counts = np.zeros((n, n), dtype=np.float64)
    starts = np.zeros((n,), dtype=np.float64)
    for seq in sequences:
        try:
            ids = [index[tag] for tag in seq]
        except KeyError as err:
            raise ValueError(
                Errors.E250.format(message=f"tag {err.args[0]!r} is not among the labels")
            ) from None
        if not ids:
            continue
        starts[ids[0]] += 1
        # np.add.at accumulates repeated (prev, next) pairs, unlike fancy-index +=
        np.add.at(counts, (ids[:-1], ids[1:]), 1)
    counts += smoothing
    starts += smoothing
    return _log_normalise(counts), _log_normalise(starts[None, :])[0]


def _log_normalise(counts: np.ndarray) -> np.ndarray:
    """Row-wise log(counts / row sum); all-zero rows become uniform."""
    totals = counts.sum(axis=-1, keepdims=True)
    n = counts.shape[-1]
    probs = np.where(totals > 0, counts / np.where(totals > 0, totals, 1.0), 1.0 / max(n, 1))
    with np.errstate(divide="ignore"):  # zero counts with smoothing=0 are log(0) = -inf
        return np.log(probs)


@lru_cache(maxsize=64)
def _bio_masks(labels: Tuple[str, ...]) -> Tuple[np.ndarray, np.ndarray]:
    """Additive masks (0 allowed, -inf forbidden) for transitions ``[L, L]`` and starts
    ``[L]`` under hard BIO constraints; cached because every frame of every doc reuses
    the component's one label tuple."""
    is_inside = np.array([label.startswith("I-") for label in labels], dtype=bool)
    is_begin = np.array([label.startswith("B-") for label in labels], dtype=bool)
    # the type after the B-/I- prefix; other tags (O, ...) get a type no I- tag can have
    types = np.array(
        [
            label[2:] if (b or i) else None
            for label, b, i in zip(labels, is_begin, is_inside, strict=True)
        ],
        dtype=object,
    )
    same_type = types[:, None] == types[None, :]  # [prev, next]
    continues = (is_begin | is_inside)[:, None] & same_type
    allowed = ~is_inside[None, :] | continues
    trans_mask = np.where(allowed, 0.0, -np.inf)
    start_mask = np.where(is_inside, -np.inf, 0.0)
    trans_mask.setflags(write=False)
    start_mask.setflags(write=False)
    return trans_mask, start_mask


def _floored(values: np.ndarray, what: str) -> np.ndarray:
    """``values`` with -inf (and anything below) clamped to the finite floor; NaN and
    +inf are rejected because they make every path's score meaningless."""
    if np.isnan(values).any() or np.isposinf(values).any():
        raise ValueError(Errors.E251.format(what=what, message="contains NaN or +inf"))
    return np.maximum(values, _FLOOR)


def viterbi_decode(
    log_probs: np.ndarray,
    labels: Sequence[str],
    transitions: Optional[np.ndarray] = None,
    start: Optional[np.ndarray] = None,
) -> List[int]:
    """Best label index sequence for ``log_probs`` (``[T, L]``) that is valid BIO (no
    ``I-X`` unless after ``B-X``/``I-X``, no ``I-`` first). ``transitions`` (``[L, L]``,
    row = previous) and ``start`` (``[L]``) are added log-scores, e.g. from
    :func:`estimate_transitions`. O(T·L²), vectorised over labels."""
    scores = np.asarray(log_probs, dtype=np.float64)
    if scores.ndim != 2:
        raise ValueError(
            Errors.E251.format(
                what="log_probs",
                message=f"expected shape [tokens, {len(labels)}], got {scores.shape}",
            )
        )
    # one frame of the batch decoder, which checks the label axis and the values
    return viterbi_decode_batch(scores[None], [scores.shape[0]], labels, transitions, start)[0]


def viterbi_decode_batch(
    log_probs: np.ndarray,
    lengths: Sequence[int],
    labels: Sequence[str],
    transitions: Optional[np.ndarray] = None,
    start: Optional[np.ndarray] = None,
    *,
    chunk_size: int = 16,
) -> List[List[int]]:
    """:func:`viterbi_decode` for many frames at once: ``log_probs`` ``[F, T, L]`` padded
    to the longest frame, ``lengths`` the real length of each (positions past it are
    ignored). One numpy step per token position for a chunk of ``chunk_size``
    length-sorted frames: 16 keeps the ``[chunk, L, L]`` candidates in cache (L ~ 100) and
    decodes about 1.8x faster than one frame at a time did (500 frames, 103 labels)."""
    label_tuple = tuple(labels)
    n_labels = len(label_tuple)
    scores = np.asarray(log_probs, dtype=np.float64)
    if scores.ndim != 3 or scores.shape[2] != n_labels:
        raise ValueError(
            Errors.E251.format(
                what="log_probs",
                message=f"expected shape [frames, tokens, {n_labels}], got {scores.shape}",
            )
        )
    n_frames, n_tokens = scores.shape[:2]
    sizes = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if sizes.shape[0] != n_frames or (sizes < 0).any() or (sizes > n_tokens).any():
        raise ValueError(
            Errors.E251.format(
                what="lengths", message=f"expected {n_frames} values in [0, {n_tokens}]"
            )
        )
    trans, first_bias = _viterbi_tables(label_tuple, transitions, start)
    # only the real positions are checked: padding may hold anything
    real = np.arange(n_tokens)[None, :] < sizes[:, None]
    scores = _floored(np.where(real[..., None], scores, 0.0), "log_probs")
    paths: List[List[int]] = [[] for _ in range(n_frames)]
    # length-sorted chunks pad less
    order = np.argsort(sizes, kind="stable")
    for begin in range(0, n_frames, chunk_size):
        idx = order[begin : begin + chunk_size]
        idx = idx[sizes[idx] > 0]
        if idx.size == 0:
            continue
        span = int(sizes[idx].max())
        decoded = _viterbi_chunk(scores[idx, :span], sizes[idx], trans, first_bias)
        for f, path in zip(idx, decoded, strict=True):
            paths[int(f)] = path
    return paths


def _viterbi_tables(
    labels: Tuple[str, ...], transitions: Optional[np.ndarray], start: Optional[np.ndarray]
) -> Tuple[np.ndarray, np.ndarray]:
    """Transition ``[L, L]`` and start ``[L]`` log-scores: hard BIO masks plus the soft
    scores given, checked."""
    n_labels = len(labels)
    trans_mask, start_mask = _bio_masks(labels)
    if not np.isfinite(start_mask).any():
        raise ValueError(
            Errors.E251.format(what="labels", message="all are I- tags, no valid BIO sequence")
        )
    trans = trans_mask.copy()
    if transitions is not None:
        soft = np.asarray(transitions, dtype=np.float64)
        if soft.shape != (n_labels, n_labels):
            raise ValueError(
                Errors.E251.format(
                    what="transitions",
                    message=f"expected shape ({n_labels}, {n_labels}), got {soft.shape}",
                )
            )
        trans = trans + _floored(soft, "transitions")
    first = start_mask.copy()
    if start is not None:
        soft_start = np.asarray(start, dtype=np.float64)
        if soft_start.shape != (n_labels,):
            raise ValueError(
                Errors.E251.format(
                    what="start", message=f"expected shape ({n_labels},), got {soft_start.shape}"
                )
            )
        first = first + _floored(soft_start, "start")
    return trans, first


def _viterbi_chunk(
    scores: np.ndarray, sizes: np.ndarray, trans: np.ndarray, first: np.ndarray
) -> List[List[int]]:
    """Viterbi over ``scores`` ``[F, T, L]`` (every size >= 1, T = max size)."""
    n_frames, n_tokens, n_labels = scores.shape
    rows = np.arange(n_frames)
    # delta[f, j]: best score of frame f's prefix ending in label j; back[t, f, j]: the
    # previous label on that prefix. Finished frames keep their delta unchanged. The
    # candidates are laid out [F, next, prev] so that the max runs over the contiguous
    # axis (twice as fast as reducing over the middle one).
    trans_t = np.ascontiguousarray(trans.T)  # [next, prev]
    delta = first[None, :] + scores[:, 0]
    back = np.zeros((n_tokens, n_frames, n_labels), dtype=np.int64)
    for t in range(1, n_tokens):
        cand = delta[:, None, :] + trans_t[None, :, :]  # [F, next, prev]
        back[t] = cand.argmax(axis=2)
        best = cand.max(axis=2)
        delta = np.where((t < sizes)[:, None], best + scores[:, t], delta)
    path = np.zeros((n_frames, n_tokens), dtype=np.int64)
    current = delta.argmax(axis=1)
    for t in range(n_tokens - 1, -1, -1):
        inside = t < sizes  # frames whose sequence has a position t
        path[inside, t] = current[inside]
        if t > 0:
            current = np.where(inside, back[t, rows, current], current)
    return [path[f, : int(sizes[f])].tolist() for f in range(n_frames)]


def greedy_decode(log_probs: np.ndarray) -> List[int]:
    """Per-token argmax of ``log_probs`` (``[T, L]``); may be invalid BIO."""
    scores = np.asarray(log_probs)
    if scores.ndim != 2:
        raise ValueError(
            Errors.E251.format(what="log_probs", message=f"expected 2 dims, got {scores.shape}")
        )
    return [int(i) for i in scores.argmax(axis=1)] if scores.shape[0] else []


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
