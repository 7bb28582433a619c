"""Shared by the device tests (tests/test_device.py, tests/test_gpu.py): the pinned
fixture pipeline, commands in processes of their own, and a tiny corpus for the project's
configs."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy
import spacy
from srl_testing import TAGGED_SENTENCES

REPO = Path(__file__).resolve().parents[1]
TEACHER_LABELS = [sys.executable, str(REPO / "scripts" / "teacher_labels.py")]
FIXTURE = REPO / "tests" / "fixtures" / "saved_pipeline"
PIPELINE = FIXTURE / "pipeline"


def fixture_module() -> Any:
    """The fixture's script as a module (its ``outputs(nlp, texts)``)."""
    spec = importlib.util.spec_from_file_location("make_saved", FIXTURE / "make_saved_pipeline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fixture_texts() -> List[str]:
    return json.loads((FIXTURE / "expected.json").read_text())["texts"]


def lisa(*args: str) -> subprocess.CompletedProcess:
    """``spacy-lisa ARGS`` in a process of its own (a GPU switch stays there)."""
    return run([sys.executable, "-m", "spacy_lisa", *args])


def run(args: List[str], env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        args,
        capture_output=True,
        text=True,
        encoding="utf8",
        timeout=600,
        check=False,
        env={**os.environ, **(env or {})},
    )


def tiny_corpus(tmp_path: Path) -> Dict[str, Path]:
    """A DocBin of the tagged test sentences (tags, POS, lemmas, parse, frames, one
    sentence each) and a tiny static vectors pipeline, for the project's configs."""
    from spacy.tokens import Doc

    from spacy_lisa.corpus.docbin import write_docbin
    from spacy_lisa.frames import set_srl_frames

    nlp = spacy.blank("en")
    docs = []
    for words, tags, heads, deps, frames in TAGGED_SENTENCES:
        pos = [
            "VERB" if t.startswith("VB") else "NOUN" if t.startswith("NN") else "X" for t in tags
        ]
        doc = Doc(nlp.vocab, words=words, tags=tags, pos=pos, heads=heads, deps=deps,
                  lemmas=[w.lower() for w in words])  # fmt: skip
        set_srl_frames(
            doc,
            [{"predicate": [p, p + 1], "roleset": rs, "roles": [list(r) for r in roles]}
             for p, rs, roles in frames],
        )  # fmt: skip
        docs.append(doc)
    corpus = tmp_path / "tiny.spacy"
    write_docbin(docs, corpus)
    rng = numpy.random.default_rng(0)
    for word in {w for s in TAGGED_SENTENCES for w in s[0]}:
        nlp.vocab.set_vector(word, rng.normal(size=16).astype("float32"))
    nlp.to_disk(tmp_path / "vectors")
    return {"corpus": corpus, "vectors": tmp_path / "vectors"}


def train_config(config: str, gpu_id: int, tmp_path: Path) -> subprocess.CompletedProcess:
    """``spacy train`` of a project config for 4 steps on the tiny corpus."""
    data = tiny_corpus(tmp_path)
    args = [
        sys.executable, "-m", "spacy", "train", str(REPO / "configs" / f"{config}.cfg"),
        "--output", str(tmp_path / "out"), "--gpu-id", str(gpu_id),
        "--paths.train", str(data["corpus"]), "--paths.dev", str(data["corpus"]),
        "--paths.vectors", str(data["vectors"]),
        "--training.max_steps", "4", "--training.eval_frequency", "2",
    ]  # fmt: skip
    if config == "parser":  # six sentences: keep every dependency label an action
        args += ["--components.parser.min_action_freq", "1"]
    return run(args)
