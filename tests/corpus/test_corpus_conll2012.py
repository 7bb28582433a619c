"""CoNLL-2012 bracket columns: both layouts, spans, predicates."""

from pathlib import Path

import pytest
from corpus_helpers import block, frames_of

from spacy_lisa.corpus.brackets import parse_bracket_column, spans_to_bracket_column
from spacy_lisa.corpus.conll2012 import read_conll2012, roleset_of

# hand-written sentences in the layout of the OntoNotes 5.0 CoNLL-2012 release
# (<split>/data/english/annotations/<genre>/<source>/<nn>/<doc>.v4_gold_conll)
ONTONOTES = Path(__file__).parents[1] / "fixtures" / "conll2012"
ONTONOTES_TRAIN = ONTONOTES / "train/data/english/annotations/nw/lisa/00/lisa_0001.v4_gold_conll"

# the release notes' example, cut down: "lighten up" is a phrasal verb whose V spans two
# words
GOLD_CONLL = block(
    """
    ewt/email/00/e.xml  15  0  I        PRP  (TOP(S(NP*) -        -              *       (ARG0*)
    ewt/email/00/e.xml  15  1  would    MD   (VP*        -        -              *       (ARGM-MOD*)
    ewt/email/00/e.xml  15  2  like     VB   (VP*        liken    like.02        (V*)    *
    ewt/email/00/e.xml  15  3  to       TO   (S(VP*      -        -              (ARG1*  *
    ewt/email/00/e.xml  15  4  lighten  VB   (VP*        lighten  lighten_up.02  *       (V*
    ewt/email/00/e.xml  15  5  up       RP   (PRT*)))))  -        -              *)      *)
    ewt/email/00/e.xml  15  6  .        .    *))         -        -              *       *

    ewt/email/00/e.xml  16  0  Thanks   NNS  (TOP*))     -        -
    """
)


def test_read_gold_conll_propbank_layout(write):
    path = write("e.xml.gold_conll", GOLD_CONLL)
    first, second = read_conll2012(path)
    assert first.words[:3] == ["I", "would", "like"]
    assert first.has_words
    assert first.xpos == ["PRP", "MD", "VB", "TO", "VB", "RP", "."]
    assert first.heads is None and first.lemmas is None
    assert (first.doc_id, first.sent_index, first.line) == ("ewt/email/00/e.xml", 0, 1)
    assert frames_of(first) == [
        ((2, 3), "liken", "like.02", [(3, 6, "ARG1")]),
        # the phrasal verb's V span covers both words; it is not an argument
        ((4, 6), "lighten", "lighten_up.02", [(0, 1, "ARG0"), (1, 2, "ARGM-MOD")]),
    ]
    assert [p.index for p in first.predicates] == [2, 4]
    assert second.words == ["Thanks"] and second.predicates == []
    assert (second.sent_index, second.line) == (1, 9)


def test_read_gold_skel_without_words(write):
    text = block(
        """
        google/ewt/answers/00/a.xml  0  0  [WORD]  PRP  (TOP(S(NP*)  -     -        (ARG1*)  (ARG0*)
        google/ewt/answers/00/a.xml  0  1  [WORD]  VBP  (VP*         be    be.01    (V*)     *
        google/ewt/answers/00/a.xml  0  2  [WORD]  JJ   (ADJP*))     madden mad.04  (ARG2*)  (V*)
        """
    )
    (record,) = read_conll2012(write("a.xml.gold_skel", text))
    assert not record.has_words
    assert frames_of(record) == [
        ((1, 2), "be", "be.01", [(0, 1, "ARG1"), (2, 3, "ARG2")]),
        ((2, 3), "madden", "mad.04", [(0, 1, "ARG0")]),
    ]


def test_read_ontonotes_layout_with_coref_and_document_lines(write):
    text = block(
        """
        #begin document (bc/cnn/00/cnn_0002); part 000
        bc/cnn_0002  0  0  Uh    UH   (TOP(S(INTJ*)  -   -      -  Spk1  *         (ARGM-DIS*)  -
        bc/cnn_0002  0  1  this  DT   (NP*)          -   -      -  Spk1  *         (ARG1*)      (12)
        bc/cnn_0002  0  2  is    VBZ  (VP*           be  be.01  -  Spk1  *         (V*)         -
        bc/cnn_0002  0  3  Jack  NNP  (NP*))         -   -      -  Spk1  (PERSON)  (ARG2*)      -

        bc/cnn_0002  0  0  Hm    UH   (TOP(INTJ*))   -   -      -  Spk1  *         -
        #end document
        """
    )
    first, second = read_conll2012(write("cnn_0002.gold_conll", text))
    assert first.words == ["Uh", "this", "is", "Jack"]
    assert frames_of(first) == [
        ((2, 3), "be", "be.01", [(0, 1, "ARGM-DIS"), (1, 2, "ARG1"), (3, 4, "ARG2")])
    ]
    assert second.predicates == [] and second.sent_index == 1 and second.line == 7


