"""Output formats (JSON lines, AllenNLP, CoNLL-2005) on hand-made Docs with frames."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc

from spacy_lisa.corpus.conll2005 import read_conll2005
from spacy_lisa.formats import (
    allennlp_description,
    doc_sentences,
    doc_to_allennlp,
    doc_to_conll2005_text,
    doc_to_jsonl_records,
    frames_by_sentence,
)
from spacy_lisa.frames import set_srl_frames


@pytest.fixture(scope="module")
def nlp() -> Language:
    return spacy.blank("en")


def make_doc(
    nlp: Language,
    words: List[str],
    frames: Optional[list],
    *,
    sent_starts: Optional[List[int]] = None,
    spaces: Optional[List[bool]] = None,
) -> Doc:
    doc = Doc(nlp.vocab, words=words, spaces=spaces)
    if sent_starts is not None:
        for i in range(len(doc)):
            doc[i].is_sent_start = i in sent_starts
    set_srl_frames(doc, frames)
    return doc


@pytest.fixture
def two_sentences(nlp: Language) -> Doc:
    # "John sold the car. Mary did n't buy it ." with frames in both sentences
    words = ["John", "sold", "the", "car", ".", "Mary", "did", "n't", "buy", "it", "."]
    spaces = [True, True, True, False, True, True, True, True, True, False, False]
    frames = [
        {
            "predicate": [1, 2],
            "roleset": "sell.01",
            "lemma": "sell",
            "roles": [[0, 1, "ARG0"], [2, 4, "ARG1"]],
        },
        {
            "predicate": [8, 9],
            "roleset": "buy.01",
            "lemma": "buy",
            "roles": [[5, 6, "ARG0"], [7, 8, "ARGM-NEG"], [9, 10, "ARG1"]],
        },
    ]
    return make_doc(nlp, words, frames, sent_starts=[0, 5], spaces=spaces)


# ------------------------------------------------------------------------- sentences ----
def test_sentences_without_boundaries_is_the_whole_doc(nlp: Language) -> None:
    doc = make_doc(nlp, ["a", "b"], [])
    assert [(s.start, s.end) for s in doc_sentences(doc)] == [(0, 2)]
    assert doc_sentences(make_doc(nlp, [], [])) == []


def test_frames_by_sentence_follows_the_predicate(two_sentences: Doc) -> None:
    grouped = frames_by_sentence(two_sentences)
    assert [(s.start, s.end) for s, _ in grouped] == [(0, 5), (5, 11)]
    assert [[i for i, _ in frames] for _, frames in grouped] == [[0], [1]]


# ---------------------------------------------------------------------------- jsonl -----
def test_jsonl_one_record_per_sentence(two_sentences: Doc) -> None:
    records = doc_to_jsonl_records(two_sentences, extra={"line": 7, "id": "doc-1"})
    assert len(records) == 2
    first, second = records
    assert list(first)[:2] == ["line", "id"]  # extra keys come first
    assert first["line"] == 7 and first["id"] == "doc-1"
    assert first["sentence"] == 0 and second["sentence"] == 1
    assert first["tokens"] == ["John", "sold", "the", "car", "."]
    assert first["text"] == "John sold the car."
    assert (second["start"], second["end"]) == (5, 11)
    assert second["text"] == "Mary did n't buy it."
    frame = second["frames"][0]
    assert frame["frame"] == 1
    assert frame["roleset"] == "buy.01" and frame["lemma"] == "buy"
    assert frame["predicate"]["text"] == "buy"
    assert (frame["predicate"]["start"], frame["predicate"]["end"]) == (8, 9)
    assert (frame["predicate"]["sent_start"], frame["predicate"]["sent_end"]) == (3, 4)
    assert [r["label"] for r in frame["roles"]] == ["ARG0", "ARGM-NEG", "ARG1"]
    assert frame["tags"] == ["B-ARG0", "O", "B-ARGM-NEG", "B-V", "B-ARG1", "O"]
    assert frame["untagged_roles"] == []


def test_jsonl_offsets_slice_the_doc_and_the_sentence(two_sentences: Doc) -> None:
    doc = two_sentences
    for record in doc_to_jsonl_records(doc):
        sent_text = record["text"]
        assert doc.text[record["start_char"] : record["end_char"]] == sent_text
        for frame in record["frames"]:
            for item in [frame["predicate"], *frame["roles"]]:
                assert doc.text[item["start_char"] : item["end_char"]] == item["text"]
                assert sent_text[item["sent_start_char"] : item["sent_end_char"]] == item["text"]
                assert doc[item["start"] : item["end"]].text == item["text"]
                tokens = record["tokens"][item["sent_start"] : item["sent_end"]]
                assert tokens == [t.text for t in doc[item["start"] : item["end"]]]


def test_jsonl_records_are_json(two_sentences: Doc) -> None:
    records = doc_to_jsonl_records(two_sentences)
    assert json.loads(json.dumps(records)) == records


def test_jsonl_without_sentences_or_frames(nlp: Language) -> None:
    doc = make_doc(nlp, ["It", "rains", "."], None)  # no SRL annotation at all
    records = doc_to_jsonl_records(doc)
    assert len(records) == 1
    assert records[0]["frames"] == [] and records[0]["tokens"] == ["It", "rains", "."]
    assert doc_to_jsonl_records(make_doc(nlp, [], [])) == []


def test_jsonl_counts_roles_bio_cannot_hold(nlp: Language) -> None:
    # overlapping roles (invalid for one frame, but data can carry them): both stay in
    # "roles", the second is listed as untagged instead of vanishing
    frames = [{"predicate": [1, 2], "roles": [[2, 4, "ARG1"], [3, 4, "ARG2"], [0, 1, "ARG0"]]}]
    doc = make_doc(nlp, ["He", "ate", "red", "apples"], frames)
    (frame,) = doc_to_jsonl_records(doc)[0]["frames"]
    assert [r["label"] for r in frame["roles"]] == ["ARG1", "ARG2", "ARG0"]  # as stored
    assert frame["tags"] == ["B-ARG0", "B-V", "B-ARG1", "I-ARG1"]
    assert frame["untagged_roles"] == [1]


def test_jsonl_role_outside_its_sentence_is_untagged(nlp: Language) -> None:
    frames = [{"predicate": [1, 2], "roles": [[0, 1, "ARG0"], [3, 4, "ARG1"]]}]
    doc = make_doc(nlp, ["We", "left", ".", "Home"], frames, sent_starts=[0, 3])
    first, second = doc_to_jsonl_records(doc)
    (frame,) = first["frames"]
    assert frame["untagged_roles"] == [1]
    assert frame["roles"][1]["sent_start"] == 3  # past the sentence's 3 tokens, as stated
    assert second["frames"] == []


# ------------------------------------------------------------------------- allennlp -----
def test_allennlp_shape_and_description(two_sentences: Doc) -> None:
    out = doc_to_allennlp(two_sentences)
    assert out == [
        {
            "verbs": [
                {
                    "verb": "sold",
                    "description": "[ARG0: John] [V: sold] [ARG1: the car] .",
                    "tags": ["B-ARG0", "B-V", "B-ARG1", "I-ARG1", "O"],
                }
            ],
            "words": ["John", "sold", "the", "car", "."],
        },
        {
            "verbs": [
                {
                    "verb": "buy",
                    "description": "[ARG0: Mary] did [ARGM-NEG: n't] [V: buy] [ARG1: it] .",
                    "tags": ["B-ARG0", "O", "B-ARGM-NEG", "B-V", "B-ARG1", "O"],
                }
            ],
            "words": ["Mary", "did", "n't", "buy", "it", "."],
        },
    ]


def test_allennlp_multiword_predicate_and_continuations(nlp: Language) -> None:
    words = ["The", "plan", ",", "he", "said", ",", "will", "pick", "up", "speed"]
    frames = [
        {"predicate": [7, 9], "roles": [[0, 2, "ARG0"], [6, 7, "ARGM-MOD"], [9, 10, "ARG1"]]},
        {"predicate": [4, 5], "roles": [[0, 2, "ARG1"], [3, 4, "ARG0"], [6, 10, "C-ARG1"]]},
    ]
    doc = make_doc(nlp, words, frames)
    (sent,) = doc_to_allennlp(doc)
    said, pick_up = sent["verbs"]  # predicate order
    assert said["verb"] == "said"
    assert (
        said["description"]
        == "[ARG1: The plan] , [ARG0: he] [V: said] , [C-ARG1: will pick up speed]"
    )
    assert pick_up["verb"] == "pick up"
    assert pick_up["tags"][7:9] == ["B-V", "I-V"]
    assert "[V: pick up]" in pick_up["description"]


def test_allennlp_sentence_without_frames(nlp: Language) -> None:
    doc = make_doc(nlp, ["Hello", "."], [])
    assert doc_to_allennlp(doc) == [{"verbs": [], "words": ["Hello", "."]}]


def test_allennlp_description_matches_make_srl_string() -> None:
    words = ["The", "cat", "sat", "on", "the", "mat"]
    tags = ["B-ARG0", "I-ARG0", "B-V", "B-ARGM-LOC", "I-ARGM-LOC", "I-ARGM-LOC"]
    assert allennlp_description(words, tags) == "[ARG0: The cat] [V: sat] [ARGM-LOC: on the mat]"
    assert allennlp_description(["a", "b"], ["O", "O"]) == "a b"


# ------------------------------------------------------------------------ conll2005 -----
def test_conll2005_text_columns(two_sentences: Doc) -> None:
    assert doc_to_conll2005_text(two_sentences) == (
        "John -    (ARG0*)\n"
        "sold sell (V*)\n"
        "the  -    (ARG1*\n"
        "car  -    *)\n"
        ".    -    *\n"
        "\n"
        "Mary -   (ARG0*)\n"
        "did  -   *\n"
        "n't  -   (ARGM-NEG*)\n"
        "buy  buy (V*)\n"
        "it   -   (ARG1*)\n"
        ".    -   *\n"
        "\n"
    )


def test_conll2005_text_of_an_empty_doc(nlp: Language) -> None:
    assert doc_to_conll2005_text(make_doc(nlp, [], [])) == ""


def test_conll2005_text_reads_back(two_sentences: Doc, tmp_path: Path) -> None:
    text = doc_to_conll2005_text(two_sentences)
    words, props = [], []
    for line in text.splitlines():
        cols = line.split()
        words.append(cols[0] if cols else "")
        props.append(" ".join(cols[1:]))
    (tmp_path / "words").write_text("\n".join(words) + "\n", encoding="utf8")
    (tmp_path / "props").write_text("\n".join(props) + "\n", encoding="utf8")
    records = list(read_conll2005(tmp_path / "words", tmp_path / "props"))
    assert [r.words for r in records] == [
        ["John", "sold", "the", "car", "."],
        ["Mary", "did", "n't", "buy", "it", "."],
    ]
    frames = [[p.to_frame() for p in r.predicates or []] for r in records]
    expected = [
        [f.to_frame_data() for f in two_sentences._.srl_frames if f.predicate.start < 5],
        [f.to_frame_data() for f in two_sentences._.srl_frames if f.predicate.start >= 5],
    ]
    for got, want, offset in zip(frames, expected, (0, 5), strict=True):
        assert [g["predicate"] for g in got] == [
            [w["predicate"][0] - offset, w["predicate"][1] - offset] for w in want
        ]
        assert [sorted(map(tuple, g["roles"])) for g in got] == [
            sorted((s - offset, e - offset, label) for s, e, label in w["roles"]) for w in want
        ]
