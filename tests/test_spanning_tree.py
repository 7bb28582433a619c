"""Tests for the maximum spanning tree solver (``spacy_lisa.decoding.spanning_tree``) and
:func:`mst_decode` on top of it: the best tree by exhaustive search over every tree of
small sentences (ties included), and the trees of ``ufal.chu_liu_edmonds`` (which the
solver replaces) where that is installed."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from oracles import is_tree

from spacy_lisa.decoding import tree
from spacy_lisa.decoding.scores import log_softmax
from spacy_lisa.decoding.spanning_tree import maximum_spanning_tree
from spacy_lisa.decoding.tree import mst_decode

UFAL_REASON = (
    "ufal.chu_liu_edmonds is not installed (it has wheels up to CPython 3.12): the "
    "exhaustive-search tests still check the trees"
)


@cache
def single_root_trees(n: int) -> np.ndarray:
    """Every single-root tree over ``n`` tokens as rows of heads (root = own index)."""
    heads = np.indices((n,) * n).reshape(n, -1).T
    rows = np.arange(heads.shape[0])[:, None]
    reached = np.broadcast_to(np.arange(n), heads.shape)
    for _ in range(n):  # after n steps every token sits on its cycle or its root
        reached = heads[rows, reached]
    one_root = (heads == np.arange(n)).sum(axis=1) == 1
    return heads[one_root & (heads[rows, reached] == reached).all(axis=1)]


@cache
def rooted_trees(n: int) -> np.ndarray:
    """Every tree over nodes ``0..n-1`` rooted at node 0, as rows of heads (-1 for 0)."""
    if n == 1:
        return np.full((1, 1), -1, dtype=np.int64)
    heads = np.indices((1,) + (n,) * (n - 1)).reshape(n, -1).T  # node 0 "heads" itself
    rows = np.arange(heads.shape[0])[:, None]
    reached = np.broadcast_to(np.arange(n), heads.shape)
    for _ in range(n):  # node 0 points to itself here: every path to it stays there
        reached = heads[rows, reached]
    trees = heads[(reached == 0).all(axis=1)]
    trees[:, 0] = -1
    return trees


def tree_scores(scores: np.ndarray, trees: np.ndarray, first: int = 0) -> np.ndarray:
    """Each tree's score: the sum of ``scores[d, heads[d]]`` over nodes ``d >= first``."""
    nodes = np.arange(first, scores.shape[0])
    return scores[nodes, trees[:, first:]].sum(axis=1)


@pytest.mark.parametrize("n", range(1, 8))
def test_mst_decode_finds_the_best_single_root_tree(n: int) -> None:
    """Integer logits from a small range: many rows hold tied heads, many trees tie."""
    rng = np.random.default_rng(n)
    trees = single_root_trees(n)
    for _ in range(40 if n < 7 else 10):
        logits = rng.integers(-2, 3, size=(n, n)).astype(np.float64)
        logp = log_softmax(logits, axis=1)
        heads = mst_decode(logits)
        assert is_tree(heads), (logits, heads)
        best = tree_scores(logp, trees).max()
        assert tree_scores(logp, np.array([heads])) == pytest.approx(best, rel=0, abs=1e-9)


@pytest.mark.parametrize("n", range(1, 8))
def test_solver_finds_the_best_tree_with_missing_arcs(n: int) -> None:
    """The solver alone (any number of children of node 0), integer scores with ties
    and NaN / -inf arcs, which no tree may use."""
    rng = np.random.default_rng(100 + n)
    trees = rooted_trees(n)
    for _ in range(40):
        scores = rng.integers(-2, 3, size=(n, n)).astype(np.float64)
        scores[rng.random((n, n)) < 0.2] = np.nan
        scores[rng.random((n, n)) < 0.1] = -np.inf
        scores[1:, 0] = np.where(np.isfinite(scores[1:, 0]), scores[1:, 0], 0.0)  # a tree exists
        possible = np.where(np.isnan(scores), -np.inf, scores)
        all_scores = tree_scores(possible, trees, first=1)
        heads = maximum_spanning_tree(scores)
        assert heads[0] == -1
        assert (trees == heads).all(axis=1).any(), (scores, heads)  # a tree
        best = all_scores.max()
        assert tree_scores(possible, heads[None], first=1)[0] == best, (scores, heads)


def test_solver_breaks_ties_towards_the_lowest_head() -> None:
    # every tree ties: each node takes node 0, the lowest index
    assert maximum_spanning_tree(np.zeros((5, 5))).tolist() == [-1, 0, 0, 0, 0]
    # node 2's best heads are 1 and 3 (tied): 1 wins
    scores = np.zeros((4, 4))
    scores[2, 1] = scores[2, 3] = 1.0
    assert maximum_spanning_tree(scores).tolist() == [-1, 0, 1, 0]


def test_solver_rejects_bad_input() -> None:
    assert maximum_spanning_tree(np.array([[np.nan]])).tolist() == [-1]
    unreachable = np.full((3, 3), np.nan)
    unreachable[1, 2] = unreachable[2, 1] = 1.0  # 1 and 2 only head each other
    for bad in (unreachable, np.zeros((2, 3)), np.zeros((0, 0)), np.full((2, 2), np.inf)):
        with pytest.raises(ValueError, match="E251"):
            maximum_spanning_tree(bad)


def random_arcs(rng: np.random.Generator, n: int) -> np.ndarray:
    """Continuous scores (no ties) for ``n`` nodes, a fifth of the arcs missing (NaN),
    node 0 a possible head of every node (so a tree exists)."""
    scores = rng.normal(size=(n, n)) * 3
    scores[rng.random((n, n)) < 0.2] = np.nan
    scores[1:, 0] = rng.normal(size=n - 1) * 3
    return scores


def test_solver_builds_the_trees_of_ufal() -> None:
    ufal = pytest.importorskip("ufal.chu_liu_edmonds", reason=UFAL_REASON)
    rng = np.random.default_rng(0)
    for n in list(range(1, 40)) * 5 + [100, 150, 250]:
        scores = random_arcs(rng, n)
        expected, _ = ufal.chu_liu_edmonds(np.ascontiguousarray(scores))
        assert maximum_spanning_tree(scores).tolist() == list(expected), scores


def test_mst_decode_builds_the_trees_it_built_with_ufal(monkeypatch: pytest.MonkeyPatch) -> None:
    """mst_decode with the solver it had before (ufal's) and with its own: the same
    single-root trees on logits with many would-be roots."""
    ufal = pytest.importorskip("ufal.chu_liu_edmonds", reason=UFAL_REASON)
    rng = np.random.default_rng(1)
    cases = []
    for n in list(range(1, 40)) * 5 + [100, 200]:
        logits = rng.normal(size=(n, n)) * 4
        logits[np.arange(n), np.arange(n)] += rng.uniform(0, 6)
        cases.append(logits)
    ours = [mst_decode(logits) for logits in cases]
    monkeypatch.setattr(tree, "maximum_spanning_tree", lambda m: ufal.chu_liu_edmonds(m)[0])
    assert [mst_decode(logits) for logits in cases] == ours
