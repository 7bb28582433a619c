"""Training and prediction words/s of lisa_cpu and the transformer default on one GPU,
beside the same figures on the CPU.

For each config (default: configs/lisa_cpu.cfg and configs/lisa_trf_marked.cfg) and each
device (the CPU, and GPU 0 where this installation can use it; each in a process of its
own, as thinc's ops are chosen per process):

- training: ``nlp.update`` on the config's own training batches (its
  ``[training.batcher]``) of ``--train``, timed after ``--warmup`` steps: median words/s
  and the median batch size in words;
- prediction: ``nlp.pipe`` over the sentences of ``--dev`` (gold tokens), with their gold
  predicates marked (``predicate_source = "doc"``), so that the predicate-aware mode
  encodes as many marked windows as a trained model finding them would; batch size the
  config's ``[nlp] batch_size`` or ``--batch-size``: words/s over the whole set after one
  warm-up batch.

The pipelines are initialised from their configs, not trained: speed does not depend on
the weights once the predicates are fixed. The precision each run uses is printed:
float32, or the LISA layers' ``mixed_precision`` (float16 on a GPU only) and the
transformer's ``autocast`` dtype (:func:`spacy_lisa.device.choose_autocast`).

    python benchmarks/bench_gpu.py                       # both configs, CPU and GPU 0
    python benchmarks/bench_gpu.py --configs lisa_cpu --steps 5 --warmup 1 --limit 200
    python benchmarks/bench_gpu.py --devices cpu --threads 2
    python benchmarks/bench_gpu.py --autocast on         # transformer autocast forced on
    python benchmarks/bench_gpu.py --devices cpu --shrink  # the host's ceiling: tiny encoders
    python benchmarks/bench_gpu.py --train-batch-words 6000 --batch-size 1024  # bigger batches

lisa_cpu reads the static vectors of the project's ``vectors`` step
(training/minilm_vectors; ``--vectors`` for another path).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

from machine import describe, machine

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", default="lisa_cpu,lisa_trf_marked", help="names in configs/")
    parser.add_argument("--devices", default="cpu,gpu", help="cpu, gpu (GPU 0) or both")
    parser.add_argument("--train", default="corpus/train.spacy")
    parser.add_argument("--dev", default="corpus/dev.spacy")
    parser.add_argument("--vectors", default="training/minilm_vectors")
    parser.add_argument("--steps", type=int, default=20, help="timed training steps")
    parser.add_argument("--warmup", type=int, default=3, help="training steps not timed")
    parser.add_argument("--limit", type=int, default=2000, help="sentences read from each set")
    parser.add_argument("--batch-size", type=int, default=0, help="docs per nlp.pipe batch")
    parser.add_argument(
        "--train-batch-words",
        type=int,
        default=0,
        help="padded words per training batch (training.batcher.size; 0: the config's)",
    )
    parser.add_argument("--threads", type=int, default=2, help="torch threads on the CPU")
    parser.add_argument("--autocast", choices=["config", "on", "off"], default="config")
    parser.add_argument("--transformer", default="", help="paths.transformer_model, if set")
    parser.add_argument("--output", type=Path, help="also write the rows and machine as JSON")
    parser.add_argument(
        "--shrink",
        action="store_true",
        help="the encoder shrunk to almost nothing: the host's share of a step, the ceiling "
        "of any device (benchmarks/pipelines.py, shrunk_config)",
    )
    parser.add_argument("--worker", nargs=2, metavar=("CONFIG", "GPU_ID"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure(args, args.worker[0], int(args.worker[1]))))
        return

    from spacy_lisa.device import gpu_problem, gpu_support

    devices = [d.strip() for d in args.devices.split(",")]
    gpu_ids = [-1] if "cpu" in devices else []
    problem = gpu_problem(0, gpu_support()) if "gpu" in devices else None
    if "gpu" in devices and problem is None:
        gpu_ids.append(0)
    rows = []
    for config in args.configs.split(","):
        for gpu_id in gpu_ids:
            rows.append(_run_worker(args, config.strip(), gpu_id))
    print(
        "| config | device | train words/s | train batch (words) | predict words/s "
        "| predict batch (docs) | precision |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['config']} | {row['device']} | {row['train_wps']:,.0f} "
            f"| {row['train_batch_words']:,.0f} | {row['predict_wps']:,.0f} "
            f"| {row['predict_batch_docs']} | {row['precision']} |"
        )
    if problem is not None:
        print(f"GPU not measured: {problem}")
    print(
        f"{args.steps} timed training steps after {args.warmup}; prediction over "
        f"{rows[0]['predict_words'] if rows else 0:,} words"
    )
    import torch

    torch.set_num_threads(args.threads)  # as in the runs, for the description
    print(describe())
    if args.output is not None:
        report = {"rows": rows, "machine": machine(), "gpu_problem": problem}
        args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf8")


def _run_worker(args: argparse.Namespace, config: str, gpu_id: int) -> Dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", config, str(gpu_id)]
    names = ("train", "dev", "vectors", "steps", "warmup", "limit", "batch_size")
    names += ("train_batch_words", "threads")
    for name in (*names, "transformer"):
        cmd += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    cmd += ["--autocast", args.autocast] + (["--shrink"] if args.shrink else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{config} on {'CPU' if gpu_id < 0 else f'GPU {gpu_id}'} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(args: argparse.Namespace, config_name: str, gpu_id: int) -> Dict[str, Any]:
    """Training and prediction words/s of one config on one device (this process)."""
    import torch
    from pipelines import pipeline_from_config, save_tiny_transformer, shrunk_config
    from spacy.util import load_config, load_model_from_config, registry

    from spacy_lisa.corpus.readers import SRLCorpus
    from spacy_lisa.device import select_device
    from spacy_lisa.frames import predicate_starts
    from spacy_lisa.loading import srl_component

    where = select_device(gpu_id)
    torch.set_num_threads(args.threads)  # a benchmark process: its own setting only
    overrides: Dict[str, Any] = {"paths.train": args.train, "paths.dev": args.dev}
    path = REPO / "configs" / f"{config_name}.cfg"
    raw = load_config(path)
    if raw["paths"].get("vectors") is not None:  # a config with static vectors (lisa_cpu)
        overrides["paths.vectors"] = args.vectors
    if args.transformer and "transformer_model" in raw["paths"]:
        overrides["paths.transformer_model"] = args.transformer
    tok2vec = raw["components"]["lisa_srl"]["model"]["tok2vec"]
    if args.train_batch_words:
        overrides["training.batcher.size"] = args.train_batch_words
    if args.autocast != "config" and "autocast" in tok2vec:
        overrides["components.lisa_srl.model.tok2vec.autocast"] = args.autocast == "on"
    nlp, config = pipeline_from_config(path, overrides)
    if args.shrink:
        tiny = Path(tempfile.mkdtemp()) / "tiny_transformer"
        tok2vec = nlp.config["components"]["lisa_srl"]["model"]["tok2vec"]
        if "name" in tok2vec:
            save_tiny_transformer(tok2vec["name"], tiny)
        nlp = load_model_from_config(shrunk_config(nlp.config, tiny), auto_fill=True)
    train = list(SRLCorpus(args.train, gold_preproc=True, limit=args.limit)(nlp))
    optimizer = nlp.initialize(lambda: train[:200])
    batcher = registry.resolve({"b": config["training"]["batcher"]})["b"]
    batches = []
    for batch in batcher(train):
        batches.append(list(batch))
        if len(batches) == args.warmup + args.steps:
            break
    dropout = float(config["training"]["dropout"])
    rates, sizes = [], []
    for i, batch in enumerate(batches):
        n_words = sum(len(eg.predicted) for eg in batch)
        start = time.perf_counter()
        nlp.update(batch, sgd=optimizer, drop=dropout, losses={})
        _sync(gpu_id)
        if i >= args.warmup:
            rates.append(n_words / (time.perf_counter() - start))
            sizes.append(n_words)

    srl_component(nlp).predicate_source = "doc"
    docs = []
    for eg in SRLCorpus(args.dev, gold_preproc=True, limit=args.limit)(nlp):
        doc = eg.predicted
        doc._.srl_predicates = sorted(set(predicate_starts(eg.reference)))
        docs.append(doc)
    batch_size = args.batch_size or int(config["nlp"]["batch_size"])
    list(nlp.pipe(docs[:batch_size], batch_size=batch_size))  # warm-up
    _sync(gpu_id)
    start = time.perf_counter()
    for _ in nlp.pipe(docs, batch_size=batch_size):
        pass
    _sync(gpu_id)
    n_words = sum(len(doc) for doc in docs)
    return {
        "config": config_name + (" (shrunk)" if args.shrink else ""),
        "device": where,
        "train_wps": statistics.median(rates) if rates else 0.0,
        "train_batch_words": statistics.median(sizes) if sizes else 0,
        "predict_wps": n_words / (time.perf_counter() - start),
        "predict_batch_docs": batch_size,
        "predict_words": n_words,
        "precision": _precision(nlp),
    }


def _precision(nlp: Any) -> str:
    """The precision of the run: the LISA layers' and, for a transformer, its autocast."""
    from spacy_lisa.device import autocast_dtype
    from spacy_lisa.loading import srl_component

    model = srl_component(nlp).model
    parts: List[str] = []
    lisa_shim = model.layers[1].shims[0]
    parts.append("LISA float16 autocast" if lisa_shim._mixed_precision else "LISA float32")
    tok2vec_shims = model.layers[0].shims
    encoder = getattr(tok2vec_shims[0], "encoder", None) if tok2vec_shims else None
    if encoder is not None:
        if not encoder.autocast:
            parts.append("transformer float32")
        else:
            device = next(encoder.parameters()).device
            train = autocast_dtype(device, training=True)
            predict = autocast_dtype(device, training=False)
            parts.append(f"transformer autocast train {train}, predict {predict}")
    return "; ".join(parts)


def _sync(gpu_id: int) -> None:
    if gpu_id >= 0:
        import torch

        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
