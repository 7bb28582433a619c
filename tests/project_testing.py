"""What the tests of the spaCy project's workflows share: a copy of the project to run in,
a command run as `spacy project run` runs it, a frame file for a lemma no corpus has, and
a tiny encoder for the `vectors` steps."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Sequence

REPO = Path(__file__).resolve().parents[1]


def copy_project(project: Path) -> Path:
    """project.yml, configs/ and scripts/ copied into ``project`` (a fresh directory)."""
    project.mkdir(parents=True)
    shutil.copy(REPO / "project.yml", project / "project.yml")
    for folder in ("configs", "scripts"):
        shutil.copytree(REPO / folder, project / folder)
    return project


def run_checked(args: Sequence[str], cwd: Path) -> str:
    """Run ``args`` in ``cwd`` with this venv's console scripts first on the PATH (as
    `spacy project run` needs them: spacy-lisa) and one thread; fail with the output's
    end when it fails. Returns its stdout."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(list(map(str, args)), cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, args))} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    )
    return proc.stdout


def frame_file(lemma: str, rolesets: List[str]) -> str:
    """A PropBank frame file (XML) of ``lemma`` with ``rolesets``, each with ARG0/ARG1."""
    inner = "".join(
        f"<roleset id='{r}' name=''><roles><role n='0' descr='agent'/>"
        f"<role n='1' descr='theme'/></roles></roleset>"
        for r in rolesets
    )
    return (
        "<?xml version='1.0' encoding='utf-8'?>\n"
        f"<frameset><predicate lemma='{lemma}'>{inner}</predicate></frameset>\n"
    )


def zorble_frames(folder: Path) -> Path:
    """``folder`` holding one frame file, of a lemma no corpus has (zorble.01): its
    roleset reaches a trained component's sense candidates only from the frame files."""
    folder.mkdir(parents=True)
    (folder / "zorble.xml").write_text(frame_file("zorble", ["zorble.01"]), encoding="utf8")
    return folder


def tiny_vectors_encoder(folder: Path) -> Path:
    """A tiny random uncased encoder (DistilBERT, 1 block, hidden 32, a WordPiece
    vocabulary of 150) saved to ``folder``, for ``--vars.vectors_encoder``: model2vec
    encodes every piece of the encoder's vocabulary, about a minute for MiniLM's 30,000 on
    one thread and a second for these 150 (tests/test_static_vectors.py distils the real
    MiniLM). Its 2,048 positions hold any word alone, as model2vec encodes the training
    words."""
    from encoder_testing import build_encoder

    return build_encoder("distilbert", folder, layers=1, positions=2048)


def run_corpus_workflow(tmp_path: Path, workflow: str, data_dir: Path) -> Path:
    """The project's ``workflow`` (conll2012, conll2005) run in a copy of the project on
    ``data_dir``, with a tiny parser for the trees, the frame-file miniature and two
    training steps; returns the project folder."""
    from parser_testing import train_tiny_parser

    project = copy_project(tmp_path / "project")
    parser = tmp_path / "parser"
    train_tiny_parser().to_disk(parser)
    frames = zorble_frames(tmp_path / "frames")
    overrides = [
        f"--vars.{workflow}_dir", str(data_dir),
        f"--vars.{workflow}_parser", str(parser),
        "--vars.frames_dir", str(frames),
        "--vars.vectors_encoder", str(tiny_vectors_encoder(tmp_path / "encoder")),
        "--vars.max_steps", "2",
    ]  # fmt: skip
    run_checked(
        [sys.executable, "-m", "spacy", "project", "run", workflow, ".", *overrides], project
    )
    return project
