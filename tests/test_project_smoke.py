"""CI smoke run of the spaCy project on 150 real EWT sentences with a handful
of training steps: every step's outputs exist and the packaged pipeline loads."""

from __future__ import annotations

import json
import sys

import pytest
import srsly
from project_testing import copy_project, run_checked, tiny_vectors_encoder, zorble_frames
from spacy.util import load_config

# the sentences converted from train and from dev: every evaluation step reads all of dev's
N_SENTS = 150


@pytest.mark.slow
def test_project_workflow_smoke(tmp_path, ewt_dir):
    ewt = ewt_dir
    project = copy_project(tmp_path / "project")
    # one frame file: its roleset must reach the trained components' sense candidates
    frames = zorble_frames(tmp_path / "frames")
    overrides = [
        "--vars.ewt_dir",
        str(ewt),
        "--vars.frames_dir",
        str(frames),
        "--vars.n_sents_limit",
        str(N_SENTS),
        "--vars.max_steps",
        "6",
        "--vars.parser_max_steps",
        "6",
        # N_SENTS sentences of train and of dev: half of train's documents held out to
        # choose model-best on
        "--vars.heldout_share",
        "0.5",
        # lisa_cpu's vectors from a tiny encoder: distilling MiniLM's takes a minute
        "--vars.vectors_encoder",
        str(tiny_vectors_encoder(tmp_path / "encoder")),
    ]
    spacy = [sys.executable, "-m", "spacy", "project", "run"]
    run_checked(spacy + ["convert", ".", *overrides], project)
    # the `all` workflow: the senter and the short-schedule transformer model,
    # assembled and packaged (its smoke step installs torch into a fresh virtualenv: the wheel is
    # installed here without dependencies instead)
    short = ["--vars.short_max_steps", "4", "--vars.short_warmup", "2"]
    short += ["--vars.short_eval_frequency", "2", "--vars.senter_max_steps", "6"]
    workflow = srsly.read_yaml(project / "project.yml")["workflows"]["all"]
    assert workflow == [
        "convert",
        "train-senter",
        "train-trf-short",
        "evaluate-trf-short",
        "package-trf-short",
        "smoke-trf-short",
    ]
    for step in workflow[1:-1]:
        run_checked(spacy + [step, ".", *overrides, *short], project)
    short_best = (project / "training/lisa_trf_short/model-best/config.cfg").read_text()
    assert 'dev = "corpus/train_heldout.spacy"' in short_best
    assert "max_steps = 4" in short_best and "warmup_steps = 2" in short_best
    senter_best = (project / "training/senter/model-best/config.cfg").read_text()
    assert 'dev = "corpus/train_heldout.docs.spacy"' in senter_best
    assert "| SRL F1 |" in (project / "metrics/lisa_trf_short.md").read_text()
    # the role scores' map, fitted on the held-out documents, is set in the pipeline
    fitted = srsly.read_json(project / "metrics/lisa_trf_short-calibration.json")
    assembled = load_config(project / "training/pipelines/lisa_trf_short/config.cfg")
    mapping = [round(v, 4) for v in fitted["score_calibration"]]
    assert assembled["components"]["lisa_srl"]["score_calibration"] == mapping
    short_meta = json.loads((project / "training/pipelines/lisa_trf_short/meta.json").read_text())
    assert short_meta["pipeline"][-1] == "lisa_srl" and "senter" in short_meta["pipeline"]
    assert "parser" not in short_meta["pipeline"]
    # all-cpu: train-cpu trains the parser and lisa_cpu side by side
    assert srsly.read_yaml(project / "project.yml")["workflows"]["all-cpu"][:3] == [
        "convert",
        "vectors",
        "train-cpu",
    ]
    for step in ("vectors", "train-cpu", "evaluate", "package"):
        run_checked(spacy + [step, ".", *overrides], project)
    cpu_best = (project / "training/lisa_cpu/model-best/config.cfg").read_text()
    assert 'dev = "corpus/train_heldout.spacy"' in cpu_best
    cpu_cfg = srsly.read_json(project / "training/lisa_cpu/model-best/lisa_srl/cfg")
    assert cpu_cfg["sense_candidates"]["zorble"] == ["zorble.01"]
    # distillation, with the smoke run's lisa_cpu standing in for the transformer teacher
    distill = ["--vars.teacher_config", "lisa_cpu", "--vars.distill_max_steps", "6"]
    for step in ("teacher-labels", "train-distilled"):
        run_checked(spacy + [step, ".", *overrides, *distill], project)
    # adapt-trf (fine-tuning on sentences that sometimes run together), on the smoke run's
    # lisa_cpu: the transformer is too slow for CI
    adapt = ["--vars.trf_config", "lisa_cpu", "--vars.trf_adapt_steps", "6"]
    run_checked(
        spacy + ["adapt-trf", ".", *overrides, *adapt, "--vars.trf_adapt_warmup", "2"], project
    )
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
    assert 0 < stats["sentences"] <= N_SENTS and stats["predicates"] > 0
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

    # the packaged wheels install (without dependencies: they are this environment's) and
    # load with spacy.load by their package names
    wheels = list((project / "packages").glob("en_lisa_srl_ewt_cpu-*/dist/*.whl"))
    assert len(wheels) == 1, wheels
    target = tmp_path / "site"
    run_checked(
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
    run_checked([sys.executable, "-c", code, str(target)], project)
    wheels = list((project / "packages").glob("en_lisa_srl_ewt_trf_short-*/dist/*.whl"))
    assert len(wheels) == 1, wheels
    target = tmp_path / "site_short"
    run_checked(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
        + [str(wheels[0])],
        project,
    )
    short_code = code.replace("en_lisa_srl_ewt_cpu", "en_lisa_srl_ewt_trf_short")
    short_code = short_code.replace("'parser' in nlp.pipe_names", "'senter' in nlp.pipe_names")
    run_checked([sys.executable, "-c", short_code, str(target)], project)

    # the ensemble workflow: two more seeds, joined with the packaged pipeline of `all-cpu`
    for step in ("train-cpu-seeds", "join-ensemble", "package-ensemble"):
        run_checked(spacy + [step, ".", *overrides], project)
    joined = (project / "training/pipelines/lisa_cpu_ensemble/config.cfg").read_text()
    assert '@architectures = "spacy-lisa.Ensemble.v1"' in joined
    assert all(f"member{i}]" in joined for i in range(3)) and "member3]" not in joined
    assert "| SRL F1 |" in (project / "metrics/lisa_cpu_ensemble.md").read_text()
    wheels = list((project / "packages").glob("en_lisa_srl_ewt_cpu_ensemble-*/dist/*.whl"))
    assert len(wheels) == 1, wheels
    target = tmp_path / "site_ensemble"
    run_checked(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
        + [str(wheels[0])],
        project,
    )
    code = code.replace("en_lisa_srl_ewt_cpu", "en_lisa_srl_ewt_cpu_ensemble")
    run_checked([sys.executable, "-c", code, str(target)], project)
