"""Each role span leads to its predicate (``span._.srl_predicate``), in
``doc.spans["srl"]`` and in ``frame.roles`` alike, through ``doc.to_bytes`` and a
``DocBin`` without user data (the link is the span's ``id_``, which span groups keep),
on the saved-pipeline fixture's predictions and on frames set by hand."""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin, Span

from spacy_lisa.frames import set_srl_frames

MODEL = Path(__file__).parent / "fixtures" / "saved_pipeline" / "pipeline"
# two sentences, a two-token predicate ("picked up"), two frames sharing no role
TEXT = "They said the report was wrong. Mary picked up the car."

Link = Tuple[str, str, Tuple[int, int]]  # role label, role text, its predicate's offsets


@pytest.fixture(scope="module")
def nlp() -> Language:
    return spacy.load(MODEL)


def links(doc: Doc) -> List[Link]:
    """Each span of doc.spans["srl"] with the predicate it leads to."""
    out = []
    for span in doc.spans["srl"]:
        predicate = span._.srl_predicate
        assert predicate is not None and predicate.label_ == "V", span
        out.append((span.label_, span.text, (predicate.start, predicate.end)))
    return out


def frame_links(doc: Doc) -> List[Link]:
    """The same, read from the frames (each role with its own frame's predicate)."""
    return [
        (role.label_, role.text, (frame.predicate.start, frame.predicate.end))
        for frame in doc._.srl_frames
        for role in frame.roles
    ]


def test_predicted_role_spans_lead_to_their_predicates(nlp: Language) -> None:
    doc = nlp(TEXT)
    assert [f.predicate.text for f in doc._.srl_frames] == ["said", "picked up"]
    assert links(doc) == frame_links(doc) and len(links(doc)) >= 4
    picked_up = [p for _, _, p in links(doc) if p[1] - p[0] == 2]
    assert picked_up and doc[picked_up[0][0] : picked_up[0][1]].text == "picked up"
    # the frames' own role spans carry the link too
    assert all(r._.srl_predicate == f.predicate for f in doc._.srl_frames for r in f.roles)


def test_the_link_survives_to_bytes_and_a_docbin_without_user_data(nlp: Language) -> None:
    doc = nlp(TEXT)
    restored = Doc(nlp.vocab).from_bytes(doc.to_bytes())
    assert links(restored) == links(doc)
    doc_bin = DocBin(store_user_data=False)  # the frames are user data: gone
    doc_bin.add(doc)
    (loaded,) = DocBin().from_bytes(doc_bin.to_bytes()).get_docs(nlp.vocab)
    assert loaded._.srl_frames == [] and links(loaded) == links(doc)


def test_frames_set_by_hand_are_linked_and_other_spans_are_not() -> None:
    doc = spacy.blank("en")("Anna bought flowers and gave them to Tom .")
    set_srl_frames(
        doc,
        [
            {"predicate": [4, 5], "roles": [[0, 1, "ARG0"], [5, 6, "ARG1"], [6, 8, "ARG2"]]},
            {"predicate": [1, 2], "roles": [[0, 1, "ARG0"], [2, 3, "ARG1"]]},
        ],
    )
    assert links(doc) == [  # sorted by predicate; "Anna" is in both frames, once each
        ("ARG0", "Anna", (1, 2)),
        ("ARG1", "flowers", (1, 2)),
        ("ARG0", "Anna", (4, 5)),
        ("ARG1", "them", (4, 5)),
        ("ARG2", "to Tom", (4, 5)),
    ]
    assert doc[0:2]._.srl_predicate is None  # a span that is no role span
    assert Span(doc, 0, 1, span_id="V:7-12")._.srl_predicate is None  # outside the doc
