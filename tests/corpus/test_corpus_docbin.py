"""Records -> Docs -> DocBin: attributes, frames, None vs [] and grouping."""

import pytest
from oracles import records_to_docs
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from spacy_lisa.corpus import Argument, CorpusFormatError, CorpusStats, Predicate, SentenceRecord
from spacy_lisa.corpus.docbin import (
    DOC_ID_KEY,
    SENT_IDS_KEY,
    convert_to_docbin,
    read_docbin,
    records_to_doc,
)
from spacy_lisa.frames import has_srl_annotation


def _record(doc_id="d1", sent_id="s1", predicates=(), tree=True, words=("I", "like", "cats")):
    n = len(words)
    return SentenceRecord(
        words=list(words),
        spaces=[True] * (n - 1) + [False],
        lemmas=[w.lower() for w in words],
        upos=["PRON", "VERB", "NOUN"][:n] if n <= 3 else ["X"] * n,
        xpos=["PRP", "VBP", "NNS"][:n] if n <= 3 else ["XX"] * n,
        morphs=["Case=Nom", "", "Number=Plur"][:n] if n <= 3 else [""] * n,
        heads=[1, 1, 1][:n] if tree and n == 3 else ([0] * n if tree else None),
        deprels=["nsubj", "ROOT", "obj"][:n]
        if tree and n == 3
        else (["ROOT"] * n if tree else None),
        predicates=None if predicates is None else list(predicates),
        doc_id=doc_id,
        sent_id=sent_id,
    )


LIKE = Predicate(
    index=1,
    span=(1, 2),
    lemma="like",
    roleset="like.01",
    arguments=[Argument(0, 1, "ARG0"), Argument(2, 3, "ARG1")],
)


def test_record_to_doc_attributes_and_frames():
    doc = records_to_doc(Vocab(), [_record(predicates=[LIKE])])
    assert [t.text for t in doc] == ["I", "like", "cats"]
    assert doc.text == "I like cats"
    assert [t.tag_ for t in doc] == ["PRP", "VBP", "NNS"]
    assert [t.pos_ for t in doc] == ["PRON", "VERB", "NOUN"]
    assert [t.lemma_ for t in doc] == ["i", "like", "cats"]
    assert str(doc[2].morph) == "Number=Plur"
    assert [t.head.i for t in doc] == [1, 1, 1]
    assert [t.dep_ for t in doc] == ["nsubj", "ROOT", "obj"]
    (frame,) = doc._.srl_frames
    assert (frame.predicate.text, frame.lemma, frame.roleset) == ("like", "like", "like.01")
    assert [(r.text, r.label_) for r in frame.roles] == [("I", "ARG0"), ("cats", "ARG1")]
    # the V span is the predicate, never a role
    assert [(s.start, s.end, s.label_) for s in doc.spans["srl"]] == [
        (0, 1, "ARG0"),
        (2, 3, "ARG1"),
    ]
    assert doc.user_data[DOC_ID_KEY] == "d1" and doc.user_data[SENT_IDS_KEY] == ["s1"]


def test_unannotated_and_annotated_without_predicates_survive_docbin(tmp_path):
    records = [_record(predicates=None), _record(predicates=[])]
    stats = CorpusStats()
    convert_to_docbin(records, tmp_path / "x.spacy", stats=stats)
    unannotated, empty = read_docbin(tmp_path / "x.spacy")
    assert not has_srl_annotation(unannotated) and unannotated._.srl_frame_data is None
    # (msgpack gives lists back as tuples)
    assert has_srl_annotation(empty) and list(empty._.srl_frame_data) == []
    assert (stats.sentences, stats.sentences_with_srl, stats.docs_written) == (2, 1, 2)


def test_frames_survive_docbin(tmp_path):
    convert_to_docbin([_record(predicates=[LIKE])], tmp_path / "x.spacy", stats=CorpusStats())
    (doc,) = read_docbin(tmp_path / "x.spacy")
    assert [f.to_frame_data() for f in doc._.srl_frames] == [
        {
            "predicate": [1, 2],
            "roleset": "like.01",
            "lemma": "like",
            "roles": [[0, 1, "ARG0"], [2, 3, "ARG1"]],
        }
    ]
    assert len(doc.spans["srl"]) == 2


def test_grouping_offsets_frames_and_keeps_sentences():
    records = [_record(sent_id=f"s{i}", predicates=[LIKE]) for i in range(5)]
    docs = list(records_to_docs(records, n_sents=2))
    assert [len(list(d.sents)) for d in docs] == [2, 2, 1]
    first = docs[0]
    assert [f.predicate.start for f in first._.srl_frames] == [1, 4]
    assert [(r.start, r.label_) for r in first._.srl_frames[1].roles] == [(3, "ARG0"), (5, "ARG1")]
    assert [t.head.i for t in first] == [1, 1, 1, 4, 4, 4]
    assert first.user_data[SENT_IDS_KEY] == ["s0", "s1"]


def test_grouping_never_mixes_documents_or_annotation():
    records = [
        _record(doc_id="a", predicates=[]),
        _record(doc_id="a", predicates=None),  # no SRL: a new Doc
        _record(doc_id="b", predicates=None),  # another document: a new Doc
        _record(doc_id="b", predicates=None, tree=False),  # no tree: a new Doc
        _record(doc_id="b", predicates=None, tree=False),
    ]
    docs = list(records_to_docs(records, n_sents=10))
    assert [len(d) for d in docs] == [3, 3, 3, 6]
    # without trees the sentence starts are set directly
    assert [s.start for s in docs[3].sents] == [0, 3]
    assert not docs[3].has_annotation("DEP")


def test_invalid_upos_names_the_sentence():
    record = _record()
    record.upos = ["PRON", "VERBISH", "NOUN"]
    record.path, record.line = "x.conllu", 7
    with pytest.raises(CorpusFormatError, match="x.conllu:7.*'VERBISH'"):
        records_to_doc(Vocab(), [record])


def test_convert_to_docbin_limit_and_skip_invalid(tmp_path):
    bad = _record(sent_id="bad")
    bad.upos = ["PRON", "NOPE", "NOUN"]
    records = [_record(sent_id="a"), bad, _record(sent_id="c"), _record(sent_id="d")]
    stats = CorpusStats()
    convert_to_docbin(records, tmp_path / "x.spacy", stats=stats, skip_invalid=True, limit=3)
    assert stats.sentences == 2 and stats.skipped_by_reason == {"invalid_upos": 1}
    assert len(DocBin().from_disk(tmp_path / "x.spacy")) == 2
    with pytest.raises(CorpusFormatError):
        convert_to_docbin(records, tmp_path / "y.spacy", stats=CorpusStats())


def test_n_sents_must_be_positive():
    with pytest.raises(ValueError, match="n_sents"):
        list(records_to_docs([_record()], n_sents=0))
