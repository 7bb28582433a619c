"""Tests for the BIO and tree decoders in ``spacy_lisa.decoding``."""

from __future__ import annotations

import itertools
from typing import List, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import (
    bio_to_spans,
    dense_viterbi,
    is_tree,
    is_valid_bio,
    is_valid_start,
    is_valid_transition,
)

from spacy_lisa.decoding.bio import bio_labels, paths_to_spans
from spacy_lisa.decoding.frames import decode_frames
from spacy_lisa.decoding.tree import mst_decode
from spacy_lisa.decoding.viterbi import estimate_transitions, greedy_paths, viterbi_paths

LABELS = ("O", "B-ARG0", "I-ARG0", "B-ARG1", "I-ARG1", "B-V", "I-V")


def viterbi_decode_batch(scores, lengths, labels, trans=None, start=None):
    """:func:`viterbi_paths`' rows as lists cut to each frame's length."""
    paths = viterbi_paths(scores, lengths, labels, trans, start)
    return [row[:n] for row, n in zip(paths.tolist(), lengths, strict=True)]


def viterbi_decode(log_probs, labels, transitions=None, start=None) -> List[int]:
    """One frame's scores [T, L] through :func:`viterbi_paths`."""
    scores = np.asarray(log_probs, dtype=np.float64)
    return viterbi_decode_batch(scores[None], [scores.shape[0]], labels, transitions, start)[0]


def greedy_decode(log_probs) -> List[int]:
    """One frame's scores [T, L] through :func:`greedy_paths`."""
    scores = np.asarray(log_probs)
    return greedy_paths(scores[None], [scores.shape[0]])[0].tolist()


def path_score(path: Sequence[int], unary: np.ndarray, trans=None, start=None) -> float:
    score = float(sum(unary[t, j] for t, j in enumerate(path)))
    if trans is not None:
        score += float(sum(trans[a, b] for a, b in zip(path, path[1:], strict=False)))
    if start is not None:
        score += float(start[path[0]])
    return score


def brute_force(unary: np.ndarray, labels: Sequence[str], trans=None, start=None) -> float:
    best = -np.inf
    for path in itertools.product(range(len(labels)), repeat=unary.shape[0]):
        if is_valid_bio([labels[j] for j in path]):
            best = max(best, path_score(path, unary, trans, start))
    return best


def test_bio_masks_agree_with_bio_helpers() -> None:
    info = bio_labels(LABELS)
    trans_mask, start_mask = info.transition_mask, info.start_mask
    for i, prev in enumerate(LABELS):
        assert (start_mask[i] == 0) == is_valid_start(prev)
        for j, tag in enumerate(LABELS):
            assert (trans_mask[i, j] == 0) == is_valid_transition(prev, tag), (prev, tag)
    # the cached masks are read-only so no caller can corrupt the cache
    assert not trans_mask.flags.writeable


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=1, max_value=12),
    st.integers(min_value=0, max_value=2**32 - 1),
    st.booleans(),
)
def test_viterbi_never_emits_invalid_bio(n_tokens: int, seed: int, with_trans: bool) -> None:
    rng = np.random.default_rng(seed)
    # scores favouring I- tags make an unconstrained decoder emit invalid sequences
    unary = rng.normal(size=(n_tokens, len(LABELS))) * 3
    unary[:, [2, 4, 6]] += 2.0
    trans = rng.normal(size=(len(LABELS), len(LABELS))) if with_trans else None
    start = rng.normal(size=len(LABELS)) if with_trans else None
    path = viterbi_decode(unary, LABELS, trans, start)
    assert len(path) == n_tokens
    assert is_valid_bio([LABELS[j] for j in path])


@pytest.mark.parametrize("seed", range(25))
def test_viterbi_equals_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = ("O", "B-A", "I-A", "B-B", "I-B")
    n_tokens = int(rng.integers(1, 5))
    unary = rng.normal(size=(n_tokens, len(labels))) * 2
    trans = rng.normal(size=(len(labels), len(labels))) if seed % 2 else None
    start = rng.normal(size=len(labels)) if seed % 2 else None
    path = viterbi_decode(unary, labels, trans, start)
    assert is_valid_bio([labels[j] for j in path])
    assert path_score(path, unary, trans, start) == pytest.approx(
        brute_force(unary, labels, trans, start)
    )


