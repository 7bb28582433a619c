"""Constrained BIO decoding of role scores (plain numpy, its loop compiled by numba).

- :func:`viterbi_paths`: the best BIO role sequence of every frame of a batch at once
  (``[F, T]`` ids) under hard BIO constraints, optionally with transition/start
  log-probabilities estimated from the training data (:func:`estimate_transitions`), as
  in LISA §7 (Table 7: +0.2 to +0.6 F1 over greedy).
- :func:`greedy_paths`: per-token argmax (the baseline).

Convention: ``transitions[i, j]`` is the score of tag ``labels[j]`` following tag
``labels[i]`` (row = previous tag).

Constrained Viterbi spends its time in a loop over tokens whose every step is a max over
~100 previous labels for ~100 next labels: in numpy each step was a dozen small array
calls, and decoding took a fifth of ``nlp.pipe`` (BENCHMARKS.md, Decoding). Numba
compiles the loop (:func:`_viterbi_frames`) once per process (``cache=True``: the machine
code is kept on disk beside this module, or in numba's user cache directory where that is
read-only). Its arithmetic is the numpy decoder's, in the same order and in float64, so
the paths are identical to it, ties included (the lowest previous label id wins, as
``argmax``).
"""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Sequence, Tuple

import numpy as np
from numba import njit

from ..device import to_host
from ..errors import Errors
from .bio import BioLabels, bio_labels
from .scores import FLOOR, floored, host_scores


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


def _lengths(lengths: Sequence[int], n_frames: int, n_tokens: int) -> np.ndarray:
    sizes = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if sizes.shape[0] != n_frames or (sizes < 0).any() or (sizes > n_tokens).any():
        raise ValueError(
            Errors.E251.format(
                what="lengths", message=f"expected {n_frames} values in [0, {n_tokens}]"
            )
        )
    return sizes


def _viterbi_tables(
    info: BioLabels, transitions: Optional[np.ndarray], start: Optional[np.ndarray]
) -> Tuple[np.ndarray, np.ndarray]:
    """Transition ``[L, L]`` and start ``[L]`` log-scores: hard BIO masks plus the soft
    scores given, checked."""
    n_labels = len(info.labels)
    trans_mask, start_mask = info.transition_mask, info.start_mask
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
        trans = trans + floored(soft, "transitions")
    first = start_mask.copy()
    if start is not None:
        soft_start = np.asarray(start, dtype=np.float64)
        if soft_start.shape != (n_labels,):
            raise ValueError(
                Errors.E251.format(
                    what="start", message=f"expected shape ({n_labels},), got {soft_start.shape}"
                )
            )
        first = first + floored(soft_start, "start")
    return trans, first


def viterbi_paths(
    log_probs: np.ndarray,
    lengths: Sequence[int],
    labels: Sequence[str],
    transitions: Optional[np.ndarray] = None,
    start: Optional[np.ndarray] = None,
) -> np.ndarray:
    """Best valid BIO paths of many frames: ``log_probs`` ``[F, T, L]`` padded to the
    longest frame, ``lengths`` the real length of each. Returns ``[F, T]`` label ids,
    ``-1`` past each frame's length (padding is never read, it may hold anything).

    The loop over frames and tokens is compiled (:func:`_viterbi_frames`). The hard BIO
    constraints are used structurally: a label that is not ``I-`` may follow any label,
    an ``I-X`` only ``B-X``/``I-X`` (a max over 2 candidates), which gives exactly the
    result of a dense max over all previous labels, ties included (lowest previous label
    id wins). A step's max skips the previous labels that cannot win (exact too).
    """
    info = bio_labels(tuple(labels))
    n_labels = len(info.labels)
    raw = host_scores(log_probs, n_labels)
    n_frames, n_tokens = raw.shape[:2]
    sizes = _lengths(lengths, n_frames, n_tokens)
    trans, first = _viterbi_tables(info, transitions, start)
    paths = np.full((n_frames, n_tokens), -1, dtype=np.int64)
    if n_frames == 0 or n_tokens == 0:
        return paths
    _check_real(raw, sizes)
    if raw.dtype not in (np.float32, np.float64):
        raw = raw.astype(np.float64)
    _viterbi_frames(
        np.ascontiguousarray(raw),
        sizes,
        np.ascontiguousarray(first),
        np.ascontiguousarray(trans),
        # int64 already (cached per label set): no copy
        np.asarray(info.free, dtype=np.int64),
        np.asarray(info.inside, dtype=np.int64),
        np.asarray(info.inside_prev, dtype=np.int64),
        FLOOR,
        paths,
    )
    return paths


def _check_real(scores: np.ndarray, sizes: np.ndarray) -> None:
    """Raise E251 if a real position of ``scores`` [F, T, L] (the first ``sizes[f]``
    of frame f) holds NaN or +inf; padding may hold anything."""
    if np.isfinite(scores.sum()):  # one pass when nothing is NaN or infinite anywhere
        return
    real = scores[np.arange(scores.shape[1])[None, :] < sizes[:, None]]
    if np.isnan(real).any() or np.isposinf(real).any():
        raise ValueError(Errors.E251.format(what="log_probs", message="contains NaN or +inf"))


def greedy_paths(log_probs: np.ndarray, lengths: Sequence[int]) -> np.ndarray:
    """Per-token argmax of ``log_probs`` ``[F, T, L]``, ``-1`` past each length (may be
    invalid BIO)."""
    scores = np.asarray(to_host(log_probs))
    if scores.ndim != 3:
        raise ValueError(
            Errors.E251.format(what="log_probs", message=f"expected 3 dims, got {scores.shape}")
        )
    n_frames, n_tokens = scores.shape[:2]
    sizes = _lengths(lengths, n_frames, n_tokens)
    if scores.shape[2] == 0:
        return np.full((n_frames, n_tokens), -1, dtype=np.int64)
    paths = scores.argmax(axis=2).astype(np.int64)
    paths[np.arange(n_tokens)[None, :] >= sizes[:, None]] = -1
    return paths


