"""The lemma most-frequent-sense baseline on gold predicates: each gold predicate of
DATA gets the most frequent training roleset of its lemma (``token.lemma_`` of its
first token; ``lemma.01`` for lemmas never seen in training), scored against the gold
roleset. With a model, ``spacy-lisa evaluate MODEL DATA --sense-baseline TRAIN`` puts
the same baseline beside the model's sense accuracy on the predicates it found.

    python benchmarks/sense_baseline.py corpus/train.spacy corpus/dev.spacy
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import spacy
from machine import describe
from spacy.tokens import DocBin

from spacy_lisa.pipeline.scorer import PREDICATE_POS, lemma_mfs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train", type=Path)
    parser.add_argument("data", type=Path)
    args = parser.parse_args()
    nlp = spacy.blank("en")
    table = lemma_mfs(DocBin().from_disk(args.train).get_docs(nlp.vocab))
    right: Counter = Counter()
    total: Counter = Counter()
    unseen = 0
    for doc in DocBin().from_disk(args.data).get_docs(nlp.vocab):
        for frame in doc._.srl_frames:
            if not frame.roleset:
                continue
            token = doc[frame.predicate.start]
            pos = token.pos_ if token.pos_ in PREDICATE_POS else "other"
            unseen += int(token.lemma_ not in table)
            guess = table.get(token.lemma_, f"{token.lemma_}.01")
            for key in ("all", pos):
                total[key] += 1
                right[key] += int(guess == frame.roleset)
    print(f"lemmas in the table: {len(table)}; gold predicates with a roleset: {total['all']}")
    print(f"unseen lemmas (guessed lemma.01): {unseen}")
    for key in ("all", *PREDICATE_POS):
        if total[key]:
            print(f"{key:6s} {100 * right[key] / total[key]:6.2f}  ({right[key]}/{total[key]})")
    print(describe())


if __name__ == "__main__":
    main()
