"""The EWT join on a hand-made miniature of the release layout."""

import pytest
from corpus_helpers import block, frames_of, tabs

from spacy_lisa.corpus import CorpusFormatError, CorpusStats
from spacy_lisa.corpus.ewt import join_ewt, join_trees, propbank_doc_key

UD = tabs(
    """
    # newdoc id = answers-d1
    # sent_id = answers-d1-0001
    1  I     I     PRON   PRP  _  2  nsubj   _  _
    2  like  like  VERB   VBP  _  0  root    _  _
    3  cats  cat   NOUN   NNS  _  2  obj     _  SpaceAfter=No
    4  .     .     PUNCT  .    _  2  punct   _  _

    # sent_id = answers-d1-0002
    1-2  Don't  _  _      _    _  _  _       _  _
    1    Do     do  AUX   VBP  _  3  aux     _  _
    2    n't    not PART  RB   _  3  advmod  _  _
    3    go     go  VERB  VB   _  0  root    _  _

    # sent_id = answers-d1-0003
    1  basically  basically  ADV  RB  _  0  root  _  _

    # newdoc id = email-d2
    # sent_id = email-d2-0001
    1  Hi  hi  INTJ  UH  _  0  root  _  _

    # newdoc id = reviews-d3
    # sent_id = reviews-d3-0001
    1  Good  good  ADJ  JJ  _  0  root  _  _

    # sent_id = reviews-d3-0002
    1  Bad  bad  ADJ  JJ  _  0  root  _  _
    """
)

D1 = block(
    """
    google/ewt/answers/00/d1.xml  0  0  [WORD]  PRP  (TOP(S(NP*)  -     -        (ARG0*)
    google/ewt/answers/00/d1.xml  0  1  [WORD]  VBP  (VP*         like  like.01  (V*)
    google/ewt/answers/00/d1.xml  0  2  [WORD]  NNS  (NP*))       -     -        (ARG1*)
    google/ewt/answers/00/d1.xml  0  3  [WORD]  .    *))          -     -        *

    google/ewt/answers/00/d1.xml  1  0  [WORD]  VBP  (TOP(S(VP*   do    do.01    (V*)  (ARGM-MOD*)
    google/ewt/answers/00/d1.xml  1  1  [WORD]  RB   *            -     -        *     (ARGM-NEG*)
    google/ewt/answers/00/d1.xml  1  2  [WORD]  VB   (VP*)))      go    go.01    *     (V*)
    """
)

D1_SENT3 = block(
    """
    google/ewt/answers/00/d1.xml  2  0  [WORD]  RB  (TOP(ADVP*   -  -
    google/ewt/answers/00/d1.xml  2  1  [WORD]  GW  *))          -  -
    """
)

D3 = block(
    """
    google/ewt/reviews/00/d3.xml  0  0  [WORD]  JJ  (TOP*)  -  -
    """
)


@pytest.fixture
def ewt(write):
    """A miniature EWT: UD file and PropBank folder."""
    ud = write("ud/en_ewt-ud-mini.conllu", UD)
    # d1's third sentence splits "basically" in two, as the real train data does once
    write("propbank/answers/00/d1.xml.gold_skel", D1 + "\n" + D1_SENT3)
    write("propbank/reviews/00/d3.xml.gold_skel", D3)
    write("propbank/weblog/00/other.xml.gold_skel", D3.replace("reviews/00/d3", "weblog/00/other"))
    return ud, ud.parent.parent / "propbank"


def test_propbank_doc_key(tmp_path):
    assert propbank_doc_key(tmp_path / "answers/00/d1.xml.gold_skel") == "answers-d1"
    assert propbank_doc_key(tmp_path / "email/00/enron_01.xml.gold_conll") == "email-enron_01"


def test_join_ewt(ewt):
    ud, propbank = ewt
    stats = CorpusStats()
    records = list(join_ewt(ud, propbank, stats=stats))
    assert [r.sent_id for r in records] == ["answers-d1-0001", "answers-d1-0002", "email-d2-0001"]
    first, second, third = records
    assert first.words == ["I", "like", "cats", "."]  # UD words, not [WORD]
    assert first.heads == [1, 1, 1, 1] and first.deprels[1] == "ROOT"
    assert frames_of(first) == [((1, 2), "like", "like.01", [(0, 1, "ARG0"), (2, 3, "ARG1")])]
    assert frames_of(second) == [
        ((0, 1), "do", "do.01", []),
        ((2, 3), "go", "go.01", [(0, 1, "ARGM-MOD"), (1, 2, "ARGM-NEG")]),
    ]
    # a UD document without PropBank file: written, but without SRL annotation
    assert third.predicates is None
    # the rest is reported, with reasons
    assert stats.skipped_by_reason == {"token_count_mismatch": 1, "sentence_count_mismatch": 2}
    by_reason = {item["reason"]: item for item in stats.skipped_items}
    assert (
        "answers-d1-0003: 1 UD words, 2 PropBank tokens"
        in by_reason["token_count_mismatch"]["detail"]
    )
    assert by_reason["sentence_count_mismatch"]["where"] == "reviews-d3"
    assert stats.notes["ud_documents_without_propbank"] == 1
    assert stats.notes["propbank_documents_not_in_ud"] == 1