# --- the compiled loop (numba: the helpers are inlined, so it runs as one function) -----


@njit(cache=True, nogil=True, inline="always")
def _first_max(values: np.ndarray) -> int:  # pragma: no cover (compiled)
    """Index of the first maximum, as ``argmax`` (without its NaN checks: none here)."""
    best = 0
    for i in range(1, values.shape[0]):
        if values[i] > values[best]:
            best = i
    return best


@njit(cache=True, nogil=True, inline="always")
def _best_previous(  # pragma: no cover (compiled)
    delta: np.ndarray, trans: np.ndarray, j: int, candidates: np.ndarray, n: int
) -> Tuple[float, int]:
    """Max of ``delta[p] + trans[p, j]`` over the first ``n`` ``candidates`` (ascending
    ids) and its argument: the first maximum wins, as ``argmax``."""
    arg = candidates[0]
    best = delta[arg] + trans[arg, j]
    for c in range(1, n):
        p = candidates[c]
        value = delta[p] + trans[p, j]
        if value > best:
            best = value
            arg = p
    return best, arg


@njit(cache=True, nogil=True, inline="always")
def _best_free_transitions(  # pragma: no cover (compiled)
    trans: np.ndarray, free: np.ndarray
) -> np.ndarray:
    """Each previous label's best transition into a free label (the pruning bound)."""
    rowmax = np.empty(trans.shape[0])
    for p in range(trans.shape[0]):
        best = -np.inf
        for jj in range(free.shape[0]):
            value = trans[p, free[jj]]
            if value > best:
                best = value
        rowmax[p] = best
    return rowmax


@njit(cache=True, nogil=True, inline="always")
def _candidates(  # pragma: no cover (compiled)
    delta: np.ndarray,
    trans: np.ndarray,
    free: np.ndarray,
    rowmax: np.ndarray,
    candidates: np.ndarray,
    n_free: int,  # the sizes come in: read from the shapes here, the loop ran 1% slower
    n_labels: int,
) -> int:
    """Write into ``candidates`` (ascending ids) the previous labels that can still win a
    free label at this step, and return how many. p is skipped when ``delta[p]`` plus its
    best transition (``rowmax[p]``) is below the lowest score that the best label so far
    reaches in any free label (exact: a trained model's peaked scores leave 1 to 10 of
    ~100 labels)."""
    top = _first_max(delta)
    bound = np.inf
    for jj in range(n_free):
        value = delta[top] + trans[top, free[jj]]
        if value < bound:
            bound = value
    n = 0
    for p in range(n_labels):  # ascending ids: ties go to the lowest
        if delta[p] + rowmax[p] >= bound:
            candidates[n] = p
            n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _backtrack(  # pragma: no cover (compiled)
    delta: np.ndarray, back: np.ndarray, size: int, paths: np.ndarray, f: int
) -> None:
    """Frame ``f``'s best path into ``paths[f, :size]``, from its best last label back
    through the best previous labels ``back``."""
    current = _first_max(delta)
    for t in range(size - 1, -1, -1):
        paths[f, t] = current
        if t > 0:
            current = back[t, current]


@njit(cache=True, nogil=True)
def _viterbi_frames(  # pragma: no cover (compiled: numba runs it, coverage cannot see it)
    scores: np.ndarray,
    sizes: np.ndarray,
    first: np.ndarray,
    trans: np.ndarray,
    free: np.ndarray,
    inside: np.ndarray,
    inside_prev: np.ndarray,
    floor: float,
    paths: np.ndarray,
) -> None:
    """Best valid path of every frame, written into ``paths`` ``[F, T]`` (left as it is
    past each frame's size).

    ``scores`` ``[F, T, L]`` (any float type; read as float64, clamped at ``floor``),
    ``sizes`` ``[F]``, ``first`` ``[L]`` start scores, ``trans`` ``[L, L]`` transition
    scores (row = previous; hard BIO masks included), ``free`` the labels that may follow
    any label, ``inside`` the ``I-`` labels and ``inside_prev`` ``[n_inside, k]`` the
    labels each may follow. A free label's max runs over :func:`_candidates` only."""
    n_frames, n_tokens, n_labels = scores.shape
    width = inside_prev.shape[1]
    rowmax = _best_free_transitions(trans, free)
    delta = np.empty(n_labels)
    step = np.empty(n_labels)
    back = np.empty((n_tokens, n_labels), dtype=np.int64)
    candidates = np.arange(n_labels)
    n_free = free.shape[0]
    n_inside = inside.shape[0]
    for f in range(n_frames):
        size = sizes[f]
        if size == 0:
            continue
        for j in range(n_labels):
            delta[j] = first[j] + max(np.float64(scores[f, 0, j]), floor)
        for t in range(1, size):
            n_candidates = _candidates(delta, trans, free, rowmax, candidates, n_free, n_labels)
            for jj in range(n_free):
                j = free[jj]
                step[j], back[t, j] = _best_previous(delta, trans, j, candidates, n_candidates)
            for ii in range(n_inside):
                j = inside[ii]
                step[j], back[t, j] = _best_previous(delta, trans, j, inside_prev[ii], width)
            for j in range(n_labels):
                delta[j] = step[j] + max(np.float64(scores[f, t, j]), floor)
        _backtrack(delta, back, size, paths, f)
