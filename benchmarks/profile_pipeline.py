"""Where ``nlp.pipe`` spends its time in a ``lisa_srl`` pipeline (BENCHMARKS.md, Prediction
speed): share of wall time per stage on EWT dev sentences, as a small table.

Stages are timed by thin wrappers around the functions that implement them (self time:
a stage's time excludes the stages it calls), so the figures carry little overhead:

- ``tok2vec``: LISA's tok2vec sublayer (``model.layers[0]``);
- ``LISA torch forward``: the PyTorchWrapper (``model.layers[1]``: converters + torch);
- ``predict: other``: the rest of ``LisaSRL.predict`` (windows, batch layout, ...);
- ``log-softmax``, ``Viterbi``, ``BIO->spans``, ``MST``: the decoders that
  ``decode_frames`` calls (``viterbi_paths`` or ``greedy_paths``, ``paths_to_spans``,
  ``spans_to_frames``) and ``mst_decode``;
- ``set_srl_frames``: writing frames and the ``doc.spans`` mirror;
- ``annotate: per-frame/token Python``: the rest of ``set_annotations`` (frame dicts,
  POS, parse and attention lists, token attributes);
- ``other``: everything else in ``nlp.pipe`` (tokenizer, other components, batching).

``--cprofile N`` also prints cProfile's top N functions by own time (cProfile slows
Python-heavy code more than numpy/torch code: use it to see *which* Python, the table for
the shares).

    python benchmarks/profile_pipeline.py [--model training/lisa_cpu/model-best]
        [--limit N] [--batch-size 64] [--cprofile 25]
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import pstats
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Dict, List

import spacy
from bench_pipeline_speed import REPO, dev_texts  # type: ignore[import-not-found]
from machine import describe

import spacy_lisa.pipeline.annotate as annotate
import spacy_lisa.pipeline.decoding as decoding
from spacy_lisa.loading import srl_component

STAGES = (
    "tok2vec",
    "LISA torch forward",
    "predict: other",
    "log-softmax",
    "Viterbi",
    "BIO->spans",
    "MST",
    "set_srl_frames",
    "annotate: per-frame/token Python",
    "other",
)


class StageTimer:
    """Self time per stage: a wrapped call's time minus that of wrapped calls inside it."""

    def __init__(self) -> None:
        self.self_time: Dict[str, float] = defaultdict(float)
        self.calls: Dict[str, int] = defaultdict(int)
        self._stack: List[List[Any]] = []  # [stage, start, time in wrapped children]

    def wrap(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            frame = [stage, time.perf_counter(), 0.0]
            self._stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                total = time.perf_counter() - frame[1]
                self._stack.pop()
                self.self_time[stage] += total - frame[2]
                self.calls[stage] += 1
                if self._stack:
                    self._stack[-1][2] += total

        return timed


def instrument(nlp: Any, timer: StageTimer) -> None:
    """Wrap the stage functions of ``nlp``'s ``lisa_srl`` component."""
    component = srl_component(nlp)
    model = component.model
    tok2vec, lisa = model.layers[0], model.layers[1]
    # thinc's Model.__call__ / predict call self._func
    tok2vec._func = timer.wrap("tok2vec", tok2vec._func)
    lisa._func = timer.wrap("LISA torch forward", lisa._func)
    # instance attributes: TrainablePipe.pipe looks them up on the instance
    component.predict = timer.wrap("predict: other", component.predict)
    component.set_annotations = timer.wrap(
        "annotate: per-frame/token Python", component.set_annotations
    )
    # module globals, looked up at call time by annotate_group and by decode_frames
    patches = {
        annotate: {"set_srl_frames": "set_srl_frames"},
        decoding: {
            "_log_softmax": "log-softmax",
            "viterbi_paths": "Viterbi",
            "greedy_paths": "Viterbi",
            "paths_to_spans": "BIO->spans",
            "spans_to_frames": "BIO->spans",
            "mst_decode": "MST",
        },
    }
    for module, names in patches.items():
        for attr, stage in names.items():
            if hasattr(module, attr):
                setattr(module, attr, timer.wrap(stage, getattr(module, attr)))
    print(f"instrumented {component.name!r}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(REPO / "training" / "lisa_cpu" / "model-best"))
    parser.add_argument("--dev", default=str(REPO / "corpus" / "dev.spacy"))
    parser.add_argument("--limit", type=int, default=None, help="first N dev sentences")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--cprofile", type=int, default=0, help="also print top N by tottime")
    args = parser.parse_args()

    texts = dev_texts(Path(args.dev), args.limit)
    nlp = spacy.load(args.model)
    list(nlp.pipe(texts[:64], batch_size=args.batch_size))  # warm up, build lazily
    timer = StageTimer()
    instrument(nlp, timer)
    profiler = cProfile.Profile() if args.cprofile else None
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    words = sum(len(doc) for doc in nlp.pipe(texts, batch_size=args.batch_size))
    if profiler is not None:
        profiler.disable()
    total = time.perf_counter() - start
    shares = dict(timer.self_time)
    shares["other"] = total - sum(shares.values())
    print(f"\n{len(texts)} texts, {words} words, {total:.2f}s, {words / total:.0f} words/s")
    print(f"{'stage':<34} {'seconds':>8} {'share':>7} {'calls':>7}")
    for stage in STAGES:
        if stage in shares:
            seconds = shares[stage]
            calls = timer.calls.get(stage, 0)
            print(f"{stage:<34} {seconds:>8.3f} {seconds / total:>7.1%} {calls:>7}")
    if profiler is not None:
        print()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.cprofile)
    print(describe())


if __name__ == "__main__":
    main()
