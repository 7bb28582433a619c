"""CI smoke run of the spaCy project on a few hundred real EWT sentences with a handful
of training steps: every step's outputs exist and the packaged pipeline loads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import srsly

REPO = Path(__file__).resolve().parents[1]


def _run(args, cwd: Path) -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # the venv's console scripts (spacy-lisa) must be found by `spacy project run`
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, args))} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    )


@pytest.mark.slow
def test_project_workflow_smoke(tmp_path, ewt_dir):
    ewt = ewt_dir
    project = tmp_path / "project"
    project.mkdir()
    for name in ("project.yml",):
        shutil.copy(REPO / name, project / name)
    for folder in ("configs", "scripts"):
        shutil.copytree(REPO / folder, project / folder)
    # one frame file: its roleset must reach the trained components' sense candidates
    frames = tmp_path / "frames"
    frames.mkdir()
    (frames / "zorble.xml").write_text(
        "<?xml version='1.0' encoding='utf-8'?>\n<frameset><predicate lemma='zorble'>"
        "<roleset id='zorble.01' name=''><roles><role n='0' descr='agent'/></roles>"
        "</roleset></predicate></frameset>\n",
        encoding="utf8",
    )
    overrides = [
        "--vars.ewt_dir",
        str(ewt),
        "--vars.frames_dir",
        str(frames),
        "--vars.n_sents_limit",
        "300",
        "--vars.max_steps",
        "6",
        "--vars.parser_max_steps",
        "6",
        "--vars.vectors_max_pieces",
        "3000",
        # a few hundred sentences: ~15 documents, half held out to choose model-best on
        "--vars.heldout_share",
        "0.5",
    ]
    spacy = [sys.executable, "-m", "spacy", "project", "run"]
    # train-cpu: the parser and lisa_cpu side by side, as the `all` workflow runs them
    for step in ("convert", "vectors", "train-cpu", "evaluate", "package"):
        _run(spacy + [step, ".", *overrides], project)
    cpu_best = (project / "training/lisa_cpu/model-best/config.cfg").read_text()
    assert 'dev = "corpus/train_heldout.spacy"' in cpu_best
    cpu_cfg = srsly.read_json(project / "training/lisa_cpu/model-best/lisa_srl/cfg")
    assert cpu_cfg["sense_candidates"]["zorble"] == ["zorble.01"]
    # distillation, with the smoke run's lisa_cpu standing in for the transformer teacher
    distill = ["--vars.teacher_config", "lisa_cpu", "--vars.distill_max_steps", "6"]
    for step in ("teacher-labels", "train-distilled"):
        _run(spacy + [step, ".", *overrides, *distill], project)
    # adapt-trf (fine-tuning on sentences that sometimes run together), on the smoke run's
    # lisa_cpu: the transformer is too slow for CI
    adapt = ["--vars.trf_config", "lisa_cpu", "--vars.trf_adapt_steps", "6"]
    _run(spacy + ["adapt-trf", ".", *overrides, *adapt, "--vars.trf_adapt_warmup", "2"], project)
    adapted = (project / "training/lisa_cpu/model-last/config.cfg").read_text()
    # the share project.yml gives adapt-trf reaches the training reader
    share = srsly.read_yaml(project / "project.yml")["vars"]["trf_adapt_merge"]
    assert f"merge_sentences = {share}" in adapted
    # its model-best is chosen on the held-out documents as the project's parser splits them
    adapted_best = (project / "training/lisa_cpu/model-best/config.cfg").read_text()
    assert 'dev = "corpus/train_heldout.docs.spacy"' in adapted_best
    assert 'sentences_from = "training/parser/model-best"' in adapted_best

    # every model-best was chosen on held-out training documents, never on dev
    for trained, dev in (
        ("training/parser", "corpus/train_heldout.docs.spacy"),
        ("training/lisa_cpu_distilled", "corpus/train_heldout.teacher.spacy"),
    ):
        config = (project / trained / "model-best/config.cfg").read_text()
        assert f'dev = "{dev}"' in config, trained
    stats = json.loads((project / "corpus/train.stats.json").read_text())
    assert 0 < stats["sentences"] <= 300 and stats["predicates"] > 0
    for path in (
        "corpus/train.spacy",
        "corpus/dev.spacy",
        "training/parser/model-best/meta.json",
        "training/lisa_cpu/model-best/lisa_srl/cfg",
        "metrics/lisa_cpu-model.json",
        "metrics/lisa_cpu-spacy-parser.json",
        "metrics/lisa_cpu-gold.json",
        "metrics/lisa_cpu.md",
        "metrics/lisa_cpu-raw.json",
        "training/pipelines/lisa_cpu/meta.json",
        "corpus/train.teacher.spacy",
        "training/lisa_cpu_distilled/model-best/lisa_srl/cfg",
    ):
        assert (project / path).exists(), path
    scores = json.loads((project / "metrics/lisa_cpu-gold.json").read_text())
    assert 0.0 <= scores["srl_f"] <= 1.0
    # the assembled pipeline segments and parses raw text in front of lisa_srl
    meta = json.loads((project / "training/pipelines/lisa_cpu/meta.json").read_text())
    assert meta["pipeline"][-1] == "lisa_srl" and "parser" in meta["pipeline"]
    assert "| SRL F1 |" in (project / "metrics/lisa_cpu.md").read_text()

    # the packaged wheel installs (without dependencies: they are this environment's) and
    # loads with spacy.load by its package name
    wheels = list((project / "packages").glob("*/dist/*.whl"))
    assert len(wheels) == 1, wheels
    target = tmp_path / "site"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            str(wheels[0]),
        ],
        project,
    )
    code = (
        "import sys, spacy; sys.path.insert(0, sys.argv[1]); "
        "nlp = spacy.load('en_lisa_srl_ewt_cpu'); "
        "text = 'The company sold its shares. Investors bought them. Prices rose.'; "
        "doc = nlp(text); "
        "assert isinstance(doc._.srl_frames, list) and doc.has_annotation('SENT_START'); "
        # a three-sentence paragraph: no role crosses a sentence boundary
        "assert all(f.predicate.sent.start <= r.start and r.end <= f.predicate.sent.end "
        "for f in doc._.srl_frames for r in f.roles); "
        "assert nlp.pipe_names[-1] == 'lisa_srl' and 'parser' in nlp.pipe_names; "
        "print('loaded', nlp.pipe_names)"
    )
    _run([sys.executable, "-c", code, str(target)], project)

    # the ensemble workflow: two more seeds, joined with the packaged pipeline of `all`
    for step in ("train-cpu-seeds", "join-ensemble", "package-ensemble"):
        _run(spacy + [step, ".", *overrides], project)
    joined = (project / "training/pipelines/lisa_cpu_ensemble/config.cfg").read_text()
    assert '@architectures = "spacy-lisa.Ensemble.v1"' in joined
    assert all(f"member{i}]" in joined for i in range(3)) and "member3]" not in joined
    assert "| SRL F1 |" in (project / "metrics/lisa_cpu_ensemble.md").read_text()
    wheels = list((project / "packages").glob("en_lisa_srl_ewt_cpu_ensemble-*/dist/*.whl"))
    assert len(wheels) == 1, wheels
    target = tmp_path / "site_ensemble"
    _run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
        + [str(wheels[0])],
        project,
    )
    code = code.replace("en_lisa_srl_ewt_cpu", "en_lisa_srl_ewt_cpu_ensemble")
    _run([sys.executable, "-c", code, str(target)], project)
