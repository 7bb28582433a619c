"""From head scores to a tree (plain numpy, no spaCy): :func:`mst_decode`, the maximum
spanning tree with exactly one root, solved by :func:`.spanning_tree.maximum_spanning_tree`
(Chu-Liu-Edmonds compiled by numba).

Convention: ``head_scores[i, j]`` is the score of "the head of token ``i`` is token
``j``", ``j == i`` meaning ``i`` is the root.
"""

from __future__ import annotations

from typing import List

import numpy as np

from ..errors import Errors
from .scores import floored, log_softmax
from .spanning_tree import maximum_spanning_tree

# Log-probabilities below this are clamped in mst_decode: the single-root penalty is
# derived from the score range, and a bounded range keeps that penalty numerically exact.
_MST_LOGP_FLOOR = -1e4


def mst_decode(head_scores: np.ndarray) -> List[int]:
    """Heads (window offsets, root = own index) of the maximum spanning tree with
    exactly one root for ``head_scores`` (``[T, T]`` logits, ``[i, j]`` = head of ``i``
    is ``j``, ``j == i`` = root)."""
    logits = np.asarray(head_scores, dtype=np.float64)
    if logits.ndim != 2 or logits.shape[0] != logits.shape[1]:
        raise ValueError(
            Errors.E251.format(what="head_scores", message=f"expected [T, T], got {logits.shape}")
        )
    logits = floored(logits, "head_scores")
    n = logits.shape[0]
    if n == 0:
        return []
    if n == 1:
        return [0]
    # log-softmax over candidate heads: rows become comparable log-probabilities, so the
    # tree maximises the joint probability of the heads rather than raw logit sums
    logp = np.maximum(log_softmax(logits, axis=1), _MST_LOGP_FLOOR)
    root = np.diag(logp).copy()
    # Single root: every arc from the artificial root pays a penalty larger than any
    # possible difference between two trees' other arcs, so the MST takes as few root
    # arcs as possible (one) and, among single-root trees, the best one. Exact, and one
    # solver call instead of one per candidate root.
    penalty = n * (float(logp.max()) - float(logp.min())) + 1.0
    matrix = np.full((n + 1, n + 1), np.nan, dtype=np.float64)
    matrix[1:, 1:] = logp
    matrix[np.arange(1, n + 1), np.arange(1, n + 1)] = np.nan  # no self-loops
    matrix[1:, 0] = root - penalty
    heads = maximum_spanning_tree(matrix)
    # heads[k] for node k >= 1 is its head node, 0 = the artificial root (node k is
    # token k - 1); convert to window offsets with the root pointing to itself
    return [i if heads[i + 1] == 0 else int(heads[i + 1]) - 1 for i in range(n)]
