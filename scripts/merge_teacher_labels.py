"""Merge several teachers' labels of the same training sentences into an ensemble teacher.

Each input is the output of ``scripts/teacher_labels.py`` for one teacher, run on the same
training file (so the sentences come in the same order). The output carries, per token and
per gold predicate, the weighted mean of the teachers' distributions, cut to ``--top-k``
labels (``spacy_lisa.pipeline.teacher.merge_teacher_data``); a student trains on it as on
one teacher's labels.

    python scripts/merge_teacher_labels.py corpus/a/train.teacher.spacy \\
        corpus/b/train.teacher.spacy corpus/ensemble/train.teacher.spacy [--weights 1 1]

Never run it on dev or test data: the output is training data.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from spacy.vocab import Vocab

from spacy_lisa.corpus.docbin import read_docbin, write_docbin
from spacy_lisa.pipeline.teacher import merge_teacher_data
from spacy_lisa.teacher_data import TEACHER_KEY


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", type=Path, nargs="+", help="teacher-labelled .spacy files")
    parser.add_argument("output", type=Path, help="where to write the ensemble's labels")
    parser.add_argument("--weights", type=float, nargs="+", help="one per input (default: equal)")
    parser.add_argument("--top-k", type=int, default=4, help="labels kept per distribution")
    args = parser.parse_args()
    if len(args.inputs) < 2:
        parser.error("give at least two teacher-labelled files and the output")
    if args.weights is not None and (
        len(args.weights) != len(args.inputs) or min(args.weights) <= 0
    ):
        parser.error(f"--weights needs {len(args.inputs)} positive numbers, one per input")
    if args.top_k < 1:
        parser.error("--top-k must be >= 1")

    start = time.perf_counter()
    vocab = Vocab()
    corpora = [read_docbin(path, vocab) for path in args.inputs]
    first = corpora[0]
    for path, corpus in zip(args.inputs[1:], corpora[1:], strict=True):
        if len(corpus) != len(first):
            parser.exit(
                1,
                f"✘ {path} holds {len(corpus)} sentences, {args.inputs[0]} {len(first)}: "
                "label the same training file with every teacher\n",
            )
    weights = args.weights or [1.0] * len(corpora)
    n_merged = 0
    for i, docs in enumerate(zip(*corpora, strict=True)):
        words = [token.text for token in docs[0]]
        for path, doc in zip(args.inputs[1:], docs[1:], strict=True):
            if [token.text for token in doc] != words:
                parser.exit(
                    1,
                    f"✘ sentence {i} of {path} is not sentence {i} of {args.inputs[0]} "
                    f"({doc.text[:60]!r} against {docs[0].text[:60]!r}): label the same "
                    "training file with every teacher\n",
                )
        datas = [doc.user_data.get(TEACHER_KEY) for doc in docs]
        present = [(d, w) for d, w in zip(datas, weights, strict=True) if d is not None]
        if present:
            docs[0].user_data[TEACHER_KEY] = merge_teacher_data(
                [d for d, _ in present], [w for _, w in present], top_k=args.top_k
            )
            n_merged += 1
    write_docbin(first, args.output)
    print(
        f"{len(first)} sentences ({n_merged} with teacher data) from {len(args.inputs)} "
        f"teachers -> {args.output} ({time.perf_counter() - start:.0f} s)"
    )


if __name__ == "__main__":
    main()
