"""Confidence scores: every role span, predicate and roleset ``lisa_srl`` writes has a
probability a user can threshold (docs/usage.md, Confidence), and ``min_score`` drops
the roles below it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span

from spacy_lisa.decoding.bio import bio_labels, paths_to_spans
from spacy_lisa.decoding.confidence import calibrated, predicate_scores, span_scores
from spacy_lisa.decoding.scores import log_softmax
from spacy_lisa.formats import doc_to_jsonl_records

SAVED = Path(__file__).parent / "fixtures" / "saved_pipeline"
TEXTS = json.loads((SAVED / "expected.json").read_text())["texts"]
LABELS = ("O", "B-ARG0", "I-ARG0", "B-ARG1", "I-ARG1", "B-V", "B-ARGM-NEG")


def brute_force(probs: np.ndarray, length: int, start: int, end: int, kind: str) -> float:
    """The mass of every label sequence over ``length`` tokens that holds the span
    ``[start, end)`` of ``kind``: B- at its start, I- after, no I- right after it."""
    total = 0.0
    for seq in itertools.product(range(len(LABELS)), repeat=length):
        names = [LABELS[i] for i in seq]
        inside = names[start] == f"B-{kind}" and all(
            n == f"I-{kind}" for n in names[start + 1 : end]
        )
        if inside and (end == length or names[end] != f"I-{kind}"):
            total += float(np.prod([probs[t, i] for t, i in enumerate(seq)]))
    return total


@pytest.mark.parametrize("temperature", [1.0, 0.6, 2.5])
def test_a_span_scores_the_mass_of_every_labelling_that_holds_it(temperature):
    rng = np.random.default_rng(7)
    info = bio_labels(LABELS)
    logits = rng.normal(scale=2.0, size=(2, 5, len(LABELS)))
    lengths = np.array([5, 4])  # the second frame's window is one token shorter (padding)
    # spans: whole window, ending at the window's end, one token, a type without I-
    spans = [(0, 0, 3, "ARG0"), (0, 3, 5, "ARG1"), (1, 1, 2, "ARG0"), (1, 2, 4, "ARG1")]
    spans += [(1, 0, 1, "ARGM-NEG")]
    arrays = tuple(
        np.array(column)
        for column in zip(*[(f, s, e, info.types.index(k)) for f, s, e, k in spans], strict=True)
    )
    got = span_scores(logits, arrays, lengths, info, temperature)
    probs = np.exp(log_softmax(logits / temperature, axis=-1))
    expected = [brute_force(probs[f, : lengths[f]], lengths[f], s, e, k) for f, s, e, k in spans]
    np.testing.assert_allclose(got, expected, rtol=1e-9)


def test_a_higher_temperature_makes_a_sure_span_less_sure():
    info = bio_labels(LABELS)
    logits = np.full((1, 3, len(LABELS)), -2.0)
    logits[0, 0, 1] = logits[0, 1, 2] = 3.0  # B-ARG0 I-ARG0, then O
    logits[0, 2, 0] = 3.0
    paths = np.array([[1, 2, 0]])
    spans = paths_to_spans(paths, info)
    scores = [span_scores(logits, spans, np.array([3]), info, t)[0] for t in (0.5, 1, 2, 4)]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0.99 and scores[-1] < 0.5


def test_a_predicate_scores_the_mass_of_the_predicate_tags():
    logits = np.log(np.array([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]]))
    got = predicate_scores(logits, np.array([1, 0]), np.array([0, 2]))  # tags 0, 2 mark one
    np.testing.assert_allclose(got, [0.8, 0.4])


@pytest.fixture(scope="module")
def nlp():
    return spacy.load(SAVED / "pipeline")


def test_every_frame_the_component_writes_is_scored(nlp):
    docs = list(nlp.pipe(TEXTS))
    frames = [frame for doc in docs for frame in doc._.srl_frames]
    roles = [role for frame in frames for role in frame.roles]
    assert len(frames) > 10 and len(roles) > 10
    assert all(0 <= f.score <= 1 for f in frames)
    # a roleset the classifier did not choose (a lemma it never saw: lemma.01) has none
    chosen = [f.roleset_score for f in frames if f.roleset_score is not None]
    assert len(chosen) > len(frames) / 2 and all(0 < s <= 1 for s in chosen)
    assert all(0 < r._.srl_score <= 1 for r in roles)
    # the spans of doc.spans["srl"] are the same spans, with the same scores
    assert sorted(s._.srl_score for doc in docs for s in doc.spans["srl"]) == sorted(
        r._.srl_score for r in roles
    )
    # in to_dict() and the JSON lines of predict / serve / Ray
    frame = next(f for f in frames if f.roleset_score is not None and f.roles)
    view = frame.to_dict()
    assert view["score"] == frame.score and view["roleset_score"] == frame.roleset_score
    assert [r["score"] for r in view["roles"]] == [r._.srl_score for r in frame.roles]
    record = next(rec for doc in docs for rec in doc_to_jsonl_records(doc) if rec["frames"])
    assert all("score" in f and all("score" in r for r in f["roles"]) for f in record["frames"])


def test_scores_survive_serialisation(nlp):
    doc = nlp(TEXTS[0])
    scores = [r._.srl_score for f in doc._.srl_frames for r in f.roles]
    assert scores
    again = next(DocBin(docs=[doc], store_user_data=True).get_docs(nlp.vocab))
    assert [r._.srl_score for f in again._.srl_frames for r in f.roles] == scores
    assert [s._.srl_score for s in again.spans["srl"]] == [s._.srl_score for s in doc.spans["srl"]]
    assert Doc(nlp.vocab).from_bytes(doc.to_bytes())._.srl_frames[0].score == (
        doc._.srl_frames[0].score
    )


def test_min_score_drops_exactly_the_roles_below_it(nlp):
    every = {
        (i, f.predicate.start, r.start, r.end, r.label_): r._.srl_score
        for i, doc in enumerate(nlp.pipe(TEXTS))
        for f in doc._.srl_frames
        for r in f.roles
    }
    threshold = float(np.median(list(every.values())))
    sure = spacy.load(
        SAVED / "pipeline", config={"components": {"lisa_srl": {"min_score": threshold}}}
    )
    kept = {
        (i, f.predicate.start, r.start, r.end, r.label_)
        for i, doc in enumerate(sure.pipe(TEXTS))
        for f in doc._.srl_frames
        for r in f.roles
    }
    assert kept == {key for key, score in every.items() if score >= threshold}
    assert 0 < len(kept) < len(every)


def test_a_higher_temperature_lowers_the_scores_of_sure_roles(nlp):
    hot = spacy.load(
        SAVED / "pipeline", config={"components": {"lisa_srl": {"score_temperature": 3.0}}}
    )
    sure = [r._.srl_score for f in nlp(TEXTS[0])._.srl_frames for r in f.roles]
    cooled = [r._.srl_score for f in hot(TEXTS[0])._.srl_frames for r in f.roles]
    assert len(sure) == len(cooled)  # the temperature changes the scores, not the decoding
    assert all(c < s for s, c in zip(sure, cooled, strict=True) if s > 0.9)


def test_scores_given_by_hand_are_checked():
    nlp = spacy.blank("en")
    doc = nlp("John sold the car")
    doc._.srl_frames = [{"predicate": [1, 2], "roles": [[0, 1, "ARG0", 0.75]], "score": 0.5}]
    assert doc._.srl_frames[0].roles[0]._.srl_score == 0.75 and doc._.srl_frames[0].score == 0.5
    gold = nlp("John sold the car")
    gold._.srl_frames = [{"predicate": [1, 2], "roles": [[0, 1, "ARG0"]]}]
    assert gold._.srl_frames[0].score is None and "score" not in gold._.srl_frames[0].to_dict()
    with pytest.raises(ValueError, match=r"\[E010\].*score 1.5"):
        doc._.srl_frames = [{"predicate": [1, 2], "roles": [[0, 1, "ARG0", 1.5]]}]
    with pytest.raises(ValueError, match=r"\[E010\].*score 'high'"):
        doc._.srl_frames = [{"predicate": [1, 2], "roles": [], "score": "high"}]


def test_role_scores_follow_the_frames_each_doc_stores_now():
    """``span._.srl_score`` reads its own doc's frames as they are: two docs read in
    turn, frames set again, a frame appended in place, one span as two predicates' roles."""
    vocab = spacy.blank("en").vocab
    words = "Mary wanted to buy the car".split()

    def frames(wanted: float, buy: float):
        return [
            {"predicate": [1, 2], "roles": [[0, 1, "ARG0", wanted], [2, 6, "ARG1", 0.8]]},
            {"predicate": [3, 4], "roles": [[0, 1, "ARG0", buy], [4, 6, "ARG1", 0.7]]},
        ]

    def scores(doc: Doc):
        return [r._.srl_score for f in doc._.srl_frames for r in f.roles]

    one, two = Doc(vocab, words=words), Doc(vocab, words=words)
    one._.srl_frames, two._.srl_frames = frames(0.9, 0.6), frames(0.2, 0.1)
    for _ in range(2):
        assert scores(one) == [0.9, 0.8, 0.6, 0.7] and scores(two) == [0.2, 0.8, 0.1, 0.7]
    assert [s._.srl_score for s in two.spans["srl"]] == [0.2, 0.8, 0.1, 0.7]
    one._.srl_frames = frames(0.5, 0.4)
    assert scores(one) == [0.5, 0.8, 0.4, 0.7]
    one._.srl_frame_data.append({"predicate": [5, 6], "roles": [[4, 5, "ARG1", 0.3]]})
    assert Span(one, 4, 5, label="ARG1", span_id="V:5-6")._.srl_score == 0.3
    assert Span(one, 4, 5, label="ARG0", span_id="V:5-6")._.srl_score is None
    assert Span(one, 0, 1, label="ARG0")._.srl_score is None  # no predicate link


def test_the_calibration_map_is_applied_to_every_role_score(nlp):
    mapped = spacy.load(
        SAVED / "pipeline", config={"components": {"lisa_srl": {"score_calibration": [0.5, 0.2]}}}
    )
    raw = np.array([r._.srl_score for f in nlp(TEXTS[0])._.srl_frames for r in f.roles])
    got = [r._.srl_score for f in mapped(TEXTS[0])._.srl_frames for r in f.roles]
    np.testing.assert_allclose(got, calibrated(raw, 0.5, 0.2))
    assert not np.allclose(got, raw)
    with pytest.raises(ValueError, match=r"score_calibration"):
        spacy.load(
            SAVED / "pipeline", config={"components": {"lisa_srl": {"score_calibration": [1]}}}
        )
