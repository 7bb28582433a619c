"""Every kind of malformed input gives a CorpusFormatError naming file, line and
problem; with on_invalid the sentence is skipped and counted instead."""

import pytest
from corpus_helpers import block, tabs

from spacy_lisa.corpus import CorpusFormatError, CorpusStats
from spacy_lisa.corpus.conll2005 import read_conll2005
from spacy_lisa.corpus.conll2012 import read_conll2012
from spacy_lisa.corpus.conllu import read_conllu
from spacy_lisa.corpus.universal_propbank import read_universal_propbank

CONLLU_OK = """
    # sent_id = s1
    1  I      I      PRON  PRP  _  2  nsubj  _  _
    2  like   like   VERB  VBP  _  0  root   _  _
    3  cats   cat    NOUN  NNS  _  2  obj    _  _
    """

SKEL_OK = """
    d.xml 0 0 [WORD] PRP (TOP(S(NP*)  -    -        (ARG0*)
    d.xml 0 1 [WORD] VBP (VP*         like like.01  (V*)
    d.xml 0 2 [WORD] NNS (NP*)))      -    -        (ARG1*)
    """


def _raises(read, path, line: int, reason: str, *words: str) -> CorpusFormatError:
    with pytest.raises(CorpusFormatError) as info:
        list(read(path))
    err = info.value
    assert err.path == str(path)
    assert err.line == line
    assert err.reason == reason
    text = str(err)
    assert f"{path}:{line}:" in text
    for word in words:
        assert word in text
    return err


@pytest.mark.parametrize(
    "old,new,line,reason,words",
    [
        # wrong column count: a missing column on line 3
        ("2  like   like   VERB  VBP  _  0  root   _  _", "2 like like VERB VBP _ 0 root _", 3,
         "column_count", ["expected 10 columns, found 9"]),
        # non-integer ID
        ("3  cats", "x  cats", 4, "token_id", ["'x'", "not an integer"]),
        # head out of range
        ("3  cats   cat    NOUN  NNS  _  2", "3  cats   cat    NOUN  NNS  _  7", 4, "head",
         ["HEAD 7", "out of range", "3 words"]),
        # non-integer head
        ("3  cats   cat    NOUN  NNS  _  2", "3  cats   cat    NOUN  NNS  _  two", 4, "head",
         ["'two'"]),
        # cycle in heads: 1 -> 2 -> 1
        ("2  like   like   VERB  VBP  _  0", "2  like   like   VERB  VBP  _  1", 2,
         "head_cycle", ["cycle", "1 -> 2 -> 1"]),
        # IDs out of order
        ("3  cats", "4  cats", 4, "token_id", ["token ID 4 where 3 was expected"]),
    ],
)  # fmt: skip
def test_conllu_errors(write, old, new, line, reason, words):
    text = tabs(CONLLU_OK.replace(old, new))
    assert text != tabs(CONLLU_OK)
    path = write("bad.conllu", text)
    _raises(read_conllu, path, line, reason, *words)


def test_conllu_self_loop_is_a_cycle(write):
    text = CONLLU_OK.replace("NNS  _  2", "NNS  _  3")
    path = write("loop.conllu", tabs(text))
    _raises(read_conllu, path, 4, "head_cycle", "3 -> 3")


def test_unbalanced_bracket_never_closed(write):
    path = write("a.gold_skel", block(SKEL_OK.replace("(ARG1*)", "(ARG1* ")))
    _raises(read_conll2012, path, 3, "unbalanced_bracket", "column 9", "never closed")


def test_unbalanced_bracket_closed_without_open(write):
    path = write("a.gold_skel", block(SKEL_OK.replace("(ARG0*)", "*)")))
    _raises(read_conll2012, path, 1, "unbalanced_bracket", "never opened")


def test_closing_label_must_match(write):
    path = write("a.gold_skel", block(SKEL_OK.replace("(ARG0*)", "(ARG0*ARG1)")))
    _raises(read_conll2012, path, 1, "unbalanced_bracket", "'ARG1' but 'ARG0' is open")


