"""Words per second through ``nlp.pipe`` (BENCHMARKS.md, Prediction speed): a ``lisa_srl``
pipeline end to end against the project's spaCy tagger+parser pipeline, and both in one
pipeline.

Pipelines, all on the same texts (EWT dev sentences from ``corpus/dev.spacy``, one text
per sentence), ``nlp.pipe(texts, batch_size=64)`` in one process:

- ``lisa``: the ``lisa_srl`` pipeline at ``--lisa`` (default ``training/lisa_cpu/model-best``);
- ``parser``: the tagger+parser pipeline at ``--parser`` (default ``training/parser/model-best``);
- ``both``: the ``--lisa`` pipeline with the parser pipeline's components added in front
  of ``lisa_srl`` by ``scripts/assemble_pipeline.py`` (spaCy's tokenizer kept), so LISA
  follows the parser's parse and sentences (``parse_source="auto"`` -> ``"doc"``);
- ``trf``: with ``--trf MODEL``, a transformer ``lisa_srl`` pipeline as well.

Each pipeline is warmed up on the first texts, then timed ``--repeats`` times, the
pipelines interleaved round-robin (on a shared machine every one sees the same background
load), median reported. Words are the tokens of the docs each pipeline returns. The
ratios (``lisa/parser``, ``both/parser``, ...) are printed last: compare ratios, not
absolute figures, on a loaded machine.

``--torch-threads 1,2`` times the ``lisa`` pipeline (one process) at each of those torch
intra-op thread counts instead, interleaved: whether a second thread pays for this small
model (if not, one thread leaves the other core to a second ``n_process`` worker).

``--n-process 2`` times the ``lisa`` pipeline with ``n_process=2`` against ``n_process=1``
instead (interleaved the same way), and ``n_process=2`` with srsly's uncached msgpack
codec lookups (``spacy_lisa.patches.cached_msgpack_codecs``: what moving each doc
between processes cost before the cache). ``--copies K`` repeats the texts K times: a corpus
large enough that starting the worker processes (each forks, then sends its annotated
docs back) is spread over more text, as when users annotate corpora.

    python benchmarks/bench_pipeline_speed.py [--lisa PATH] [--parser PATH] [--trf PATH]
        [--limit N] [--repeats 3] [--n-process 2 [--copies 4]] [--torch-threads 1,2]

Before the trained models exist, any saved pipelines do to check that it runs, e.g.
``--lisa tests/fixtures/saved_pipeline/pipeline`` (``--parser blank`` builds a blank English
pipeline with an untrained-initialised tagger and parser).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import tempfile
from functools import partial
from pathlib import Path
from typing import Callable, Dict, List, Optional

import spacy
from machine import describe, round_robin
from spacy.language import Language
from spacy.tokens import DocBin

import spacy_lisa  # noqa: F401  (registers the lisa_srl factory)
from spacy_lisa.patches import cached_msgpack_codecs, uncached_msgpack_codecs

REPO = Path(__file__).resolve().parents[1]


def dev_texts(path: Path = REPO / "corpus" / "dev.spacy", limit: Optional[int] = None) -> List[str]:
    """One text per sentence of the dev corpus, in corpus order."""
    docs = DocBin().from_disk(path).get_docs(spacy.blank("en").vocab)
    texts = [sent.text for doc in docs for sent in doc.sents]
    return texts[:limit] if limit else texts


def blank_parser() -> Language:
    """English with an untrained-initialised tagger and parser (one tag, one label):
    only to check that the benchmark runs before the real parser exists."""
    nlp = spacy.blank("en")
    tagger = nlp.add_pipe("tagger")
    parser = nlp.add_pipe("parser")
    tagger.add_label("X")  # type: ignore[attr-defined]
    parser.add_label("dep")  # type: ignore[attr-defined]
    nlp.initialize()
    return nlp


def load(path: str) -> Language:
    return blank_parser() if path == "blank" else spacy.load(path)


def combined(lisa_path: str, parser_path: str) -> Language:
    """The ``lisa_srl`` pipeline with the parser pipeline's components in front of it,
    built by ``scripts/assemble_pipeline.py``'s ``assemble`` (so the parser finds the
    static vectors it was trained with, whether or not the ``lisa_srl`` pipeline has a
    table of its own), with spaCy's tokenizer as in the other pipelines here."""
    spec = importlib.util.spec_from_file_location(
        "assemble_pipeline", REPO / "scripts" / "assemble_pipeline.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if parser_path != "blank":
        return module.assemble(Path(lisa_path), Path(parser_path), ewt_tokenizer=False)
    # assemble sources components from a saved pipeline; once sourced they need no files
    with tempfile.TemporaryDirectory(prefix="blank_parser") as saved:
        blank_parser().to_disk(saved)
        return module.assemble(Path(lisa_path), Path(saved), ewt_tokenizer=False)


def run_pipe(nlp: Language, texts: List[str], batch_size: int, n_process: int = 1) -> int:
    """Process ``texts``; returns the number of words (tokens of the returned docs)."""
    return sum(len(doc) for doc in nlp.pipe(texts, batch_size=batch_size, n_process=n_process))


def run_pipe_uncached(nlp: Language, texts: List[str], batch_size: int, n_process: int) -> int:
    """:func:`run_pipe` with srsly's own (uncached) msgpack codec lookups."""
    with uncached_msgpack_codecs():
        return run_pipe(nlp, texts, batch_size, n_process)


def run_pipe_threads(nlp: Language, texts: List[str], batch_size: int, threads: int) -> int:
    """:func:`run_pipe` with torch at ``threads`` intra-op threads (restored after)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return run_pipe(nlp, texts, batch_size)
    finally:
        torch.set_num_threads(before)


def interleaved(fns: Dict[str, Callable[[], int]], repeats: int) -> Dict[str, Dict[str, float]]:
    """Median seconds and words/s per function, the functions run round-robin."""
    times, words = round_robin(fns, repeats, log=True)
    result = {}
    for name, values in times.items():
        median = statistics.median(values)
        result[name] = {"seconds": median, "words": words[name], "wps": words[name] / median}
    return result


def report(results: Dict[str, Dict[str, float]], baseline: str) -> None:
    print(f"\n{'pipeline':>12} {'words':>8} {'median s':>9} {'words/s':>9}")
    for name, r in results.items():
        print(f"{name:>12} {int(r['words']):>8} {r['seconds']:>9.2f} {r['wps']:>9.0f}")
    print("\nratios (words/s):")
    for name, r in results.items():
        if name != baseline:
            print(f"  {name}/{baseline}: {r['wps'] / results[baseline]['wps']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lisa", default=str(REPO / "training" / "lisa_cpu" / "model-best"))
    parser.add_argument("--parser", default=str(REPO / "training" / "parser" / "model-best"))
    parser.add_argument("--trf", default=None, help="a transformer lisa_srl pipeline too")
    parser.add_argument("--dev", default=str(REPO / "corpus" / "dev.spacy"))
    parser.add_argument("--limit", type=int, default=None, help="first N dev sentences")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=128, help="texts per warm-up run")
    parser.add_argument(
        "--n-process", type=int, default=1, help="> 1: lisa with n_process=N vs 1 only"
    )
    parser.add_argument("--copies", type=int, default=1, help="repeat the texts K times")
    parser.add_argument(
        "--torch-threads", default=None, help="e.g. 1,2: lisa at each torch thread count only"
    )
    args = parser.parse_args()

    texts = dev_texts(Path(args.dev), args.limit) * max(1, args.copies)
    print(f"{len(texts)} texts (dev sentences x {args.copies}), batch_size={args.batch_size}")
    lisa = load(args.lisa)
    print(f"lisa: {args.lisa} {lisa.pipe_names}", flush=True)
    batch = args.batch_size
    fns: Dict[str, Callable[[], int]]
    if args.torch_threads:
        counts = [int(n) for n in args.torch_threads.split(",")]
        fns = {f"lisa_t{n}": partial(run_pipe_threads, lisa, texts, batch, n) for n in counts}
        run_pipe(lisa, texts[: args.warmup], batch)
        print(f"warmed up; timing torch threads {counts}, {args.repeats} repeats", flush=True)
        report(interleaved(fns, args.repeats), f"lisa_t{counts[0]}")
        return
    if args.n_process > 1:
        n = args.n_process
        fns = {
            "lisa_np1": lambda: run_pipe(lisa, texts, batch),
            f"lisa_np{n}": lambda: run_pipe(lisa, texts, batch, n),
            f"np{n}_uncached": lambda: run_pipe_uncached(lisa, texts, batch, n),
        }
        with cached_msgpack_codecs():  # as spacy-lisa predict -n 2+ opens it around its pipe
            run_pipe(lisa, texts[: args.warmup], batch)
            print(f"warmed up; timing n_process={n} vs 1, {args.repeats} repeats", flush=True)
            report(interleaved(fns, args.repeats), "lisa_np1")
        return
    parser_nlp = load(args.parser)
    both = combined(args.lisa, args.parser)
    print(f"parser: {args.parser} {parser_nlp.pipe_names}", flush=True)
    print(f"both: {both.pipe_names}", flush=True)
    pipelines = {"lisa": lisa, "parser": parser_nlp, "both": both}
    if args.trf:
        pipelines["trf"] = load(args.trf)
        print(f"trf: {args.trf} {pipelines['trf'].pipe_names}", flush=True)
    for nlp in pipelines.values():
        run_pipe(nlp, texts[: args.warmup], batch)
    print(f"warmed up; timing {list(pipelines)}, {args.repeats} repeats", flush=True)
    fns = {name: partial(run_pipe, nlp, texts, batch) for name, nlp in pipelines.items()}
    report(interleaved(fns, args.repeats), "parser")
    print(describe())


if __name__ == "__main__":
    main()
