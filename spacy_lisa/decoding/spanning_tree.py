"""The maximum spanning arborescence of a dense score matrix (Chu-Liu-Edmonds, compiled
by numba): :func:`maximum_spanning_tree`.

Convention (the one of ``ufal.chu_liu_edmonds``, which this module replaces): node 0 is
the root, ``scores[d, h]`` is the score of the arc "the head of node ``d`` is node
``h``"; NaN or -inf means no such arc, +inf is rejected; the diagonal and row 0 are no
arcs. The result ``heads[d]`` is the head of node ``d``, ``heads[0] == -1``.

The kernel (:func:`_chu_liu_edmonds`) keeps every node's best incoming arc, contracts
one cycle of those arcs at a time into one node (its incoming arcs re-scored by what
they displace inside the cycle), and expands the contractions in reverse once no cycle
is left. A contraction reads the cycle's rows and columns and writes one of each (O(n *
cycle size)); the cycle sizes sum to under 2n, so a sentence costs O(n^2). Ties go to
the lowest node index (a node's best head, a cycle's entering arc); the cycle contracted
first is the one reached first from the lowest node. Compiled once per process and
cached on disk (``cache=True``), as :mod:`.viterbi`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import Errors

# what the kernel returns (checked in the kernel: a separate numpy pass over the matrix
# cost more than the solver itself for short sentences)
_SOLVED, _POSINF, _UNREACHABLE = 0, 1, 2


def maximum_spanning_tree(scores: np.ndarray) -> np.ndarray:
    """Heads (``int64``, ``heads[0] == -1``) of the maximum spanning tree rooted at node
    0 of ``scores`` ``[N, N]`` (``[d, h]`` = score of head ``h`` for node ``d``; NaN or
    -inf = no arc). E251 on a bad shape, +inf, or when some node cannot be reached from
    node 0."""
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
        message = f"expected [N, N] with N >= 1, got {matrix.shape}"
        raise ValueError(Errors.E251.format(what="scores", message=message))
    heads = np.empty(matrix.shape[0], dtype=np.int64)
    status = _chu_liu_edmonds(np.ascontiguousarray(matrix), heads)
    if status != _SOLVED:
        message = "contains +inf" if status == _POSINF else "some node has no path from node 0"
        raise ValueError(Errors.E251.format(what="scores", message=message))
    return heads


# --- the compiled kernel ---------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _best_head(w: np.ndarray, active: np.ndarray, d: int) -> int:  # pragma: no cover
    """The active head of the highest score for node ``d`` (the lowest index on a tie),
    -1 if none has a finite score."""
    best = -1
    value = -np.inf
    for h in range(w.shape[1]):
        if active[h] and h != d and w[d, h] > value:
            value = w[d, h]
            best = h
    return best


@njit(cache=True, nogil=True, inline="always")
def _find_cycle(best: np.ndarray, active: np.ndarray, mark: np.ndarray) -> int:  # pragma: no cover
    """A node on a cycle of the best-head arcs (the first cycle reached from the lowest
    node), -1 if they form a tree."""
    mark[:] = -1
    for start in range(1, best.shape[0]):
        if not active[start] or mark[start] != -1:
            continue
        v = start
        while v != 0 and mark[v] == -1:
            mark[v] = start
            v = best[v]
        if v != 0 and mark[v] == start:  # this walk came back to itself
            return v
    return -1


@njit(cache=True, nogil=True)
def _chu_liu_edmonds(scores: np.ndarray, heads: np.ndarray) -> int:  # pragma: no cover
    """Write the maximum spanning tree of ``scores`` (see the module) into ``heads`` and
    return ``_SOLVED``; ``_POSINF`` or ``_UNREACHABLE`` (``heads`` undefined) when an
    arc scores +inf or no spanning tree exists.

    Working state over the current nodes ("slots": a contracted cycle takes its lowest
    member's slot): ``w[d, h]`` the arc's score, ``arc_dep``/``arc_head`` the original
    arc it stands for. Each slot also has a label in the contraction forest: original
    node ``i`` is ``i``, the ``k``-th cycle ``n + k``, ``parent`` links a member to its
    cycle."""
    n = scores.shape[0]
    w = np.empty((n, n))
    arc_dep = np.empty((n, n), dtype=np.int64)
    arc_head = np.empty((n, n), dtype=np.int64)
    for d in range(n):
        for h in range(n):
            value = scores[d, h]
            if value == np.inf:
                return _POSINF
            w[d, h] = -np.inf if (d == 0 or h == d or np.isnan(value)) else value
            arc_dep[d, h] = d
            arc_head[d, h] = h
    active = np.ones(n, dtype=np.bool_)
    label = np.arange(n)
    parent = np.full(2 * n, -1, dtype=np.int64)
    # cycle k's members are members[cycle_start[k]:cycle_start[k + 1]] (forest labels),
    # each with the original arc it kept inside the cycle
    cycle_start = np.zeros(n + 1, dtype=np.int64)
    members = np.empty(2 * n, dtype=np.int64)
    member_dep = np.empty(2 * n, dtype=np.int64)
    member_head = np.empty(2 * n, dtype=np.int64)
    best = np.zeros(n, dtype=np.int64)
    for d in range(1, n):
        best[d] = _best_head(w, active, d)
        if best[d] < 0:
            return _UNREACHABLE
    mark = np.empty(n, dtype=np.int64)
    in_cycle = np.zeros(n, dtype=np.bool_)
    row = np.empty(n)
    row_dep = np.empty(n, dtype=np.int64)
    row_head = np.empty(n, dtype=np.int64)
    kept = np.empty(n)
    n_cycles = 0
    n_members = 0
    while True:
        v = _find_cycle(best, active, mark)
        if v < 0:
            break
        size = 1
        u = best[v]
        while u != v:
            size += 1
            u = best[u]
        cycle = np.empty(size, dtype=np.int64)
        cycle[0] = v
        for i in range(1, size):
            cycle[i] = best[cycle[i - 1]]
        cycle.sort()  # ascending slots: ties go to the lowest
        c = cycle[0]
        f = n + n_cycles
        for i in range(size):
            u = cycle[i]
            in_cycle[u] = True
            kept[u] = w[u, best[u]]
            members[n_members] = label[u]
            member_dep[n_members] = arc_dep[u, best[u]]
            member_head[n_members] = arc_head[u, best[u]]
            parent[label[u]] = f
            n_members += 1
        n_cycles += 1
        cycle_start[n_cycles] = n_members
        # arcs into the cycle: the score of entering at u is its own minus the cycle
        # arc it displaces (the cycle's total is the same for all, so it is left out)
        for x in range(n):
            row[x] = -np.inf
            row_dep[x] = -1
            row_head[x] = -1
            if not active[x] or in_cycle[x]:
                continue
            for i in range(size):
                u = cycle[i]
                value = w[u, x] - kept[u]
                if value > row[x]:
                    row[x] = value
                    row_dep[x] = arc_dep[u, x]
                    row_head[x] = arc_head[u, x]
        # arcs out of the cycle: each outside node keeps its best head inside it
        for x in range(1, n):
            if not active[x] or in_cycle[x]:
                continue
            top = c
            for i in range(1, size):
                if w[x, cycle[i]] > w[x, top]:
                    top = cycle[i]
            w[x, c] = w[x, top]
            arc_dep[x, c] = arc_dep[x, top]
            arc_head[x, c] = arc_head[x, top]
            if in_cycle[best[x]]:
                # its best head was in the cycle: the cycle is now (the max is the same)
                best[x] = c
        for x in range(n):
            w[c, x] = row[x]
            arc_dep[c, x] = row_dep[x]
            arc_head[c, x] = row_head[x]
        for i in range(1, size):
            active[cycle[i]] = False
        for i in range(size):
            in_cycle[cycle[i]] = False
        label[c] = f
        best[c] = _best_head(w, active, c)
        if best[c] < 0:
            return _UNREACHABLE
    # expand: the arc entering each remaining node, then each cycle from the last one,
    # keeping all its arcs but the one of the member that the entering arc reaches
    entry = np.full(n + n_cycles, -1, dtype=np.int64)  # forest label -> entered node
    heads[:] = -1
    for s in range(1, n):
        if active[s]:
            heads[arc_dep[s, best[s]]] = arc_head[s, best[s]]
            entry[label[s]] = arc_dep[s, best[s]]
    for k in range(n_cycles - 1, -1, -1):
        f = n + k
        entered = entry[f]
        broken = entered
        while parent[broken] != f:
            broken = parent[broken]
        for m in range(cycle_start[k], cycle_start[k + 1]):
            if members[m] == broken:
                entry[members[m]] = entered
            else:
                entry[members[m]] = member_dep[m]
                heads[member_dep[m]] = member_head[m]
    return _SOLVED
