"""Throughput of ``spacy-lisa predict`` on one machine against ``--engine ray``, on the same
input in one run:

    python benchmarks/bench_ray.py MODEL INPUT [--batch-size 64] [--shard-lines 10000]
        [--address ADDR] [--json results.json]

Four runs: ``predict -n 1``, ``predict -n 2``, Ray with 1 worker and Ray with 2 workers
(1 CPU each). Figures are docs/s and words/s (tokens of the output records) over the
wall-clock time of each whole call: model loading, Ray's actor start-up and the
validation pass included, as a user waits for them; the local Ray cluster itself is
started once before the runs (or reached with --address). Take real figures on an idle
machine; on a shared one they only show that everything runs.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

from machine import describe


def count_words(paths: List[Path]) -> int:
    words = 0
    for path in paths:
        with open(path, encoding="utf8") as f:
            for line in f:
                words += len(json.loads(line)["tokens"])
    return words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="trained pipeline directory or package name")
    parser.add_argument("input", help="text or JSONL file (one document per line)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--shard-lines", type=int, default=10_000)
    parser.add_argument("--address", default=None, help="Ray cluster (default: local)")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()

    import ray
    import spacy

    from spacy_lisa.predict import predict
    from spacy_lisa.ray_annotate import annotate_ray

    spacy.load(args.model)  # warm-up: imports and disk caches, so that run 1 is not penalised
    results: List[Dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench_ray_") as tmp_dir:
        tmp = Path(tmp_dir)
        for n in (1, 2):
            out = tmp / f"predict_n{n}.jsonl"
            start = time.perf_counter()
            stats = predict(
                args.model, args.input, output=out, batch_size=args.batch_size, n_process=n
            )
            seconds = time.perf_counter() - start
            results.append(
                {
                    "run": f"predict -n {n}",
                    "docs": int(stats["docs"]),
                    "seconds": seconds,
                    "words": count_words([out]),
                }
            )
        if args.address:
            ray.init(address=args.address)
        else:
            ray.init(num_cpus=os.cpu_count() or 2, include_dashboard=False)
        try:
            for workers in (1, 2):
                out_dir = tmp / f"ray_w{workers}"
                start = time.perf_counter()
                stats = annotate_ray(
                    args.model,
                    args.input,
                    out_dir,
                    workers=workers,
                    batch_size=args.batch_size,
                    shard_lines=args.shard_lines,
                )
                seconds = time.perf_counter() - start
                results.append(
                    {
                        "run": f"ray --workers {workers}",
                        "docs": stats["docs"],
                        "seconds": seconds,
                        "words": count_words(sorted(out_dir.glob("*.jsonl"))),
                    }
                )
        finally:
            ray.shutdown()
    print(f"{'run':<18} {'docs':>7} {'words':>9} {'seconds':>8} {'docs/s':>8} {'words/s':>9}")
    for r in results:
        r["docs_per_second"] = r["docs"] / r["seconds"]
        r["words_per_second"] = r["words"] / r["seconds"]
        print(
            f"{r['run']:<18} {r['docs']:>7} {r['words']:>9} {r['seconds']:>8.1f} "
            f"{r['docs_per_second']:>8.1f} {r['words_per_second']:>9.0f}"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf8")
    print(describe())


if __name__ == "__main__":
    main()
