"""Training speed of lisa_srl on TransformerTok2Vec vs. the bare-transformer floor.

Over the same length-bucketed batches as configs/lisa_trf.cfg (batch_by_padded, size 1500,
buffer 256), interleaved step by step, it measures:

(a) floor: bare MiniLM (AutoModel) forward + backward of a dummy loss on the last hidden
    state + a torch AdamW step, tokenised and padded per batch to the longest; no LISA;
(b) ``nlp.update`` of the config's pipeline (initialised on ~200 examples), once per
    ``--encodings`` value (:data:`ENCODINGS`: the single pass, or the predicate-aware
    architecture, which encodes each predicate's window again: "marked" with the
    transformer run again, "marked_upper" with the mark at the LISA layers only),

and prints the median training words/s (spaCy tokens) of each after warm-up, and the ratio.

    python benchmarks/bench_trf_training.py --threads 1 --encodings single_pass,marked,marked_upper

    python benchmarks/bench_trf_training.py --config configs/lisa_trf.cfg --steps 20 --threads 2
    python benchmarks/bench_trf_training.py --autocast off   # bf16 autocast forced off
    python benchmarks/bench_trf_training.py --profile 1   # cProfile one nlp.update step

Box note: figures depend on the machine and its load; on a shared box run under load they
are not valid throughput figures, but the ratio (both measured interleaved on the same
batches) gives a first idea.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import itertools
import pstats
import statistics
import time
from pathlib import Path
from typing import Dict, List

import torch
from machine import describe
from pipelines import pipeline_from_config
from spacy.training.batchers import minibatch_by_padded_size

from spacy_lisa.corpus.readers import SRLCorpus
from spacy_lisa.models.pretrained import DEFAULT_ENCODER, local_model_path

BOX_NOTE = "Numbers under load are not valid figures, the interleaved ratio gives a first idea."


# the config overrides of each encoding: the architecture, and whether the predicate-aware
# one runs the transformer again on each marked window
MODEL = "components.lisa_srl.model"
ENCODINGS = {
    "single_pass": {f"{MODEL}.@architectures": "spacy-lisa.LISA.v1"},
    "marked": {f"{MODEL}.@architectures": "spacy-lisa.PredicateAwareLISA.v1"},
    "marked_upper": {
        f"{MODEL}.@architectures": "spacy-lisa.PredicateAwareLISA.v1",
        f"{MODEL}.reencode": False,
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="configs/lisa_trf.cfg")
    parser.add_argument("--train", default="corpus/train.spacy")
    parser.add_argument("--steps", type=int, default=20, help="measured steps (after warm-up)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--init-examples", type=int, default=200)
    parser.add_argument(
        "--autocast",
        choices=["config", "on", "off"],
        default="config",
        help="bf16 autocast around the transformer: as the config says, or forced on/off",
    )
    parser.add_argument("--profile", type=int, default=0, help="cProfile this many steps")
    parser.add_argument(
        "--encodings",
        default="config",
        help="comma-separated encodings to time side by side "
        "(single_pass, marked, marked_upper; 'config': the config's own)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)  # benchmark script: sets threads for itself only

    overrides = {}
    if args.autocast != "config":
        overrides["components.lisa_srl.model.tok2vec.autocast"] = args.autocast == "on"
    pipelines = {}
    for encoding in args.encodings.split(","):
        these = dict(overrides)
        if encoding != "config":
            these.update(ENCODINGS[encoding])
        pipelines[encoding], config = pipeline_from_config(args.config, these)
    autocast = config["components"]["lisa_srl"]["model"]["tok2vec"].get("autocast", False)
    nlp = next(iter(pipelines.values()))
    corpus = SRLCorpus(args.train, gold_preproc=True)
    examples = list(corpus(nlp))
    print(f"{len(examples)} training examples from {args.train}")
    optimizers = {
        name: pipeline.initialize(lambda: examples[: args.init_examples])
        for name, pipeline in pipelines.items()
    }
    batches = list(
        itertools.islice(
            minibatch_by_padded_size(
                examples,
                size=1500,
                buffer=256,
                discard_oversize=True,
                get_length=lambda eg: len(eg.reference),
            ),
            args.warmup + args.steps,
        )
    )

    # (a) the floor: bare MiniLM, same batches, padded to the longest per batch
    from transformers import AutoModel, AutoTokenizer

    tok2vec_cfg = config["components"]["lisa_srl"]["model"]["tok2vec"]
    path = local_model_path(str(tok2vec_cfg.get("name", DEFAULT_ENCODER)))
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    bare = AutoModel.from_pretrained(path, local_files_only=True)
    bare.train()
    adamw = torch.optim.AdamW(bare.parameters(), lr=5e-5)

    def floor_step(batch) -> None:
        words = [[t.text for t in eg.reference] for eg in batch]
        enc = tokenizer(
            words, is_split_into_words=True, padding=True, truncation=True, return_tensors="pt"
        )
        out = bare(**enc).last_hidden_state
        (out**2).mean().backward()
        adamw.step()
        adamw.zero_grad()

    def lisa_step(batch, name: str) -> None:
        pipelines[name].update(batch, sgd=optimizers[name], drop=0.1, losses={})

    steps = {"floor": floor_step}
    for name in pipelines:
        steps[name] = functools.partial(lisa_step, name=name)
    if args.profile:
        name = next(iter(pipelines))
        lisa_step(batches[0], name)  # warm
        prof = cProfile.Profile()
        prof.enable()
        for batch in batches[1 : 1 + args.profile]:
            lisa_step(batch, name)
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(35)
        print(out.getvalue())
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(25)
        print(out.getvalue())
        return

    rates: Dict[str, List[float]] = {name: [] for name in steps}
    for i, batch in enumerate(batches):
        n_words = sum(len(eg.reference) for eg in batch)
        for name, step in steps.items():
            start = time.perf_counter()
            step(batch)
            elapsed = time.perf_counter() - start
            if i >= args.warmup:
                rates[name].append(n_words / elapsed)
    floor = statistics.median(rates["floor"])
    print(f"config: {args.config}, autocast={autocast}, {len(rates['floor'])} steps")
    print(f"(a) bare transformer fwd+bwd+AdamW: {floor:8.1f} words/s (median)")
    for name in pipelines:
        lisa = statistics.median(rates[name])
        label = f"{Path(args.config).stem}, encoding={name}"
        print(f"(b) nlp.update ({label}): {lisa:8.1f} words/s (median), (b)/(a) {lisa / floor:.2f}")
    print(describe())
    print(BOX_NOTE)


if __name__ == "__main__":
    main()
