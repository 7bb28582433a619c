"""scripts/make_static_vectors.py: the project's `vectors` step (model2vec's distillation of
the local MiniLM) gives lisa_cpu a table of the training words, found by every case."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin

from tests.project_testing import REPO, run_checked

TRAINING_WORDS = ["The", "Company", "sold", "zorbleflux", "shares", "."]


@pytest.fixture(scope="module")
def vectors_nlp(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("vectors")
    nlp = spacy.blank("en")
    DocBin(docs=[Doc(nlp.vocab, words=TRAINING_WORDS)]).to_disk(tmp / "train.spacy")
    script = REPO / "scripts" / "make_static_vectors.py"
    run_checked([sys.executable, script, tmp / "train.spacy", tmp / "vectors", "--dims", "64"], tmp)
    return spacy.load(tmp / "vectors")


def test_every_training_word_has_a_unit_vector_found_by_every_case(vectors_nlp):
    vectors = vectors_nlp.vocab.vectors
    assert vectors.shape[1] == 64
    for word in ["the", "company", "zorbleflux", "shares"]:
        assert vectors_nlp.vocab.has_vector(word), word
    # MiniLM is uncased: a token's case does not change its vector, after to_disk too
    doc = vectors_nlp("COMPANY Company company Banana")
    assert doc[2].has_vector and doc[3].has_vector
    assert np.allclose(doc[0].vector, doc[2].vector) and np.allclose(doc[1].vector, doc[2].vector)
    norms = np.linalg.norm(vectors.data, axis=1)
    assert np.allclose(norms[norms > 0], 1.0, atol=1e-3)


def test_only_training_words_and_whole_words_of_the_encoder_vocabulary_are_kept(vectors_nlp):
    vocab = vectors_nlp.vocab
    assert not vocab.has_vector("quuxwobble")  # in neither the training data nor MiniLM's
    assert vocab.has_vector("banana")  # a whole word of MiniLM's vocabulary
    assert not vocab.has_vector("##ing")  # a word piece of MiniLM's vocabulary
    assert vocab.vectors.shape[0] < len(vocab.vectors.key2row)  # rows shared by the cases


def test_the_distilled_vectors_keep_the_encoders_similarities(vectors_nlp):
    vec = {w: vectors_nlp.vocab.get_vector(w) for w in ["company", "business", "banana"]}
    assert vec["company"] @ vec["business"] > vec["company"] @ vec["banana"] + 0.1