def test_viterbi_fixes_what_greedy_gets_wrong() -> None:
    labels = ("O", "B-A", "I-A")
    # greedy: I-A first (invalid); best valid: B-A I-A
    unary = np.log(np.array([[0.1, 0.4, 0.5], [0.1, 0.1, 0.8]]))
    assert greedy_decode(unary) == [2, 2]
    assert viterbi_decode(unary, labels) == [1, 2]


def test_viterbi_handles_minus_inf_and_empty() -> None:
    labels = ("O", "B-A", "I-A")
    unary = np.full((3, 3), -np.inf)
    path = viterbi_decode(unary, labels)  # every label masked: still a valid sequence
    assert is_valid_bio([labels[j] for j in path])
    assert viterbi_decode(np.zeros((0, 3)), labels) == []
    assert greedy_decode(np.zeros((0, 3))) == []


def test_viterbi_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="E251"):
        viterbi_decode(np.zeros((2, 4)), ("O", "B-A", "I-A"))
    with pytest.raises(ValueError, match="E251"):
        viterbi_decode(np.array([[0.0, np.nan, 0.0]]), ("O", "B-A", "I-A"))
    with pytest.raises(ValueError, match="E251"):
        viterbi_decode(np.zeros((2, 3)), ("O", "B-A", "I-A"), transitions=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="E251"):
        viterbi_decode(np.zeros((2, 1)), ("I-A",))


def test_estimate_transitions_by_hand() -> None:
    labels = ("O", "B-A", "I-A")
    sequences: List[List[str]] = [
        ["B-A", "I-A", "O"],
        ["O", "B-A", "I-A", "I-A"],
        [],  # empty sequences contribute nothing
    ]
    trans, start = estimate_transitions(sequences, labels, smoothing=1.0)
    # transition counts (row = previous): O->B-A 1; B-A->I-A 2; I-A->O 1, I-A->I-A 1
    # plus 1 each: O row [1, 2, 1]/4; B-A row [1, 1, 3]/5; I-A row [2, 1, 2]/5
    expected = np.array([[1, 2, 1], [1, 1, 3], [2, 1, 2]]) / np.array([[4], [5], [5]])
    np.testing.assert_allclose(np.exp(trans), expected)
    # starts: B-A 1, O 1 -> [2, 2, 1] / 5
    np.testing.assert_allclose(np.exp(start), [0.4, 0.4, 0.2])
    # the invalid O -> I-A only got smoothing mass
    assert trans[0, 2] == pytest.approx(np.log(0.25))


def test_estimate_transitions_unsmoothed_and_errors() -> None:
    labels = ("O", "B-A", "I-A")
    trans, start = estimate_transitions([["O", "O"]], labels, smoothing=0.0)
    assert trans[0, 0] == 0.0 and np.isneginf(trans[0, 1])
    np.testing.assert_allclose(np.exp(trans[1]), [1 / 3] * 3)  # unseen row: uniform
    assert start[0] == 0.0
    # -inf transitions still decode to a valid sequence
    path = viterbi_decode(np.zeros((3, 3)), labels, trans, start)
    assert is_valid_bio([labels[j] for j in path])
    with pytest.raises(ValueError, match="E250"):
        estimate_transitions([["O", "B-X"]], labels)
    with pytest.raises(ValueError, match="E250"):
        estimate_transitions([], labels, smoothing=-1.0)


def log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def test_mst_repairs_argmax_cycle_and_extra_roots() -> None:
    # per-token argmax: 0 -> 1, 1 -> 0 (a cycle), 2 -> 2 and 3 -> 3 (two roots)
    scores = np.array(
        [
            [0.0, 5.0, 1.0, 0.0],
            [5.0, 0.0, 1.0, 0.0],
            [0.0, 1.0, 4.0, 0.0],
            [0.0, 0.0, 1.0, 4.0],
        ]
    )
    argmax = scores.argmax(axis=1).tolist()
    assert not is_tree(argmax)
    heads = mst_decode(scores)
    assert is_tree(heads)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=30), st.integers(min_value=0, max_value=2**32 - 1))
def test_mst_always_yields_a_tree(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(n, n)) * 4
    scores[np.arange(n), np.arange(n)] += 3.0  # many would-be roots
    heads = mst_decode(scores)
    assert len(heads) == n
    assert is_tree(heads)


