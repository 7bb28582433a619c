"""Milliseconds per sentence of the maximum spanning tree: the project's solver
(``spacy_lisa.decoding.spanning_tree``, numba) against ``ufal.chu_liu_edmonds`` (which it
replaces), at 10, 30 and 100 tokens, in one process; optionally words/s of a ``lisa_srl``
pipeline that decodes its own parse as a tree (``overwrite_parse``) with either solver.

Scores are random logits, ``[T, T]`` normal x 4 with a boost on the diagonal (many would-be
roots, as an untrained parser); the same ``--sentences`` matrices for both solvers.
Timed: the solver alone on the ``[T + 1, T + 1]`` matrix that ``mst_decode`` builds, and
``mst_decode`` end to end (log-softmax, the single-root penalty, the solver). The
compilation is excluded (one untimed call first); the solvers run in turn ``--repeats``
times over all sentences (``machine.round_robin``), median reported, as a markdown table.

``--pipeline PATH`` (e.g. ``tests/fixtures/saved_pipeline/pipeline``) also times
``nlp.pipe`` over the ``# text`` lines of ``--texts`` (default the EWT dev set in
``$SPACY_LISA_EWT_DIR``, as the tests find it, read at run time) with ``overwrite_parse``
on (the parse from the model, decoded by ``mst_decode``), once with each solver,
interleaved.

    python benchmarks/bench_spanning_tree.py [--sizes 10,30,100] [--sentences 200]
        [--repeats 7] [--pipeline PATH [--texts FILE] [--limit 1000]]
"""

from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path
from typing import Callable, Dict, List

import numpy as np
from machine import describe, round_robin

from spacy_lisa.decoding import tree
from spacy_lisa.decoding.spanning_tree import maximum_spanning_tree
from spacy_lisa.decoding.tree import mst_decode

REPO = Path(__file__).resolve().parents[1]
# the EWT data as the tests find it ($SPACY_LISA_EWT_DIR, default ../shared/data/ewt)
EWT_DIR = Path(os.environ.get("SPACY_LISA_EWT_DIR", REPO.parent / "shared" / "data" / "ewt"))
EWT_DEV = EWT_DIR / "ud" / "en_ewt-ud-dev.conllu"


def ufal_solver() -> Callable[[np.ndarray], np.ndarray]:
    """``ufal.chu_liu_edmonds`` with the solver's signature (heads only)."""
    from ufal.chu_liu_edmonds import chu_liu_edmonds

    return lambda matrix: np.asarray(chu_liu_edmonds(np.ascontiguousarray(matrix))[0])


def solver_matrix(logits: np.ndarray) -> np.ndarray:
    """The ``[T + 1, T + 1]`` matrix ``mst_decode`` hands its solver (same construction)."""
    n = logits.shape[0]
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    penalty = n * (float(logp.max()) - float(logp.min())) + 1.0
    matrix = np.full((n + 1, n + 1), np.nan)
    matrix[1:, 1:] = logp
    matrix[np.arange(1, n + 1), np.arange(1, n + 1)] = np.nan
    matrix[1:, 0] = np.diag(logp) - penalty
    return matrix


def with_solver(solver: Callable[[np.ndarray], np.ndarray], fn: Callable[[], int]) -> int:
    """``fn()`` with ``mst_decode`` calling ``solver``."""
    before = tree.maximum_spanning_tree
    tree.maximum_spanning_tree = solver  # type: ignore[assignment]
    try:
        return fn()
    finally:
        tree.maximum_spanning_tree = before  # type: ignore[assignment]


def solver_runs(
    logits: List[np.ndarray], ufal: Callable[[np.ndarray], np.ndarray]
) -> Dict[str, Callable[[], int]]:
    """The four timed runs over one size's sentences: each solver alone on the solver's
    matrices, and ``mst_decode`` with each solver."""
    matrices = [solver_matrix(x) for x in logits]

    def decode_all() -> int:
        return sum(len(mst_decode(x)) for x in logits)

    return {
        "ours": lambda: sum(len(maximum_spanning_tree(m)) for m in matrices),
        "ufal": lambda: sum(len(ufal(m)) for m in matrices),
        "decode_ours": decode_all,
        "decode_ufal": lambda: with_solver(ufal, decode_all),
    }


