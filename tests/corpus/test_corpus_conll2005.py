"""CoNLL-2005 words + props: reader, Doc -> columns, writer."""

import numpy as np
import pytest
from corpus_helpers import frames_of
from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_lisa.corpus.conll2005 import doc_to_conll2005, read_conll2005, write_conll2005
from spacy_lisa.decoding.frames import decode_frames
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
    # the shared task's A0 read as PropBank's ARG0
    assert frames_of(first) == [
        ((2, 4), "sit", None, [(0, 2, "ARG0")]),
        ((3, 4), "down", None, []),
    ]
    assert frames_of(records[1]) == [((1, 2), "rain", None, [])]
    assert records[2].predicates == []
    assert [r.sent_index for r in records] == [0, 1, 2]
    assert records[0].heads is None and records[0].xpos is None


# every kind of CoNLL-2005 label on one predicate ("decide"), and how PropBank spells it
SHORT_LABELS = [
    ("A0", "ARG0"),
    ("A1", "ARG1"),
    ("A2", "ARG2"),
    ("A3", "ARG3"),
    ("A4", "ARG4"),
    ("A5", "ARG5"),
    ("AA", "ARGA"),
    ("AM-TMP", "ARGM-TMP"),
    ("C-A1", "C-ARG1"),
    ("R-A0", "R-ARG0"),
    ("R-AM-LOC", "R-ARGM-LOC"),
    ("C-V", "C-V"),
]


def test_read_conll2005_labels_in_propbank_spelling(write):
    words = "".join(f"w{i}\n" for i in range(len(SHORT_LABELS) + 1))
    props = "".join(f"-      ({short}*)\n" for short, _ in SHORT_LABELS) + "decide (V*)\n"
    (record,) = read_conll2005(write("w.txt", words), write("p.txt", props))
    ((_, _, _, arguments),) = frames_of(record)
    assert arguments == [(i, i + 1, long) for i, (_, long) in enumerate(SHORT_LABELS)]


def test_a_conll2005_core_role_is_decoded_once_per_frame(write):
    """The labels a model learns from a CoNLL-2005 file are PropBank's, so the decoder's
    one-span-per-numbered-argument rule (unique_core_roles) holds for them: of two spans
    scored A0, the clearer keeps it and the other takes its next best label."""
    props = "-     (A0*)\n-     (A1*)\nsell  (V*)\n-     *\n"
    (record,) = read_conll2005(write("w.txt", "Ann\nBob\nsold\nit\n"), write("p.txt", props))
    types = sorted({a.label for p in record.predicates or [] for a in p.arguments} | {"V"})
    labels = ("O", *(f"{bi}-{t}" for t in types for bi in "BI"))
    scores = np.full((1, 4, len(labels)), -4.0, dtype="f")
    scores[0, :, labels.index("O")] = 0.0
    scores[0, 2, labels.index("B-V")] = 5.0
    scores[0, 0, labels.index(f"B-{types[0]}")] = 3.0
    scores[0, 0, labels.index(f"B-{types[1]}")] = 2.5
    scores[0, 3, labels.index(f"B-{types[0]}")] = 6.0
    [(_, roles)] = decode_frames(scores, [2], [4], labels, unique_core=True)
    assert types == ["ARG0", "ARG1", "V"]
    assert roles == [[0, 1, types[1]], [3, 4, types[0]]]


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
