"""SRL P/R/F of a trained ``lisa_srl`` decoded at several Viterbi transition weights, on
the last N sentences of a .spacy file (gold tokens, the model's own parse, strict
convention). Choose the weight on *training* data, never on dev:

    python benchmarks/transition_weight_sweep.py training/lisa_cpu/model-best \\
        corpus/train.spacy --last 3000 --weights 0.15,0.25,0.35,0.5
"""

from __future__ import annotations

import argparse
from pathlib import Path

import spacy
import torch
from spacy.tokens import DocBin
from spacy.training import Example

from spacy_lisa.cli.evaluate import _gold_preproc_doc
from spacy_lisa.frames import has_srl_annotation
from spacy_lisa.pipeline.scorer import evaluate_srl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("data", type=Path)
    parser.add_argument("--last", type=int, default=3000, help="sentences from the end")
    parser.add_argument("--weights", default="0.15,0.25,0.35,0.5")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    nlp = spacy.load(args.model)
    gold = [d for d in DocBin().from_disk(args.data).get_docs(nlp.vocab) if has_srl_annotation(d)]
    gold = gold[-args.last :]
    srl = nlp.get_pipe("lisa_srl")
    srl.parse_source = "model"  # type: ignore[attr-defined]
    print(f"{len(gold)} sentences of {args.data}")
    for weight in (float(w) for w in args.weights.split(",")):
        srl.cfg["transition_weight"] = weight  # type: ignore[attr-defined]
        docs = nlp.pipe([_gold_preproc_doc(nlp, g) for g in gold], batch_size=64)
        scores = evaluate_srl([Example(p, g) for p, g in zip(docs, gold, strict=True)]).to_scores()
        print(
            f"weight {weight:<5} P {100 * scores['srl_p']:.2f}  R {100 * scores['srl_r']:.2f}  "
            f"F1 {100 * scores['srl_f']:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
