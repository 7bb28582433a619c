"""Label training data with a teacher ``lisa_srl`` for knowledge distillation.

Runs a trained pipeline's ``lisa_srl`` (e.g. ``training/lisa_trf/model-best``) over the
training sentences as in training (gold tokens, gold predicates, the gold parse fed to the
layers above its syntactic head) and writes the sentences again with the teacher's role
and POS/predicate distributions (top ``--top-k`` labels each) in their user data
(``spacy_lisa.pipeline.teacher``). Train a student on the output with
``--components.lisa_srl.loss_weights.teacher A`` (0 < A <= 1): the project's
``train-distilled`` command.

    python scripts/teacher_labels.py training/lisa_trf/model-best corpus/train.spacy \\
        corpus/train.teacher.spacy [--top-k 4] [--temperature 1.0] [--gpu-id 0]

Never run it on dev or test data: the output is training data.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from spacy.training.batchers import minibatch_by_words

from spacy_lisa.corpus.docbin import write_docbin
from spacy_lisa.corpus.readers import SRLCorpus
from spacy_lisa.errors import UserError
from spacy_lisa.loading import load_pipeline, srl_component
from spacy_lisa.pipeline.teacher import label_with_teacher


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("teacher", help="a trained pipeline with lisa_srl")
    parser.add_argument("train", type=Path, help="training data (.spacy) with gold frames")
    parser.add_argument("output", type=Path, help="the same sentences with the teacher's data")
    parser.add_argument("--top-k", type=int, default=4, help="labels kept per distribution")
    parser.add_argument("--temperature", type=float, default=1.0, help="softmax temperature")
    parser.add_argument("--batch-words", type=int, default=2000, help="tokens per model call")
    parser.add_argument("--gpu-id", type=int, default=-1, help="GPU to run on; -1 for the CPU")
    args = parser.parse_args()
    if args.top_k < 1 or args.temperature <= 0:
        parser.error("--top-k must be >= 1 and --temperature > 0")

    start = time.perf_counter()
    try:
        nlp = load_pipeline(args.teacher, args.gpu_id)
    except UserError as err:  # the GPU cannot be used, or no lisa_srl pipeline there
        parser.exit(1, f"✘ {err}\n")
    srl = srl_component(nlp)
    examples = list(SRLCorpus(args.train, gold_preproc=True)(nlp))
    # length-sorted calls: little padding
    examples.sort(key=lambda eg: len(eg.reference))
    n_frames = 0
    batches = minibatch_by_words(
        examples,
        size=args.batch_words,
        discard_oversize=False,
        get_length=lambda eg: len(eg.reference),
    )
    for batch in batches:
        n_frames += label_with_teacher(srl, batch, top_k=args.top_k, temperature=args.temperature)
    n_docs = write_docbin((eg.reference for eg in examples), args.output)
    n_words = sum(len(eg.reference) for eg in examples)
    print(
        f"{n_docs} sentences ({n_words} words, {n_frames} frames) labelled by {args.teacher} "
        f"-> {args.output} ({time.perf_counter() - start:.0f} s)"
    )


if __name__ == "__main__":
    main()