def test_join_ewt_invalid_propbank_sentence(ewt):
    ud, propbank = ewt
    path = propbank / "answers/00/d1.xml.gold_skel"
    path.write_text(path.read_text().replace("(ARG1*)", "(ARG1*"))
    with pytest.raises(CorpusFormatError) as info:
        list(join_ewt(ud, propbank))
    assert info.value.path == str(path) and info.value.line == 3
    stats = CorpusStats()
    records = list(join_ewt(ud, propbank, stats=stats, on_invalid=stats.skip_error))
    # the broken first sentence is skipped, the second still lines up with its tree
    assert [r.sent_id for r in records] == ["answers-d1-0002", "email-d2-0001"]
    assert records[0].predicates[1].roleset == "go.01"
    assert stats.skipped_by_reason["unbalanced_bracket"] == 1


def test_join_ewt_invalid_ud_sentence(ewt):
    ud, propbank = ewt
    ud.write_text(
        ud.read_text().replace("cats\tcat\tNOUN\tNNS\t_\t2", "cats\tcat\tNOUN\tNNS\t_\t3")
    )
    stats = CorpusStats()
    records = list(join_ewt(ud, propbank, stats=stats, on_invalid=stats.skip_error))
    assert [r.sent_id for r in records] == ["answers-d1-0002", "email-d2-0001"]
    assert stats.skipped_by_reason["head_cycle"] == 1


def test_join_ewt_empty_propbank_file_skips_its_document(ewt):
    ud, propbank = ewt
    (propbank / "answers/00/d1.xml.gold_skel").write_text("")
    stats = CorpusStats()
    records = list(join_ewt(ud, propbank, stats=stats, on_invalid=stats.skip_error))
    assert [r.sent_id for r in records] == ["email-d2-0001"]
    assert stats.skipped_by_reason["empty_file"] == 1
    assert stats.skipped_by_reason["propbank_file_invalid"] == 3


def test_join_ewt_needs_propbank_files(ewt, tmp_path):
    ud, _ = ewt
    (tmp_path / "nothing").mkdir()
    with pytest.raises(CorpusFormatError, match="no PropBank files"):
        list(join_ewt(ud, tmp_path / "nothing"))


def test_join_trees_by_document(ewt, write):
    ud, propbank = ewt
    words = iter(["I", "like", "cats", ".", "Do", "n't", "go", "basic", "ally"])
    text = (propbank / "answers/00/d1.xml.gold_skel").read_text()
    text = "\n".join(
        line.replace("[WORD]", next(words)) if line else line for line in text.split("\n")
    )
    conll = write("d1.gold_conll", text)
    stats = CorpusStats()
    records = list(join_trees(ud, [conll], stats=stats))
    # only the CoNLL-2012 document is converted, joined with its trees by document id
    assert [r.sent_id for r in records] == ["answers-d1-0001", "answers-d1-0002"]
    assert records[0].heads == [1, 1, 1, 1]
    assert stats.skipped_by_reason == {"token_count_mismatch": 1}
    assert stats.notes["tree_documents_unused"] == 2


def test_join_trees_in_order(write):
    trees = write(
        "t.conllu",
        tabs(
            """
            1  I     I     PRON  PRP  _  2  nsubj  _  _
            2  like  like  VERB  VBP  _  0  root   _  _
            3  cats  cat   NOUN  NNS  _  2  obj    _  _
            """
        ),
    )
    conll = write(
        "x.gold_conll",
        block(
            """
            bc/x  0  0  I     PRP  *  -     -        (ARG0*)
            bc/x  0  1  like  VBP  *  like  like.01  (V*)
            bc/x  0  2  cats  NNS  *  -     -        (ARG1*)
            """
        ),
    )
    (record,) = join_trees(trees, [conll])
    assert record.heads == [1, 1, 1]
    assert frames_of(record) == [((1, 2), "like", "like.01", [(0, 1, "ARG0"), (2, 3, "ARG1")])]
    with pytest.raises(CorpusFormatError, match="cannot align"):
        list(join_trees(trees, [conll, conll]))