def time_sizes(sizes: List[int], sentences: int, repeats: int) -> None:
    ufal = ufal_solver()
    rng = np.random.default_rng(0)
    maximum_spanning_tree(np.zeros((3, 3)))  # compile (or load the cache) untimed
    rows = []
    for n in sizes:
        logits = [rng.normal(size=(n, n)) * 4 + np.eye(n) * 3 for _ in range(sentences)]
        same = sum(
            maximum_spanning_tree(m).tolist() == ufal(m).tolist()
            for m in map(solver_matrix, logits)
        )
        times, _ = round_robin(solver_runs(logits, ufal), repeats, warmup=1)
        ms = {k: 1000 * statistics.median(v) / sentences for k, v in times.items()}
        rows.append((n, ms, same))
    print(f"\n{sentences} sentences per size, median of {repeats} rounds; {describe()}\n")
    print(
        "| tokens | ours ms | ufal ms | ours/ufal | mst_decode ours ms | mst_decode ufal ms "
        "| same trees |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n, ms, same in rows:
        print(
            f"| {n} | {ms['ours']:.4f} | {ms['ufal']:.4f} | {ms['ours'] / ms['ufal']:.2f} "
            f"| {ms['decode_ours']:.4f} | {ms['decode_ufal']:.4f} | {same}/{sentences} |"
        )


def conllu_texts(path: Path, limit: int) -> List[str]:
    """The ``# text = `` lines of a CoNLL-U file, the first ``limit``."""
    texts = []
    with path.open(encoding="utf8") as lines:
        for line in lines:
            if line.startswith("# text = "):
                texts.append(line[len("# text = ") :].rstrip("\n"))
                if len(texts) == limit:
                    break
    return texts


def time_pipeline(path: str, texts: List[str], repeats: int) -> None:
    import spacy

    nlp = spacy.load(path)
    srl = nlp.get_pipe("lisa_srl")
    srl.overwrite_parse = True  # type: ignore[attr-defined]
    calls = 0
    solve = tree.maximum_spanning_tree

    def counted(matrix: np.ndarray) -> np.ndarray:
        nonlocal calls
        calls += 1
        return solve(matrix)

    def run() -> int:
        return sum(len(doc) for doc in nlp.pipe(texts, batch_size=64))

    with_solver(counted, lambda: run())
    if calls == 0:
        raise SystemExit(f"{path}: mst_decode was never called (is the parse from the model?)")
    ufal = ufal_solver()
    fns = {"ours": run, "ufal": lambda: with_solver(ufal, run)}
    times, words = round_robin(fns, repeats, warmup=1)
    print(f"\nnlp.pipe, {len(texts)} texts, {words['ours']} words, {calls} trees per run")
    print(f"median of {repeats}; {describe()}\n")
    print("| solver | median s | min s | max s | words/s (median) |")
    print("|---|---:|---:|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"| {name} | {median:.3f} | {min(values):.3f} | {max(values):.3f} "
            f"| {words[name] / median:.0f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,30,100")
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--pipeline", default=None, help="a saved lisa_srl pipeline")
    parser.add_argument("--texts", type=Path, default=EWT_DEV, help="a CoNLL-U file")
    parser.add_argument("--limit", type=int, default=1000, help="first N texts")
    args = parser.parse_args()
    if args.pipeline and not args.texts.is_file():
        parser.error(f"--texts {args.texts}: no such file (set SPACY_LISA_EWT_DIR or pass one)")
    time_sizes([int(n) for n in args.sizes.split(",")], args.sentences, args.repeats)
    if args.pipeline:
        time_pipeline(args.pipeline, conllu_texts(args.texts, args.limit), args.repeats)


if __name__ == "__main__":
    main()
