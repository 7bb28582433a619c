"""The compiled inner loop of :func:`spacy_lisa.pipeline.viterbi.viterbi_paths`.

Constrained Viterbi spends its time in a loop over tokens whose every step is a max over
~100 previous labels for ~100 next labels: in numpy each step was a dozen small array
calls, and decoding took a fifth of ``nlp.pipe`` (BENCHMARKS.md, Decoding). Numba
compiles the loop once per process (``cache=True``: the machine code is kept on disk
beside this module, or in numba's user cache directory where that is read-only).

The arithmetic is the numpy decoder's, in the same order and in float64, so the paths
are identical to it, ties included (the lowest previous label id wins, as ``argmax``).
"""

from __future__ import annotations

from typing import Tuple

import numpy as np
from numba import njit

# Scores below this are clamped to it. A finite floor (instead of -inf) keeps every path
# and every tree reachable, so the decoders always return a well-formed answer even when
# a caller masks labels or arcs with -inf; hard constraints use a real -inf on top.
# (Defined here, where numba reads it as a compile-time constant; viterbi.py uses it too.)
FLOOR = -1e30


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


@njit(cache=True, nogil=True)
def viterbi_frames(  # pragma: no cover (compiled: numba runs it, coverage cannot see it)
    scores: np.ndarray,
    sizes: np.ndarray,
    first: np.ndarray,
    trans: np.ndarray,
    free: np.ndarray,
    inside: np.ndarray,
    inside_prev: np.ndarray,
    paths: np.ndarray,
) -> None:
    """Best valid path of every frame, written into ``paths`` ``[F, T]`` (left as it is
    past each frame's size).

    ``scores`` ``[F, T, L]`` (any float type; read as float64 and floored), ``sizes``
    ``[F]``, ``first`` ``[L]`` start scores, ``trans`` ``[L, L]`` transition scores (row =
    previous; hard BIO masks included), ``free`` the labels that may follow any label,
    ``inside`` the ``I-`` labels and ``inside_prev`` ``[n_inside, k]`` the labels each may
    follow. A next label's max skips the previous labels that cannot win any next label
    at this step (pruning): p is skipped when ``delta[p]`` plus p's best transition
    is below the lowest score that the best label so far reaches in any next label
    (exact: a trained model's peaked scores leave 1 to 10 of ~100 labels)."""
    n_frames, n_tokens, n_labels = scores.shape
    n_free = free.shape[0]
    n_inside = inside.shape[0]
    width = inside_prev.shape[1]
    # rowmax[p]: p's best transition into a free label (the pruning bound)
    rowmax = np.empty(n_labels)
    for p in range(n_labels):
        best = -np.inf
        for jj in range(n_free):
            value = trans[p, free[jj]]
            if value > best:
                best = value
        rowmax[p] = best
    delta = np.empty(n_labels)
    step = np.empty(n_labels)
    back = np.empty((n_tokens, n_labels), dtype=np.int64)
    candidates = np.arange(n_labels)
    for f in range(n_frames):
        size = sizes[f]
        if size == 0:
            continue
        for j in range(n_labels):
            delta[j] = first[j] + max(np.float64(scores[f, 0, j]), FLOOR)
        for t in range(1, size):
            top = _first_max(delta)
            floor = np.inf
            for jj in range(n_free):
                value = delta[top] + trans[top, free[jj]]
                if value < floor:
                    floor = value
            n_candidates = 0
            for p in range(n_labels):  # ascending ids: ties go to the lowest
                if delta[p] + rowmax[p] >= floor:
                    candidates[n_candidates] = p
                    n_candidates += 1
            for jj in range(n_free):
                j = free[jj]
                step[j], back[t, j] = _best_previous(delta, trans, j, candidates, n_candidates)
            for ii in range(n_inside):
                j = inside[ii]
                step[j], back[t, j] = _best_previous(delta, trans, j, inside_prev[ii], width)
            for j in range(n_labels):
                delta[j] = step[j] + max(np.float64(scores[f, t, j]), FLOOR)
        current = _first_max(delta)
        for t in range(size - 1, -1, -1):
            paths[f, t] = current
            if t > 0:
                current = back[t, current]
