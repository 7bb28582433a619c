"""Dev F1 against training time on this machine, for comparing recipes (e.g. to pick
the transformer default by dev F1 per CPU-hour).

Training runs share the box with other work, so their wall times are not figures. This
script measures, on an idle box, what one ``nlp.update`` costs per training word for each
config, on batches made by the config's own batcher from the training data:

- a *cold* pass over the batches: for a frozen transformer with a cache
  (``configs/lisa_trf_frozen.cfg``) this includes running the transformer, which happens
  once per training sentence (the first epoch);
- a *warm* pass over the same batches (the cache filled): what every later step costs.

Then it reads each config's ``spacy train`` log (the dev ``SRL_F`` column at every
evaluation) and prints dev F1 against the estimated update time to that step:
first-epoch words x cold cost + the remaining words x warm cost, with the words per step
the median of the measured batches. Dev evaluations are not counted (both recipes evaluate
the same dev set as often).

    python benchmarks/training_cost.py \\
        --run configs/lisa_trf.cfg training/lisa_trf.log \\
        --run configs/lisa_trf_frozen.cfg training/lisa_trf_frozen.log [--steps 6]
"""

from __future__ import annotations

import argparse
import itertools
import re
import statistics
import time
from pathlib import Path
from typing import Dict, List, Tuple

import torch
from machine import describe
from pipelines import pipeline_from_config
from spacy.util import registry

from spacy_lisa.corpus.readers import SRLCorpus


def update_costs(
    config_path: str, train: str, steps: int, init_examples: int
) -> Tuple[float, float, float, int]:
    """(cold s/word, warm s/word, median words per step, training words in one epoch)."""
    nlp, config = pipeline_from_config(config_path)
    examples = list(SRLCorpus(train, gold_preproc=True)(nlp))
    optimizer = nlp.initialize(lambda: examples[:init_examples])
    batcher = registry.resolve({"b": config["training"]["batcher"]})["b"]
    batches = list(itertools.islice(batcher(examples), steps))
    words = [sum(len(eg.reference) for eg in batch) for batch in batches]
    cold, warm = [], []
    for rates in (cold, warm):  # the same batches twice: the second pass hits any cache
        for batch, n in zip(batches, words, strict=True):
            start = time.perf_counter()
            nlp.update(batch, sgd=optimizer, drop=0.1, losses={})
            rates.append((time.perf_counter() - start) / n)
    epoch_words = sum(len(eg.reference) for eg in examples)
    # the first step also builds lazily allocated state: leave it out of the medians
    return (
        statistics.median(cold[1:]),
        statistics.median(warm[1:]),
        statistics.median(words),
        epoch_words,
    )


def dev_curve(log: Path) -> List[Tuple[int, float]]:
    """(step, dev SRL F1) of every evaluation row of a ``spacy train`` console log (lines
    may start with an HH:MM:SS time stamp)."""
    columns: List[str] = []
    curve = []
    for line in log.read_text().splitlines():
        fields = line.split()
        if fields and re.fullmatch(r"\d\d:\d\d:\d\d", fields[0]):
            fields = fields[1:]
        if fields[:2] == ["E", "#"]:
            columns = fields
        elif columns and len(fields) == len(columns) - 1 and re.fullmatch(r"\d+", fields[0]):
            # the header's "LOSS LISA_SRL" is two words for one column
            row = dict(zip(columns[:2] + columns[3:], fields, strict=True))
            curve.append((int(row["#"]), float(row["SRL_F"])))
    return curve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", nargs=2, action="append", metavar=("CONFIG", "LOG"), required=True)
    parser.add_argument("--train", default="corpus/train.spacy")
    parser.add_argument("--steps", type=int, default=6, help="batches timed per pass")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--init-examples", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)  # benchmark script: sets threads for itself only

    results: Dict[str, List[Tuple[int, float, float]]] = {}
    for config_path, log in args.run:
        cold, warm, per_step, epoch = update_costs(
            config_path, args.train, args.steps, args.init_examples
        )
        name = Path(config_path).stem
        print(
            f"{name}: {1 / cold:,.0f} words/s cold, {1 / warm:,.0f} warm; "
            f"{per_step:,.0f} words a step, {epoch:,} words an epoch"
        )
        rows = []
        for step, f1 in dev_curve(Path(log)):
            seen = step * per_step
            seconds = min(seen, epoch) * cold + max(0.0, seen - epoch) * warm
            rows.append((step, seconds / 60, f1))
        results[name] = rows
    print(f"\n{'config':<22} {'step':>6} {'update minutes':>15} {'dev SRL F1':>11}")
    for name, rows in results.items():
        for step, minutes, f1 in rows:
            print(f"{name:<22} {step:>6} {minutes:>15.1f} {f1:>11.2f}")
    print(f"\nMeasured with {args.threads} torch thread(s); valid on an idle box only.")
    print(describe())


if __name__ == "__main__":
    main()