@pytest.mark.parametrize("seed", range(15))
def test_mst_is_the_best_single_root_tree(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    scores = rng.normal(size=(n, n)) * 3
    logp = log_softmax(scores)
    best = max(
        sum(logp[i, h] for i, h in enumerate(heads))
        for heads in itertools.product(range(n), repeat=n)
        if is_tree(heads)
    )
    heads = mst_decode(scores)
    assert is_tree(heads)
    assert sum(logp[i, h] for i, h in enumerate(heads)) == pytest.approx(best)


def test_mst_small_and_masked_inputs() -> None:
    assert mst_decode(np.array([[0.3]])) == [0]
    assert mst_decode(np.zeros((0, 0))) == []
    masked = np.full((3, 3), -np.inf)
    masked[0, 1] = masked[1, 1] = masked[2, 1] = 0.0  # only token 1 may be a head
    assert mst_decode(masked) == [1, 1, 1]
    with pytest.raises(ValueError, match="E251"):
        mst_decode(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="E251"):
        mst_decode(np.array([[np.nan]]))


def test_viterbi_batch_equals_one_frame_at_a_time() -> None:
    rng = np.random.default_rng(7)
    lengths = [5, 1, 0, 9, 3, 9, 2]
    unary = rng.normal(size=(len(lengths), 9, len(LABELS)))
    for f, n in enumerate(lengths):
        unary[f, n:] = np.nan  # padding is never read (NaN would be rejected if it were)
    trans = rng.normal(size=(len(LABELS), len(LABELS)))
    start = rng.normal(size=len(LABELS))
    batch = viterbi_decode_batch(unary, lengths, LABELS, trans, start)
    expected = [viterbi_decode(unary[f, :n], LABELS, trans, start) for f, n in enumerate(lengths)]
    assert batch == expected
    assert [len(path) for path in batch] == lengths
    # and each is the best valid path, not just the same as the one-frame decoder
    for f, n in enumerate(lengths[:2]):
        score = path_score(batch[f], unary[f, :n], trans, start)
        assert score == pytest.approx(brute_force(unary[f, :n], LABELS, trans, start))


def test_viterbi_batch_rejects_bad_lengths() -> None:
    with pytest.raises(ValueError, match="lengths"):
        viterbi_decode_batch(np.zeros((2, 3, 3)), [1], ("O", "B-A", "I-A"))
    with pytest.raises(ValueError, match="lengths"):
        viterbi_decode_batch(np.zeros((1, 3, 3)), [4], ("O", "B-A", "I-A"))
    with pytest.raises(ValueError, match="NaN"):
        viterbi_decode_batch(np.full((1, 3, 3), np.nan), [2], ("O", "B-A", "I-A"))


# ------------------------------------------------------------------ batch decoding
CONLL05_LABELS = ("O",) + tuple(
    f"{p}-{r}"
    for r in (
        "A0 A1 A2 A3 A4 AM-ADV AM-DIS AM-LOC AM-MNR AM-MOD AM-NEG AM-TMP C-A1 R-A0 R-A1 V"
    ).split()
    for p in ("B", "I")
)


def random_batch(rng, labels, n_frames, n_tokens, *, ties=False):
    lengths = rng.integers(0, n_tokens + 1, size=n_frames)
    lengths[0] = n_tokens
    if ties:  # few distinct values: many exact ties between paths
        scores = rng.integers(-2, 1, size=(n_frames, n_tokens, len(labels))).astype("f")
    else:
        scores = (rng.normal(size=(n_frames, n_tokens, len(labels))) * 3).astype("f")
    scores[rng.random(scores.shape) < 0.05] = -np.inf  # masked labels
    for f, n in enumerate(lengths):
        scores[f, n:] = np.nan  # padding is never read
    return scores, lengths


@pytest.mark.parametrize("seed", range(12))
def test_viterbi_batch_equals_reference_decoder(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # a realistic label set, a tiny one, and one with I- tags lacking their B- tag
    labels = [CONLL05_LABELS, LABELS, ("I-A", "O", "B-B", "I-B", "I-C", "V")][seed % 3]
    scores, lengths = random_batch(rng, labels, 40, 12, ties=seed % 4 == 3)
    trans = start = None
    if seed % 2:
        trans = rng.normal(size=(len(labels), len(labels))).astype("f")
        trans[rng.random(trans.shape) < 0.1] = -np.inf
        start = rng.normal(size=len(labels)).astype("f")
    if seed % 4 == 3 and trans is not None:  # ties in the transitions too
        trans, start = np.round(trans), np.round(start)
    expected = dense_viterbi(scores, lengths, labels, trans, start)
    assert viterbi_decode_batch(scores, lengths, labels, trans, start) == expected


@pytest.mark.parametrize("seed", range(6))
def test_viterbi_pruning_on_peaked_scores(seed: int) -> None:
    """Scores like a trained model's (one confident label per token): most previous labels
    are skipped, the paths stay exactly the reference's."""
    rng = np.random.default_rng(300 + seed)
    labels = CONLL05_LABELS
    scores, lengths = random_batch(rng, labels, 50, 15)
    gold = np.where(
        rng.random(scores.shape[:2]) < 0.7, 0, rng.integers(0, len(labels), scores.shape[:2])
    )
    np.put_along_axis(scores, gold[..., None], 10.0, axis=2)
    trans, start = estimate_transitions([["O", "B-A0", "I-A0", "O", "B-V", "B-A1"]], labels)
    trans, start = 0.5 * trans.astype("f"), 0.5 * start.astype("f")
    expected = dense_viterbi(scores, lengths, labels, trans, start)
    assert viterbi_decode_batch(scores, lengths, labels, trans, start) == expected


@pytest.mark.parametrize("seed", range(4))
def test_viterbi_many_frames_peaked_and_flat(seed: int) -> None:
    """A trained model's batch: hundreds of frames of very different lengths (frames end
    while others run on), mostly peaked scores (each frame keeps a few candidate labels
    of its own) with flat frames and flat positions among them (most labels can win:
    the dense max takes over). Exactly the reference's paths."""
    rng = np.random.default_rng(500 + seed)
    labels = CONLL05_LABELS
    scores, lengths = random_batch(rng, labels, 300, 30, ties=seed == 3)
    peaked = rng.random(300) < 0.9
    gold = np.where(
        rng.random(scores.shape[:2]) < 0.6, 0, rng.integers(0, len(labels), scores.shape[:2])
    )
    boost = np.zeros(scores.shape, dtype="f")
    np.put_along_axis(boost, gold[..., None], 12.0, axis=2)
    scores = np.where(peaked[:, None, None], scores + boost, scores)
    scores[:, rng.random(30) < 0.15] = -4.0  # flat positions: every label ties
    trans, start = estimate_transitions(
        [["O", "B-A0", "I-A0", "O", "B-V", "B-A1", "I-A1"], ["B-A1", "O", "B-V"]], labels
    )
    trans, start = 0.25 * trans.astype("f"), 0.25 * start.astype("f")
    expected = dense_viterbi(scores, lengths, labels, trans, start)
    paths = viterbi_paths(scores, lengths, labels, trans, start)
    assert [row[:n] for row, n in zip(paths.tolist(), lengths, strict=True)] == expected
    assert all((row[n:] == -1).all() for row, n in zip(paths, lengths, strict=True))


def test_viterbi_checks_real_positions_only() -> None:
    labels = ("O", "B-A", "I-A")
    scores = np.zeros((2, 4, 3), dtype="f")
    scores[0, 3] = np.inf  # padding of frame 0 (length 3): never read
    scores[1, 2:] = np.nan  # padding of frame 1 (length 2)
    assert viterbi_paths(scores, [3, 2], labels).tolist() == [[0, 0, 0, -1], [0, 0, -1, -1]]
    for bad in (np.inf, np.nan):
        broken = scores.copy()
        broken[1, 1, 2] = bad  # a real position
        with pytest.raises(ValueError, match="NaN or \\+inf"):
            viterbi_paths(broken, [3, 2], labels)
    minus_inf = scores.copy()
    minus_inf[0, 1, 0] = -np.inf  # allowed: a masked label
    assert viterbi_paths(minus_inf, [3, 2], labels)[0, 1] != 0


@pytest.mark.parametrize("seed", range(10))
def test_viterbi_paths_brute_force_with_padding(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    labels = ("O", "B-A", "I-A", "B-V", "I-V")
    scores, lengths = random_batch(rng, labels, 6, 4)
    trans = rng.normal(size=(5, 5)) if seed % 2 else None
    start = rng.normal(size=5) if seed % 2 else None
    paths = viterbi_paths(scores, lengths, labels, trans, start)
    for f, n in enumerate(lengths):
        assert (paths[f, n:] == -1).all()
        path = paths[f, :n].tolist()
        assert is_valid_bio([labels[j] for j in path])
        if n:
            unary = np.maximum(scores[f, :n].astype("d"), -1e30)
            assert path_score(path, unary, trans, start) == pytest.approx(
                brute_force(unary, labels, trans, start)
            )


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_paths_to_spans_equals_bio_to_spans(seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = LABELS + ("V", "X-Y")  # tags that are neither B- nor I- read as outside
    info = bio_labels(labels)
    lengths = rng.integers(0, 9, size=5)
    paths = rng.integers(0, len(labels), size=(5, 8))  # any sequence, invalid BIO too
    paths[np.arange(8)[None, :] >= lengths[:, None]] = -1
    frame, start, end, type_id = paths_to_spans(paths, info)
    got = [
        (b, e, info.types[k])
        for b, e, k in zip(start.tolist(), end.tolist(), type_id.tolist(), strict=True)
    ]
    expected = [
        span
        for f, n in enumerate(lengths)
        for span in bio_to_spans([labels[j] for j in paths[f, :n]])
    ]
    assert got == expected
    assert frame.tolist() == [
        f for f, n in enumerate(lengths) for _ in bio_to_spans([labels[j] for j in paths[f, :n]])
    ]


def reference_frames(scores, positions, lengths, offsets, labels, decoding, trans, start, weight):
    """``lisa_srl._annotate_group``'s frame loop before commit 38431e7, as the reference."""
    shifted = scores - scores.max(axis=-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    # the predicate token may only be B-V / I-V (a role across it would be dropped)
    for f, p in enumerate(positions):
        for k, label in enumerate(labels):
            if label not in ("B-V", "I-V"):
                logp[f, p, k] = -1e9
    t = s = None
    if trans is not None and weight:
        t, s = weight * np.asarray(trans, dtype="f"), weight * np.asarray(start, dtype="f")
    if decoding == "viterbi":
        paths = viterbi_decode_batch(logp, lengths, labels, t, s)
    else:
        paths = [greedy_decode(logp[f, :n]) for f, n in enumerate(lengths)]
    frames = []
    for p, w_start, best in zip(positions, offsets, paths, strict=True):
        predicate, roles = (w_start + p, w_start + p + 1), []
        for b, e, label in bio_to_spans([labels[k] for k in best]):
            if label == "V":
                if b <= p < e:
                    predicate = (w_start + b, w_start + e)
                continue
            if b <= p < e:
                continue
            roles.append([w_start + b, w_start + e, label])
        frames.append((predicate, roles))
    return frames


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("decoding", ["viterbi", "greedy"])
def test_decode_frames_equals_the_frame_loop(seed: int, decoding: str) -> None:
    rng = np.random.default_rng(200 + seed)
    labels = CONLL05_LABELS if seed % 2 else LABELS
    n_frames, n_tokens = 30, 10
    lengths = rng.integers(1, n_tokens + 1, size=n_frames)
    positions = rng.integers(0, lengths)
    offsets = rng.integers(0, 50, size=n_frames)
    scores = (rng.normal(size=(n_frames, n_tokens, len(labels))) * 2).astype("f")
    v = labels.index("B-V")
    scores[np.arange(n_frames), positions, v] += 3.0  # mostly a V span on the predicate
    a0 = "A0" if seed % 2 else "ARG0"
    trans, start = estimate_transitions([["O", "B-V", "I-V", f"B-{a0}", f"I-{a0}"]], labels)
    trans_list, start_list = trans.tolist(), start.tolist()  # as stored in the cfg
    weight = [0.5, 0.0, 1.0, 0.5][seed % 4]
    got = decode_frames(
        scores,
        positions,
        lengths,
        labels,
        offsets=offsets,
        decoding=decoding,
        transitions=trans_list,
        start=start_list,
        transition_weight=weight,
    )
    expected = reference_frames(
        scores, positions, lengths, offsets, labels, decoding, trans_list, start_list, weight
    )
    assert got == expected
    # no transitions stored: the hard constraints alone
    got = decode_frames(scores, positions, lengths, labels, transitions=[], start=[])
    expected = reference_frames(
        scores, positions, lengths, [0] * n_frames, labels, "viterbi", None, None, 1.0
    )
    assert got == expected


def test_decode_frames_edges() -> None:
    assert decode_frames(np.zeros((0, 3, len(LABELS))), [], [], LABELS) == []
    with pytest.raises(ValueError, match="E251"):
        decode_frames(np.zeros((1, 3, 2)), [0], [3], LABELS)
    with pytest.raises(ValueError, match="E024"):
        decode_frames(np.zeros((1, 3, len(LABELS))), [0], [3], LABELS, decoding="beam")
    info = bio_labels(LABELS)
    assert info.types == ("ARG0", "ARG1", "V") and info.verb_type == 2
    assert info.inside_prev.tolist() == [[1, 2], [3, 4], [5, 6]]


def test_no_role_is_decoded_across_its_own_predicate() -> None:
    """The model scores ARG1 over tokens 0-3, predicate (token 2) included: the frame
    keeps its predicate and the best roles around it instead of dropping the span."""
    labels = LABELS
    scores = np.full((1, 4, len(labels)), -5.0, dtype="f")
    scores[0, 0, labels.index("B-ARG1")] = 5.0
    for t in (1, 2, 3):
        scores[0, t, labels.index("I-ARG1")] = 5.0
    scores[0, 2, labels.index("B-V")] = 2.0  # second choice at the predicate
    for decoding in ("viterbi", "greedy"):
        [(predicate, roles)] = decode_frames(scores, [2], [4], labels, decoding=decoding)
        assert predicate == (2, 3)
        assert roles[0] == [0, 2, "ARG1"]
        assert all(not (b <= 2 < e) for b, e, _ in roles)


MODIFIER_LABELS = LABELS + ("B-ARGM-TMP", "I-ARGM-TMP")


def two_arg0_scores() -> np.ndarray:
    """One frame of 6 tokens, predicate at token 2: ARG0 is each token's best label at
    tokens 0 and 4-5, more clearly at 4-5; ARG1 is the second choice at token 0."""
    labels = MODIFIER_LABELS
    scores = np.full((1, 6, len(labels)), -4.0, dtype="f")
    scores[0, :, labels.index("O")] = 0.0
    scores[0, 0, labels.index("B-ARG0")] = 3.0
    scores[0, 0, labels.index("B-ARG1")] = 2.5
    scores[0, 2, labels.index("B-V")] = 5.0
    scores[0, 4, labels.index("B-ARG0")] = 6.0
    scores[0, 5, labels.index("I-ARG0")] = 6.0
    return scores


@pytest.mark.parametrize("decoding", ["viterbi", "greedy"])
def test_a_core_role_is_decoded_once_per_frame(decoding: str) -> None:
    """Two ARG0 spans: the one that wins by more keeps ARG0, the other takes its next
    best label; without the constraint both are ARG0."""
    scores = two_arg0_scores()
    labels = MODIFIER_LABELS
    [(_, plain)] = decode_frames(scores.copy(), [2], [6], labels, decoding=decoding)
    assert plain == [[0, 1, "ARG0"], [4, 6, "ARG0"]]
    [(predicate, roles)] = decode_frames(
        scores.copy(), [2], [6], labels, decoding=decoding, unique_core=True
    )
    assert predicate == (2, 3)
    assert roles == [[0, 1, "ARG1"], [4, 6, "ARG0"]]


def test_only_numbered_arguments_are_unique() -> None:
    """Modifiers repeat in PropBank (two ARGM-TMP in a frame are kept)."""
    labels = MODIFIER_LABELS
    scores = np.full((1, 5, len(labels)), -4.0, dtype="f")
    scores[0, :, labels.index("O")] = 0.0
    scores[0, 2, labels.index("B-V")] = 5.0
    for t in (0, 4):
        scores[0, t, labels.index("B-ARGM-TMP")] = 3.0
    [(_, roles)] = decode_frames(scores, [2], [5], labels, unique_core=True)
    assert roles == [[0, 1, "ARGM-TMP"], [4, 5, "ARGM-TMP"]]


def test_unique_core_roles_changes_only_frames_with_a_repeated_role() -> None:
    """A batch: the frame without a repeated role decodes as without the constraint, and
    the re-decoded frame as it does alone."""
    labels = MODIFIER_LABELS
    rng = np.random.default_rng(3)
    other = rng.normal(size=(1, 6, len(labels))).astype("f")
    other[0, :, [labels.index("B-ARG0"), labels.index("I-ARG0")]] = -9.0  # no ARG0 at all
    other[0, 1, labels.index("B-V")] = 9.0
    batch = np.concatenate([other, two_arg0_scores()])
    got = decode_frames(batch, [1, 2], [6, 6], labels, unique_core=True)
    assert got[0] == decode_frames(other, [1], [6], labels)[0]
    assert got[1] == decode_frames(two_arg0_scores(), [2], [6], labels, unique_core=True)[0]


def test_a_repeated_core_role_left_after_the_last_round_is_dropped(monkeypatch) -> None:
    """With no rounds of re-decoding left, the span that loses the role is read as O."""
    import spacy_lisa.decoding.frames as decoding_module

    monkeypatch.setattr(decoding_module, "_MAX_ROUNDS", 0)
    [(_, roles)] = decode_frames(two_arg0_scores(), [2], [6], MODIFIER_LABELS, unique_core=True)
    assert roles == [[4, 6, "ARG0"]]
