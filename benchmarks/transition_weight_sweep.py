"""SRL P/R/F of a trained ``lisa_srl`` decoded at several Viterbi transition weights, with
and without one span per numbered argument (``unique_core_roles``), on the last N
sentences of a .spacy file (gold tokens, the model's own parse, strict convention), and
how many predicted frames repeat a numbered argument. Choose on *training* data, never
on dev:

    python benchmarks/transition_weight_sweep.py training/lisa_cpu/model-best \\
        corpus/train.spacy --last 3000 --weights 0.15,0.25,0.35,0.5 --unique-core-roles off,on
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import spacy
import torch
from machine import describe
from spacy.tokens import DocBin
from spacy.training import Example

from spacy_lisa.decoding.frames import NUMBERED_ARGUMENT
from spacy_lisa.frames import get_srl_frames, has_srl_annotation
from spacy_lisa.loading import srl_component
from spacy_lisa.scoring.gold_docs import gold_preproc_doc
from spacy_lisa.scoring.scorer import evaluate_srl


def repeats_numbered_argument(frame) -> bool:
    counts = Counter(r.label_ for r in frame.roles if NUMBERED_ARGUMENT.fullmatch(r.label_))
    return any(n > 1 for n in counts.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("data", type=Path)
    parser.add_argument("--last", type=int, default=3000, help="sentences from the end (0: all)")
    parser.add_argument("--weights", default="0.15,0.25,0.35,0.5")
    parser.add_argument("--unique-core-roles", default="on", help="off, on or off,on")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    nlp = spacy.load(args.model)
    gold = [d for d in DocBin().from_disk(args.data).get_docs(nlp.vocab) if has_srl_annotation(d)]
    gold = gold[-args.last :] if args.last else gold
    srl = srl_component(nlp)
    srl.parse_source = "model"
    print(f"{len(gold)} sentences of {args.data}")
    for unique in args.unique_core_roles.split(","):
        if unique not in ("off", "on"):
            raise SystemExit(f"--unique-core-roles: 'off' or 'on', got {unique!r}")
        srl.cfg["unique_core_roles"] = unique == "on"
        for weight in (float(w) for w in args.weights.split(",")):
            srl.cfg["transition_weight"] = weight
            docs = list(nlp.pipe([gold_preproc_doc(nlp.vocab, g) for g in gold], batch_size=64))
            examples = [Example(p, g) for p, g in zip(docs, gold, strict=True)]
            scores = evaluate_srl(examples).to_scores()
            frames = [f for doc in docs for f in get_srl_frames(doc)]
            repeating = sum(repeats_numbered_argument(f) for f in frames)
            print(
                f"unique_core_roles {unique:<3} weight {weight:<5} P {100 * scores['srl_p']:.2f}  "
                f"R {100 * scores['srl_r']:.2f}  F1 {100 * scores['srl_f']:.2f}  "
                f"frames repeating a numbered argument {repeating} of {len(frames)}",
                flush=True,
            )
    print(describe())


if __name__ == "__main__":
    main()