def test_ontonotes_rolesets_join_the_lemma_and_the_frameset_number():
    """OntoNotes writes the lemma in column 6 and only the frameset number in column 7
    (say / 01): the roleset is say.01, as the frame files and EWT name it. A noun with a
    word sense (officials: lemma, no frameset) is no predicate."""
    first, second = read_conll2012(ONTONOTES_TRAIN)
    assert first.words == ["Local", "officials", "say", "the", "market", "was", "closed", "."]
    assert frames_of(first) == [
        ((2, 3), "say", "say.01", [(0, 2, "ARG0"), (3, 7, "ARG1")]),
        ((6, 7), "close", "close.01", [(3, 5, "ARG1")]),
    ]
    assert frames_of(second) == [
        ((1, 2), "buy", "buy.01", [(0, 1, "ARG0"), (2, 4, "ARG1"), (4, 5, "ARGM-TMP")])
    ]
    assert (first.doc_id, second.sent_index) == ("nw/lisa/00/lisa_0001", 1)


@pytest.mark.parametrize(
    "lemma, column_7, roleset",
    [
        ("say", "01", "say.01"),
        ("be", "be.01", "be.01"),  # the PropBank release: the whole roleset
        ("lighten", "lighten_up.02", "lighten_up.02"),  # its frame file is not its lemma's
        (None, "01", "01"),  # no lemma to join it to: as it is
    ],
)
def test_roleset_of(lemma, column_7, roleset):
    assert roleset_of(lemma, column_7) == roleset


def test_annotated_sentence_without_predicates_is_not_unannotated(write):
    (record,) = read_conll2012(write("x.gold_conll", "d 0 0 Hi UH (TOP*) - -\n"))
    assert record.predicates == []
    assert record.has_srl


def test_continuation_and_reference_arguments_stay_separate(write):
    text = block(
        """
        d  0  0  Top  VB   *  top  top.01   (V*)
        d  0  1  it   PRP  *  -    -        (ARG1*)
        d  0  2  off  RP   *  -    -        (C-V*)
        d  0  3  ,    ,    *  -    -        *
        d  0  4  which WDT *  -    -        (R-ARG1*)
        d  0  5  says VBZ  *  -    -        (C-ARG1*
        d  0  6  so   RB   *  -    -        *)
        """
    )
    (record,) = read_conll2012(write("c.gold_conll", text))
    assert frames_of(record) == [
        (
            (0, 1),
            "top",
            "top.01",
            [(1, 2, "ARG1"), (2, 3, "C-V"), (4, 5, "R-ARG1"), (5, 7, "C-ARG1")],
        )
    ]


def test_nested_and_repeated_spans_in_one_column():
    tags = ["(A1(A0*", "*)", "*)", "(V*)", "(AM(AM*))"]
    spans = parse_bracket_column(tags, [1, 2, 3, 4, 5], path="x", column=9)
    assert sorted(spans) == [(0, 2, "A0"), (0, 3, "A1"), (3, 4, "V"), (4, 5, "AM"), (4, 5, "AM")]
    written = spans_to_bracket_column(5, spans)
    assert written == ["(A1(A0*", "*)", "*)", "(V*)", "(AM(AM*))"]
    assert sorted(parse_bracket_column(written, [1, 2, 3, 4, 5], path="x", column=9)) == sorted(
        spans
    )


def test_conll2004_closing_labels_are_read():
    spans = parse_bracket_column(["(A0*", "*A0)", "(V*V)"], [1, 2, 3], path="x", column=2)
    assert spans == [(0, 2, "A0"), (2, 3, "V")]


@pytest.mark.parametrize(
    "spans",
    [
        [(0, 2, "A0"), (1, 3, "A1")],  # crossing
        [(0, 4, "A0")],  # outside the sentence
        [(0, 1, "A 0")],  # whitespace in the label
        [(0, 1, "A(0")],
    ],
)
def test_bracket_writer_rejects_what_it_cannot_write(spans):
    with pytest.raises(ValueError):
        spans_to_bracket_column(3, spans)