def test_malformed_bracket_tag(write):
    path = write("a.gold_skel", block(SKEL_OK.replace("(ARG1*)", "ARG1")))
    _raises(read_conll2012, path, 3, "malformed_bracket", "'ARG1'")


def test_conll2012_props_count_mismatch(write):
    # a second roleset without its props column
    path = write(
        "a.gold_skel", block(SKEL_OK.replace("NNS (NP*)))      -    -", "NNS (NP*))) cat cat.01"))
    )
    _raises(read_conll2012, path, 1, "props_column_count", "2 predicate(s) but 9 columns", "10")


def test_conll2012_row_column_count(write):
    path = write("a.gold_skel", block(SKEL_OK.replace("(V*)", "(V*) *")))
    _raises(read_conll2012, path, 2, "column_count", "expected 9 columns, found 10")


def test_conll2012_two_v_spans(write):
    path = write("a.gold_skel", block(SKEL_OK.replace("(ARG1*)", "(V*)")))
    _raises(read_conll2012, path, 2, "predicate_span", "2 'V' spans")


def test_conll2012_token_index(write):
    path = write("a.gold_skel", block(SKEL_OK.replace("d.xml 0 2", "d.xml 0 5")))
    _raises(read_conll2012, path, 3, "token_id", "'5'")


def test_conll2005_props_count_mismatch(write):
    words = write("w.txt", "I\nlike\ncats\n")
    props = write("p.txt", "-  (ARG0*)\nlike (V*)\ncat (ARG1*)\n")
    _raises(
        lambda p: read_conll2005(words, p), props, 1, "props_column_count",
        "2 predicate(s) but 2 columns",
    )  # fmt: skip


def test_conll2005_words_props_mismatch(write):
    words = write("w.txt", "I\nlike\ncats\n\nYes\n")
    props = write("p.txt", "-  (ARG0*)\nlike (V*)\n-  (ARG1*)\n\n-\n-\n")
    _raises(
        lambda p: read_conll2005(words, p), props, 5, "words_props_mismatch", "2 rows", "1 words"
    )


def test_up_props_count_mismatch(write):
    text = tabs(
        """
        1  I     I     PRON  PRP  _  2  nsubj  _  _  _        A0
        2  like  like  VERB  VBP  _  0  root   _  _  like.01  V
        3  cats  cat   NOUN  NNS  _  2  obj    _  _  cat.01   A1
        """
    )
    path = write("up.conllu", text)
    _raises(read_universal_propbank, path, 1, "props_column_count", "2 predicate(s)")


@pytest.mark.parametrize("read", [read_conllu, read_conll2012, read_universal_propbank])
def test_empty_file(write, read):
    path = write("empty.txt", "\n  \n")
    with pytest.raises(CorpusFormatError) as info:
        list(read(path))
    assert info.value.path == str(path) and info.value.line is None
    assert info.value.reason == "empty_file"
    assert str(path) in str(info.value) and "empty" in str(info.value)


@pytest.mark.parametrize("read", [read_conllu, read_conll2012])
def test_not_utf8(write, read):
    text = tabs(CONLLU_OK).encode("utf-8") + "\n1\tcaf\xe9\n".encode("latin-1")
    path = write("latin1.txt", text)
    _raises(read, path, 6, "invalid_utf8", "not valid UTF-8", "0xe9")


def test_skip_invalid_counts_every_skip(write):
    good = tabs(CONLLU_OK)
    bad_head = good.replace("NNS\t_\t2", "NNS\t_\t9")
    bad_columns = good.replace("\tobj\t_\t_", "\tobj\t_")
    path = write("mixed.conllu", "\n".join([good, bad_head, good, bad_columns]))
    stats = CorpusStats()
    records = list(read_conllu(path, on_invalid=stats.skip_error))
    assert len(records) == 2
    assert stats.skipped == 2
    assert stats.skipped_by_reason == {"head": 1, "column_count": 1}
    wheres = [item["where"] for item in stats.skipped_items]
    assert wheres == [f"{path}:9", f"{path}:19"]
