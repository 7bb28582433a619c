"""CoNLL-U reader: fields, conventions and validation."""

import pytest
from corpus_helpers import tabs

from spacy_lisa.corpus.conllu import read_conllu

GOOD = tabs(
    """
    # newdoc id = answers-doc1
    # sent_id = answers-doc1-0001
    # text = Don't go.
    1-2  Don't  _     _      _    _             _  _       _        _
    1    Do     do    AUX    VBP  Mood=Ind      3  aux     3:aux    _
    2    n't    not   PART   RB   _             3  advmod  3:advmod _
    3    go     go    VERB   VB   VerbForm=Inf  0  root    0:root   SpaceAfter=No
    3.1  went   go    VERB   VBD  _             _  _       3:conj   _
    4    .      .     PUNCT  .    _             3  punct   3:punct  _

    # sent_id = answers-doc1-0002
    1    Yes    yes   INTJ   UH   _             0  root    0:root   _

    # newdoc id = email-doc2
    # sent_id = email-doc2-0001
    1    Hi     hi    INTJ   UH   _             0  root    0:root   SpaceAfter=No
    2    !      !     PUNCT  .    _             1  punct   1:punct  _
    """
)


def test_read_conllu_fields(write):
    path = write("good.conllu", GOOD)
    records = list(read_conllu(path))
    assert len(records) == 3
    first = records[0]
    # multiword-token and empty-node lines are skipped: the syntactic words remain
    assert first.words == ["Do", "n't", "go", "."]
    assert first.spaces == [True, True, False, True]
    assert first.lemmas == ["do", "not", "go", "."]
    assert first.upos == ["AUX", "PART", "VERB", "PUNCT"]
    assert first.xpos == ["VBP", "RB", "VB", "."]
    assert first.morphs == ["Mood=Ind", "", "VerbForm=Inf", ""]
    # heads 0-based, the root points to itself; UD root is spaCy's ROOT
    assert first.heads == [2, 2, 2, 2]
    assert first.deprels == ["aux", "advmod", "ROOT", "punct"]
    assert first.predicates is None  # plain CoNLL-U carries no SRL
    assert (first.doc_id, first.sent_id, first.sent_index) == (
        "answers-doc1",
        "answers-doc1-0001",
        0,
    )
    assert first.path == str(path) and first.line == 1
    assert (records[1].doc_id, records[1].sent_index) == ("answers-doc1", 1)
    assert (records[2].doc_id, records[2].sent_index) == ("email-doc2", 0)


def test_read_conllu_without_tree(write):
    text = tabs(
        """
        1  a  a  DET   DT  _  _  _  _  _
        2  b  b  NOUN  NN  _  _  _  _  _
        """
    )
    (record,) = read_conllu(write("notree.conllu", text))
    assert record.heads is None and record.deprels is None
    assert record.doc_id is None


def test_read_conllu_keeps_underscore_lemma_of_underscore(write):
    text = tabs(
        """
        1  _  _  PUNCT  NFP  _  0  root  _  _
        2  x  _  X      XX   _  1  dep   _  _
        """
    )
    (record,) = read_conllu(write("underscore.conllu", text))
    assert record.lemmas == ["_", ""]


def test_read_conllu_crlf_and_bom(write):
    path = write("crlf.conllu", "\ufeff" + GOOD.replace("\n", "\r\n"))
    records = list(read_conllu(path))
    assert [r.words for r in records][2] == ["Hi", "!"]


def test_on_invalid_skips_sentence_and_keeps_positions(write):
    # line 7 is the word "go": give it a head outside the sentence
    text = GOOD.replace("VerbForm=Inf\t0\troot", "VerbForm=Inf\t9\troot")
    errors = []
    records = list(read_conllu(write("bad.conllu", text), on_invalid=errors.append))
    assert len(records) == 2 and len(errors) == 1
    assert errors[0].reason == "head" and errors[0].line == 7
    assert (errors[0].doc_id, errors[0].sent_index) == ("answers-doc1", 0)
    # the next sentence keeps its position in the document
    assert records[0].sent_index == 1


def test_error_is_value_error(write):
    path = write("x.conllu", "1\tonly\n")
    with pytest.raises(ValueError):
        list(read_conllu(path))
