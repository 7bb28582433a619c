"""Universal PropBank (CoNLL-U Plus): head-word and subtree argument spans."""

import pytest
from corpus_helpers import frames_of, tabs

from spacy_lisa.corpus import CorpusFormatError
from spacy_lisa.corpus.universal_propbank import read_universal_propbank

# "The old man who left sold his car": sell.01 (A0 man, A1 car), leave.01 (A0 man, R-A0 who)
UP = tabs(
    """
    # global.columns = ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC UP:PRED UP:ARGHEADS
    # sent_id = up-1
    1  The   the    DET   DT    _  3  det        _  _  _         _   _
    2  old   old    ADJ   JJ    _  3  amod       _  _  _         _   _
    3  man   man    NOUN  NN    _  6  nsubj      _  _  _         A0    A0
    4  who   who    PRON  WP    _  5  nsubj      _  _  _         R-A0  _
    5  left  leave  VERB  VBD   _  3  acl:relcl  _  _  leave.01  V     _
    6  sold  sell   VERB  VBD   _  0  root       _  _  sell.01   _     V
    7  his   his    PRON  PRP$  _  8  nmod:poss  _  _  _         _     _
    8  car   car    NOUN  NN    _  6  obj        _  _  _         _     A1
    """
)


def test_head_word_spans(write):
    (record,) = read_universal_propbank(write("up.conllu", UP))
    assert record.words[2] == "man" and record.heads[5] == 5
    # columns are in sentence order of the predicates: leave (row 4), then sell (row 5)
    assert frames_of(record) == [
        ((4, 5), "leave", "leave.01", [(2, 3, "A0"), (3, 4, "R-A0")]),
        ((5, 6), "sell", "sell.01", [(2, 3, "A0"), (7, 8, "A1")]),
    ]


def test_subtree_spans_stop_at_the_predicate(write):
    (record,) = read_universal_propbank(write("up.conllu", UP), argument_spans="subtree")
    assert frames_of(record) == [
        # "man"'s subtree holds "who left", which contains the predicate: cut before it
        ((4, 5), "leave", "leave.01", [(0, 4, "A0"), (3, 4, "R-A0")]),
        ((5, 6), "sell", "sell.01", [(0, 5, "A0"), (6, 8, "A1")]),
    ]


def test_column_without_v_uses_the_roleset_row(write):
    text = UP.replace("sell.01\t_\tV", "sell.01\t_\t_")
    assert text != UP
    (record,) = read_universal_propbank(write("up.conllu", text))
    assert record.predicates[1].span == (5, 6)


def test_two_v_in_one_column_is_an_error(write):
    text = UP.replace("nmod:poss\t_\t_\t_\t_\t_", "nmod:poss\t_\t_\t_\t_\tV")
    assert text != UP
    path = write("up.conllu", text)
    with pytest.raises(CorpusFormatError, match="2 'V' spans") as info:
        list(read_universal_propbank(path))
    assert info.value.line == 9


def test_unknown_argument_spans_option(write):
    with pytest.raises(ValueError, match="argument_spans"):
        list(read_universal_propbank(write("up.conllu", UP), argument_spans="phrase"))  # type: ignore[arg-type]
