"""The prepared GPU window (benchmarks/gpu_window.sh), dry run on the CPU: every step runs
on a few real EWT sentences and the results land in the output folder, so that the one
command a short GPU lease gets is known to work before the lease."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _convert(ewt_dir: Path, split: str, output: Path, limit: int) -> None:
    subprocess.run(
        [sys.executable, "-m", "spacy_lisa", "convert", "ewt"]
        + ["--ud", str(ewt_dir / f"ud/en_ewt-ud-{split}.conllu")]
        + ["--propbank", str(ewt_dir / "propbank"), "--output", str(output)]
        + ["--limit", str(limit)],
        check=True,
        capture_output=True,
    )


@pytest.mark.slow
def test_gpu_window_dry_run_on_the_cpu(tmp_path, ewt_dir):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    # a few dozen sentences: the window evaluates the held-out half at every step here
    _convert(ewt_dir, "train", corpus / "train.spacy", 80)
    _convert(ewt_dir, "dev", corpus / "dev.spacy", 30)
    subprocess.run(
        [sys.executable, str(REPO / "scripts/split_heldout.py"), str(corpus / "train.spacy")]
        + [str(corpus / "train_fit.spacy"), str(corpus / "train_heldout.spacy")]
        + ["--share", "0.5"],
        check=True,
        capture_output=True,
    )
    out, work = tmp_path / "out", tmp_path / "work"
    env = dict(
        os.environ,
        PYTHON=sys.executable,
        GPU_ID="-1",
        STEPS="3",
        BENCH_STEPS="1",
        BENCH_WARMUP="1",
        BENCH_LIMIT="40",
        TRAIN=str(corpus / "train_fit.spacy"),
        HELDOUT=str(corpus / "train_heldout.spacy"),
        DEV=str(corpus / "dev.spacy"),
        WORK=str(work),
    )
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(
        ["bash", str(REPO / "benchmarks/gpu_window.sh"), str(out)],
        env=env,
        capture_output=True,
        text=True,
    )
    logs = {p.name: p.read_text()[-2000:] for p in out.glob("*.log")} if out.exists() else {}
    assert proc.returncode == 0, f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}\n{logs}"

    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 3 and summary["device"].lower().startswith("cpu")
    assert 0.0 <= summary["dev_srl_f"] <= 1.0
    assert summary["train_words_per_s"] > 0 and summary["predict_words_per_s"] > 0
    assert summary["train_words_per_s_ceiling"] > 0 and summary["predict_words_per_s_ceiling"] > 0
    assert set(summary["minutes"]) == {"install", "tests", "bench", "train", "dev"}
    assert "dev SRL F1" in proc.stdout
    # the GPU tests ran (skipped here, each with its reason) and the card was looked for
    assert "skipped" in (out / "tests.log").read_text()
    assert "spacy-lisa" in (out / "env.txt").read_text()
    # model-best was chosen on the held-out training documents, not on dev
    config = (work / "model/model-best/config.cfg").read_text()
    assert f'dev = "{corpus / "train_heldout.spacy"}"' in config
    # what comes back from a lease: at most 8 small files, the model left in WORK
    assert sorted(p.name for p in out.iterdir()) == [
        "bench.json",
        "bench.log",
        "bench_shrunk.json",
        "dev.json",
        "env.txt",
        "summary.json",
        "tests.log",
        "train.log",
    ]
