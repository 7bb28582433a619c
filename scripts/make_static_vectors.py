"""Static word vectors distilled from the local MiniLM by model2vec, for ``lisa_cpu``'s Tok2Vec.

model2vec's ``distill`` encodes every token of the MiniLM vocabulary, and every word we
add to it, alone through the transformer, mean-pools the output, reduces it by PCA to
``--dims`` dimensions and weights each token by its frequency rank (SIF). This table beat
the hand-written distillation it replaced on the held-out training documents
(docs/benchmarks/levers.md, "Static vectors").

Words: the lower-cased training vocabulary plus every whole-word entry of the MiniLM
vocabulary (never the dev or test words), each encoded by the distilled model (L2-normed).
MiniLM is uncased, so each row is found by every case of its word. The table is written as
a spaCy pipeline directory for ``[initialize] vectors``:

    python scripts/make_static_vectors.py corpus/train_fit.spacy training/minilm_vectors
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import spacy
from model2vec.distill import distill
from spacy.tokens import DocBin
from spacy.vectors import Vectors

from spacy_lisa.models.pretrained import DEFAULT_ENCODER, local_model_path


def training_forms(train: Path, vocab: spacy.Vocab) -> dict[str, set[str]]:
    """The words of a training ``.spacy`` file: each lower case with the forms it takes."""
    forms: dict[str, set[str]] = {}
    for doc in DocBin().from_disk(train).get_docs(vocab):
        for token in doc:
            if token.lower_.strip():
                forms.setdefault(token.lower_, set()).add(token.text)
    return forms


def keyed_by_case(nlp: spacy.Language, words: list[str], table: np.ndarray, forms: dict) -> Vectors:
    """One row per lower-cased word, found by that word, its capitalised and upper-case
    forms and every form the training data has: spaCy saves a default table's ``attr`` as
    ORTH whatever it was made with, so a ``LOWER`` key would not survive ``to_disk``."""
    vectors = Vectors(data=table, keys=words, strings=nlp.vocab.strings)
    for row, word in enumerate(words):
        for form in {word.capitalize(), word.upper()} | forms.get(word, set()):
            if form != word:
                vectors.add(nlp.vocab.strings.add(form), row=row)
    return vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train", type=Path, help="training .spacy file (its words)")
    parser.add_argument("output", type=Path, help="spaCy pipeline directory to write")
    parser.add_argument("--model", default=DEFAULT_ENCODER)
    parser.add_argument("--dims", type=int, default=256)
    args = parser.parse_args()
    began = time.time()
    # model2vec logs a line per added word it already holds
    logging.getLogger("model2vec").setLevel(logging.ERROR)
    nlp = spacy.blank("en")
    forms = training_forms(args.train, nlp.vocab)
    static = distill(local_model_path(args.model), vocabulary=sorted(forms), pca_dims=args.dims)
    pieces = static.tokenizer.get_vocab()
    words = sorted(set(forms) | {w for w in pieces if w.isalpha() and not w.startswith("##")})
    table = np.asarray(static.encode(words), dtype="float32")
    table /= np.maximum(np.linalg.norm(table, axis=1, keepdims=True), 1e-12)
    nlp.vocab.vectors = keyed_by_case(nlp, words, table, forms)
    args.output.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(args.output)
    took = time.time() - began
    print(f"{len(words)} words x {table.shape[1]} dims -> {args.output} ({took:.0f} s)")


if __name__ == "__main__":
    main()
