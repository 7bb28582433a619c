"""CoNLL-2005 words + props: reader, Doc -> columns, writer."""

import pytest
from corpus_helpers import frames_of
from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_lisa.corpus.conll2005 import doc_to_conll2005, read_conll2005, write_conll2005
from spacy_lisa.frames import set_srl_frames

WORDS = "The\ncat\nsat\ndown\n.\n\nIt\nrained\n\nOk\n"
PROPS = (
    "-    (A0*    *\n"
    "-    *)      *\n"
    "sit  (V*     *\n"
    "down *)      (V*)\n"
    "-    *       *\n"
    "\n"
    "-     *\n"
    "rain  (V*)\n"
    "\n"
    "-\n"
)


def test_read_conll2005(write):
    records = list(read_conll2005(write("w.txt", WORDS), write("p.txt", PROPS)))
    assert [r.words for r in records] == [
        ["The", "cat", "sat", "down", "."],
        ["It", "rained"],
        ["Ok"],
    ]
    first = records[0]
    assert frames_of(first) == [((2, 4), "sit", None, [(0, 2, "A0")]), ((3, 4), "down", None, [])]
    assert frames_of(records[1]) == [((1, 2), "rain", None, [])]
    assert records[2].predicates == []
    assert [r.sent_index for r in records] == [0, 1, 2]
    assert records[0].heads is None and records[0].xpos is None


def _doc(words, sent_starts=None):
    return Doc(Vocab(), words=words, sent_starts=sent_starts)


def test_doc_to_conll2005_per_sentence():
    doc = _doc(["The", "cat", "sat", ".", "It", "rained"], [True, False, False, False, True, False])
    set_srl_frames(
        doc,
        [
            {"predicate": [2, 3], "lemma": "sit", "roles": [[0, 2, "A0"]]},
            {"predicate": [5, 6], "lemma": "rain", "roles": [[4, 5, "A1"]]},
        ],
    )
    assert doc_to_conll2005(doc) == [
        [
            ["The", "-", "(A0*"],
            ["cat", "-", "*)"],
            ["sat", "sit", "(V*)"],
            [".", "-", "*"],
        ],
        [["It", "-", "(A1*)"], ["rained", "rain", "(V*)"]],
    ]


def test_doc_without_sentences_is_one_sentence_and_lemma_falls_back():
    doc = _doc(["Runs", "fast"])
    set_srl_frames(doc, [{"predicate": [0, 1], "roles": [[1, 2, "AM-MNR"]]}])
    # no frame lemma, no token lemma: the lowercased word
    assert doc_to_conll2005(doc) == [[["Runs", "runs", "(V*)"], ["fast", "-", "(AM-MNR*)"]]]


def test_shared_predicate_token_moves_the_lemma_not_the_frame(write, tmp_path):
    # EWT has predicates duplicated over hyphen-split words with the same V span
    doc = _doc(["x", "-", "rays", "help"])
    frames = [
        {"predicate": [0, 1], "lemma": "xray", "roles": [[2, 3, "C-V"]]},
        {"predicate": [0, 1], "lemma": "xray", "roles": [[2, 3, "C-V"], [3, 4, "ARGM-PRR"]]},
    ]
    set_srl_frames(doc, frames)
    (sentence,) = doc_to_conll2005(doc)
    assert [row[1] for row in sentence] == ["xray", "xray", "-", "-"]
    words, props = tmp_path / "w.txt", tmp_path / "p.txt"
    write_conll2005([doc], words, props)
    (record,) = read_conll2005(words, props)
    assert [p.span for p in record.predicates] == [(0, 1), (0, 1)]
    assert [sorted(a.as_tuple() for a in p.arguments) for p in record.predicates] == [
        [(2, 3, "C-V")],
        [(2, 3, "C-V"), (3, 4, "ARGM-PRR")],
    ]


def test_unannotated_doc_writes_no_columns():
    doc = _doc(["Hi", "there"])
    assert doc_to_conll2005(doc) == [[["Hi", "-"], ["there", "-"]]]
    assert doc_to_conll2005(_doc([])) == []


def test_whitespace_in_words_and_lemmas_is_written_as_underscore():
    doc = _doc(["1 1/2", "cups"])
    set_srl_frames(doc, [{"predicate": [1, 2], "lemma": "cup up", "roles": []}])
    assert doc_to_conll2005(doc) == [[["1_1/2", "-", "*"], ["cups", "cup_up", "(V*)"]]]


def test_role_outside_sentence_is_an_error():
    doc = _doc(["a", "b", "c", "d"], [True, False, True, False])
    set_srl_frames(doc, [{"predicate": [0, 1], "lemma": "a", "roles": [[1, 3, "A1"]]}])
    with pytest.raises(ValueError, match="outside its sentence"):
        doc_to_conll2005(doc)


def test_crossing_roles_are_an_error():
    doc = _doc(["a", "b", "c", "d"])
    set_srl_frames(doc, [{"predicate": [0, 1], "roles": [[1, 3, "A1"], [2, 4, "A2"]]}])
    with pytest.raises(ValueError, match="crosses"):
        doc_to_conll2005(doc)


def test_write_conll2005_files(tmp_path):
    doc = _doc(["The", "cat", "sat"])
    set_srl_frames(doc, [{"predicate": [2, 3], "lemma": "sit", "roles": [[0, 2, "A0"]]}])
    write_conll2005([doc, _doc(["Ok"])], tmp_path / "out" / "w.txt", tmp_path / "out" / "p.txt")
    assert (tmp_path / "out" / "w.txt").read_text() == "The\ncat\nsat\n\nOk\n\n"
    assert (tmp_path / "out" / "p.txt").read_text() == "-   (A0*\n-   *)\nsit (V*)\n\n-\n\n"
