"""spacy-lisa.SRLCorpus.v1: gold frames on the reference docs, also on sentence cuts."""

import logging

import pytest
import spacy
from spacy.util import registry

from spacy_lisa.corpus import Argument, CorpusStats, Predicate, SentenceRecord
from spacy_lisa.corpus.docbin import convert_to_docbin
from spacy_lisa.corpus.readers import SRLCorpus, create_srl_corpus_reader


def _record(doc_id, words, predicates):
    n = len(words)
    return SentenceRecord(
        words=words,
        spaces=[True] * n,
        heads=[0] * n,  # every word under the first
        deprels=["ROOT"] + ["dep"] * (n - 1),
        predicates=predicates,
        doc_id=doc_id,
    )


def _pred(index, *args):
    return Predicate(index=index, span=(index, index + 1), lemma="x", arguments=list(args))


@pytest.fixture
def corpus_path(tmp_path):
    records = [
        # one Doc of two sentences with a frame each
        _record("a", ["Cats", "like", "milk"], [_pred(1, Argument(0, 1, "ARG0"))]),
        _record("a", ["Dogs", "chase", "cats"], [_pred(1, Argument(2, 3, "ARG1"))]),
        _record("b", ["No", "SRL"], None),
        _record("c", ["Rain", "falls"], [_pred(1, Argument(0, 1, "ARG1"))]),
    ]
    path = tmp_path / "train.spacy"
    convert_to_docbin(records, path, stats=CorpusStats(), n_sents=2)
    return path


def _frames(example):
    return [
        (f.predicate.text, [(r.text, r.label_) for r in f.roles])
        for f in example.reference._.srl_frames
    ]


def test_registered_through_entry_point():
    assert registry.readers.get("spacy-lisa.SRLCorpus.v1") is create_srl_corpus_reader


def test_gold_preproc_cuts_sentences_with_their_frames(corpus_path, caplog):
    nlp = spacy.blank("en")
    corpus = create_srl_corpus_reader(corpus_path, gold_preproc=True)
    with caplog.at_level(logging.WARNING, logger="spacy_lisa"):
        examples = list(corpus(nlp))
        list(corpus(nlp))  # a second epoch logs nothing new
    assert [[t.text for t in eg.reference] for eg in examples] == [
        ["Cats", "like", "milk"],
        ["Dogs", "chase", "cats"],
        ["Rain", "falls"],
    ]
    assert [_frames(eg) for eg in examples] == [
        [("like", [("Cats", "ARG0")])],
        [("chase", [("cats", "ARG1")])],
        [("falls", [("Rain", "ARG1")])],
    ]
    assert [len(eg.reference.spans["srl"]) for eg in examples] == [1, 1, 1]
    # the doc without SRL annotation is left out, counted and logged once
    assert isinstance(corpus, SRLCorpus) and corpus.n_without_srl == 1
    assert len([r for r in caplog.records if "Left out 1 example" in r.getMessage()]) == 1


def test_whole_docs_keep_their_frames(corpus_path):
    nlp = spacy.blank("en")
    examples = list(create_srl_corpus_reader(corpus_path, gold_preproc=False)(nlp))
    assert [len(eg.reference) for eg in examples] == [6, 2]
    assert _frames(examples[0]) == [("like", [("Cats", "ARG0")]), ("chase", [("cats", "ARG1")])]


def test_max_length_cuts_long_docs_into_sentences(corpus_path):
    nlp = spacy.blank("en")
    examples = list(create_srl_corpus_reader(corpus_path, gold_preproc=False, max_length=4)(nlp))
    assert [len(eg.reference) for eg in examples] == [3, 3, 2]
    assert _frames(examples[1]) == [("chase", [("cats", "ARG1")])]


def test_require_srl_false_keeps_unannotated_docs(corpus_path):
    nlp = spacy.blank("en")
    corpus = create_srl_corpus_reader(corpus_path, gold_preproc=False, require_srl=False)
    examples = list(corpus(nlp))
    assert len(examples) == 3
    assert examples[1].reference._.srl_frame_data is None


def test_limit_and_config(corpus_path):
    config = {
        "corpus": {
            "@readers": "spacy-lisa.SRLCorpus.v1",
            "path": str(corpus_path),
            "gold_preproc": False,
            "limit": 1,
        }
    }
    corpus = registry.resolve(config)["corpus"]
    assert len(list(corpus(spacy.blank("en")))) == 1


def test_path_is_required():
    with pytest.raises(ValueError, match="needs a path"):
        create_srl_corpus_reader(None, gold_preproc=False)


def test_sentence_doc_cuts_roles_at_the_boundary():
    from spacy.tokens import Doc
    from spacy.vocab import Vocab

    from spacy_lisa.corpus.readers import sentence_doc
    from spacy_lisa.frames import set_srl_frames

    doc = Doc(Vocab(), words=["a", "b", "c", "d"], sent_starts=[True, False, True, False])
    set_srl_frames(doc, [{"predicate": [1, 2], "roles": [[0, 1, "A0"], [1, 4, "A1"]]}])
    first, n_cut = sentence_doc(list(doc.sents)[0])
    assert n_cut == 1
    assert [(r.start, r.end, r.label_) for r in first._.srl_frames[0].roles] == [
        (0, 1, "A0"),
        (1, 2, "A1"),
    ]
    second, _ = sentence_doc(list(doc.sents)[1])
    assert second._.srl_frame_data == []  # annotated, no predicate in this sentence


@pytest.fixture
def splitter_dir(tmp_path):
    """A saved pipeline that starts a sentence after every "like" (the gold documents
    start one at "Dogs"), to tell its boundaries from the gold ones."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer", config={"punct_chars": ["like"]})
    nlp.to_disk(tmp_path / "splitter")
    return tmp_path / "splitter"


def test_sentences_from_splits_whole_docs_as_the_pipeline_does(corpus_path, splitter_dir):
    corpus = create_srl_corpus_reader(
        corpus_path, gold_preproc=False, sentences_from=str(splitter_dir)
    )
    for _ in range(2):  # every evaluation reads the corpus again
        examples = list(corpus(spacy.blank("en")))
        assert [[t.is_sent_start for t in eg.x] for eg in examples] == [
            [True, False, True, False, False, False],
            [True, False],
        ]
        # the reference keeps its gold sentences and frames
        assert [t.is_sent_start for t in examples[0].y] == [True, False, False] * 2
        assert _frames(examples[0]) == [
            ("like", [("Cats", "ARG0")]),
            ("chase", [("cats", "ARG1")]),
        ]


def test_sentences_from_scores_a_trained_pipeline(corpus_path, splitter_dir, srl_model_dir):
    nlp = spacy.load(srl_model_dir)
    corpus = create_srl_corpus_reader(
        corpus_path, gold_preproc=False, sentences_from=str(splitter_dir)
    )
    scores = nlp.evaluate(list(corpus(nlp)))
    assert 0.0 <= scores["srl_f"] <= 1.0 and scores["srl_pred_f"] is not None


def test_sentences_from_needs_whole_documents_and_a_splitter(corpus_path, tmp_path):
    with pytest.raises(ValueError, match="gold_preproc = false"):
        create_srl_corpus_reader(corpus_path, gold_preproc=True, sentences_from="parser")
    spacy.blank("en").to_disk(tmp_path / "blank")
    corpus = create_srl_corpus_reader(
        corpus_path, gold_preproc=False, sentences_from=str(tmp_path / "blank")
    )
    with pytest.raises(ValueError, match="sets no sentence boundaries"):
        list(corpus(spacy.blank("en")))
