"""merge_sentences: consecutive gold sentences of a document read as one, as a sentence
segmenter that misses a start passes them to lisa_srl on raw text."""

import random

import pytest
import spacy
from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_lisa.corpus import Argument, CorpusStats, Predicate, SentenceRecord
from spacy_lisa.corpus.docbin import DOC_ID_KEY, convert_to_docbin
from spacy_lisa.corpus.merging import merge_consecutive, merge_sentence_docs
from spacy_lisa.corpus.readers import create_srl_corpus_reader
from spacy_lisa.frames import set_srl_frames
from spacy_lisa.teacher_data import TEACHER_KEY


def _sentence(vocab, doc_id, words, heads, frames, *, pos=None):
    doc = Doc(
        vocab,
        words=words,
        heads=heads,
        deps=["ROOT" if h == i else "dep" for i, h in enumerate(heads)],
        pos=pos or ["NOUN"] * len(words),
        lemmas=[w.lower() for w in words],
    )
    doc.user_data[DOC_ID_KEY] = doc_id
    set_srl_frames(doc, frames)
    return doc


def _frames(doc):
    return [(f.predicate.text, [(r.text, r.label_) for r in f.roles]) for f in doc._.srl_frames]


@pytest.fixture
def sentences():
    vocab = Vocab()
    return [
        _sentence(
            vocab,
            "a",
            ["Cats", "like", "milk", "."],
            [1, 1, 1, 1],
            [{"predicate": [1, 2], "roles": [[0, 1, "ARG0"], [2, 3, "ARG1"]]}],
            pos=["NOUN", "VERB", "NOUN", "PUNCT"],
        ),
        _sentence(
            vocab,
            "a",
            ["Dogs", "chase", "them"],
            [1, 1, 1],
            [{"predicate": [1, 2], "roleset": "chase.01", "roles": [[2, 3, "ARG1"]]}],
        ),
        _sentence(vocab, "b", ["Rain", "falls"], [1, 1], [{"predicate": [1, 2], "roles": []}]),
    ]


def test_merged_sentence_is_one_tree_with_every_frame(sentences):
    merged = merge_sentence_docs(sentences[:2])
    assert merged.text == "Cats like milk . Dogs chase them "
    assert len(list(merged.sents)) == 1
    # the second root under the first, as a parser reads two sentences it takes for one
    assert (merged[5].head.i, merged[5].dep_) == (1, "parataxis")
    assert (merged[1].head.i, merged[1].dep_) == (1, "ROOT")
    assert (merged[4].head.i, merged[6].head.i) == (5, 5)
    assert [t.pos_ for t in merged][:4] == ["NOUN", "VERB", "NOUN", "PUNCT"]
    assert [t.lemma_ for t in merged][4:] == ["dogs", "chase", "them"]
    assert _frames(merged) == [
        ("like", [("Cats", "ARG0"), ("milk", "ARG1")]),
        ("chase", [("them", "ARG1")]),
    ]
    assert merged._.srl_frames[1].roleset == "chase.01"
    assert merged.user_data[DOC_ID_KEY] == "a"


def test_merge_consecutive_stays_within_a_document(sentences):
    never = list(merge_consecutive(sentences, 0.0))
    assert [d.text for d in never] == [d.text for d in sentences]
    always = list(merge_consecutive(sentences, 0.999999, rng=random.Random(0)))
    assert [len(d) for d in always] == [7, 2]  # "a" merged, "b" a document of its own
    capped = list(merge_consecutive(sentences, 0.999999, max_tokens=6, rng=random.Random(0)))
    assert [len(d) for d in capped] == [4, 3, 2]


def test_merge_consecutive_keeps_unannotated_sentences_apart(sentences):
    set_srl_frames(sentences[1], None)
    merged = list(merge_consecutive(sentences, 0.999999, rng=random.Random(0)))
    assert [len(d) for d in merged] == [4, 3, 2]


def test_teacher_data_cannot_be_merged(sentences):
    sentences[0].user_data[TEACHER_KEY] = {"roles": [], "tags": [], "frames": []}
    with pytest.raises(ValueError, match="merge_sentences = 0"):
        merge_sentence_docs(sentences[:2])


@pytest.fixture
def corpus_path(tmp_path):
    def record(doc_id, words, predicate):
        n = len(words)
        return SentenceRecord(
            words=words,
            spaces=[True] * n,
            heads=[0] * n,
            deprels=["ROOT"] + ["dep"] * (n - 1),
            predicates=[
                Predicate(
                    index=predicate,
                    span=(predicate, predicate + 1),
                    lemma="x",
                    arguments=[Argument(0, 1, "ARG0")],
                )
            ],
            doc_id=doc_id,
        )

    records = [record("a", [f"w{i}", f"v{i}", "x"], 1) for i in range(40)]
    path = tmp_path / "train.spacy"
    convert_to_docbin(records, path, stats=CorpusStats(), n_sents=1)
    return path


def test_reader_merges_sentences_anew_each_read(corpus_path):
    nlp = spacy.blank("en")
    corpus = create_srl_corpus_reader(corpus_path, gold_preproc=True, merge_sentences=0.5)
    random.seed(0)
    first = list(corpus(nlp))
    second = list(corpus(nlp))
    sizes = [len(eg.reference) for eg in first]
    assert sum(sizes) == 120 and max(sizes) > 3 and min(sizes) == 3
    assert sizes != [len(eg.reference) for eg in second]
    for eg in first:
        # lisa_srl sees one sentence, holding every frame of the sentences merged in it
        assert len(list(eg.x.sents)) == 1 and len(list(eg.reference.sents)) == 1
        frames = _frames(eg.reference)
        assert len(frames) == len(eg.reference) // 3
        assert all(roles == [(p.replace("v", "w"), "ARG0")] for p, roles in frames)
    random.seed(0)
    assert [len(eg.reference) for eg in corpus(nlp)] == sizes  # reproducible for a seed
    plain = create_srl_corpus_reader(corpus_path, gold_preproc=True)
    assert [len(eg.reference) for eg in plain(nlp)] == [3] * 40


@pytest.mark.parametrize("rate,gold_preproc", [(0.2, False), (1.0, True), (-0.1, True)])
def test_reader_rejects_merging_it_cannot_do(corpus_path, rate, gold_preproc):
    with pytest.raises(ValueError, match="merge_sentences"):
        create_srl_corpus_reader(corpus_path, gold_preproc=gold_preproc, merge_sentences=rate)
