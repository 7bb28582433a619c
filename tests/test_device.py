"""The device logic that needs no GPU, tested on the CPU: the device choice and its
numbered errors (also through the real commands on a machine without a usable GPU), the
refusals (``-n`` with ``--gpu-id``, mixed precision with the predicate-aware encodings,
thinc on CuPy with a CPU build of torch), the precision chosen per device, and the single
host copy per batch of the decoding, with a stand-in for CuPy arrays. The GPU itself is
tested in tests/test_gpu.py."""

from __future__ import annotations

import configparser
import copy
import sys
import warnings
from typing import Any, Dict, List, Optional

import numpy
import pytest
import spacy
import torch
from device_testing import (
    PIPELINE,
    REPO,
    TEACHER_LABELS,
    fixture_texts,
    lisa,
    run,
    tiny_corpus,
)
from srl_testing import TEXT_SENTENCES, TINY_MODEL, gold_examples, overfit
from thinc.api import CupyOps, get_current_ops, set_current_ops
from typer.testing import CliRunner

from spacy_lisa import device
from spacy_lisa.cli import app
from spacy_lisa.device import GpuSupport, gpu_problem, select_device

cpu_only = pytest.mark.skipif(
    torch.cuda.is_available(),
    reason="this machine has a CUDA GPU: the CPU-only errors cannot occur",
)


@pytest.fixture(scope="module")
def texts() -> List[str]:
    return fixture_texts()


# --- the device choice (CPU) ----------------------------------------------------------


def support(cupy: Optional[str], cuda: Optional[str], devices: int, detail: str = ""):
    build = f"2.13.0+cu{cuda.replace('.', '')}" if cuda else "2.13.0+cpu"
    return GpuSupport(cupy=cupy, torch=build, torch_cuda=cuda, devices=devices, detail=detail)


FULL = support("13.6.0", "12.8", 2)
INSTALL = "torch==2.13.0+cu128"


@pytest.mark.parametrize(
    "what, gpu_id, code, says",
    [
        (
            support(None, None, 0),
            0,
            "E450",
            ["CuPy is not installed and torch", "make install-gpu"],
        ),
        (support(None, "12.8", 1), 0, "E450", ["CuPy is not installed", "cuda12x", "--gpu-id -1"]),
        (support("13.6.0", None, 0), 1, "E450", ["torch 2.13.0+cpu is a CPU-only build", INSTALL]),
        (
            support("13.6.0", "12.8", 0, "no driver"),
            0,
            "E451",
            ["device (no driver)", "nvidia-smi"],
        ),
        (FULL, 2, "E452", ["2 CUDA device(s) are visible, ids 0 to 1"]),
        (FULL, -2, "E453", ["pass -1 for the CPU"]),
    ],
)
def test_gpu_problem_names_what_is_missing_and_what_to_do(what, gpu_id, code, says):
    problem = gpu_problem(gpu_id, what)
    assert problem is not None and problem.startswith(f"[{code}]")
    for text in says:
        assert text in problem


def test_gpu_problem_none_for_the_cpu_and_a_usable_gpu():
    assert gpu_problem(-1, support(None, None, 0)) is None  # the CPU always works
    assert gpu_problem(0, FULL) is None and gpu_problem(1, FULL) is None


def test_select_device_switches_only_when_the_gpu_can_be_used(monkeypatch):
    calls: List[int] = []
    monkeypatch.setattr(device, "gpu_support", lambda: FULL)
    monkeypatch.setattr(spacy, "require_gpu", lambda gpu_id: calls.append(gpu_id))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda gpu_id: "Test GPU")
    monkeypatch.setattr(device.platform, "system", lambda: "Linux")
    assert select_device(1) == "GPU 1 (Test GPU, CUDA 12.8)"
    assert calls == [1]
    assert select_device(-1) == "CPU" and calls == [1]  # the CPU: nothing switched
    with pytest.raises(device.DeviceError, match=r"\[E452\]"):
        select_device(5)
    assert calls == [1]  # refused before thinc was asked

    def broken(gpu_id: int) -> None:
        raise RuntimeError("CUDA driver version is insufficient for CUDA runtime version\nmore")

    monkeypatch.setattr(spacy, "require_gpu", broken)
    with pytest.raises(device.DeviceError) as err:
        select_device(0)
    message = str(err.value)
    assert message.startswith("[E454]") and "driver version is insufficient" in message
    assert "more" not in message  # the first line of the cause only


@cpu_only
def test_select_device_on_this_cpu_box_keeps_the_cpu():
    before = get_current_ops()
    with pytest.raises(device.DeviceError, match=r"\[E450\]"):
        select_device(0)
    assert get_current_ops() is before  # a refused GPU switches nothing
    assert select_device(-1) == "CPU"


@pytest.mark.parametrize(
    "target,extra,cupy",
    [
        ("install-gpu", device.GPU_EXTRA, "cupy-cuda12x"),
        ("install-gpu-cuda13", device.GPU_EXTRA_CUDA13, "cupy-cuda13x"),
    ],
)
def test_the_gpu_installs_the_errors_name_exist(target, extra, cupy):
    """E450/E455 tell users to run these make targets: each installs its extra, which
    pins the CuPy built for its CUDA major version."""
    assert f"`make {target}`" in device.GPU_INSTALL and f".[{extra}]" in device.GPU_INSTALL
    makefile = (REPO / "Makefile").read_text()
    recipe = makefile.split(f"\n{target}:", 1)[1].split("\n\n", 1)[0]
    assert f'".[dev,{extra}]"' in recipe and "check-gpu" in recipe
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    assert cfg["options.extras_require"][extra].split()[0].startswith(f"{cupy}>=")


# --- the commands on a machine without a usable GPU -------------------------------------


@cpu_only
def test_predict_gpu_id_on_a_cpu_box_says_what_to_install_without_traceback(tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("John sold the car to Mary.\n", encoding="utf8")
    for input_path in (text, tmp_path / "missing.txt"):  # checked before the input is read
        proc = lisa("predict", str(PIPELINE), str(input_path), "--gpu-id", "0")
        assert proc.returncode == 1, proc.stderr
        assert "[E450]" in proc.stderr and "make install-gpu" in proc.stderr
        assert "--gpu-id -1" in proc.stderr and "Traceback" not in proc.stderr
        assert proc.stdout == ""


@cpu_only
@pytest.mark.parametrize("command", ["render", "evaluate"])
def test_render_and_evaluate_gpu_id_on_a_cpu_box(command, tmp_path):
    args = {
        "render": ["render", str(PIPELINE), "John sold the car.", "-o", str(tmp_path / "p.html")],
        "evaluate": ["evaluate", str(PIPELINE), str(tiny_corpus(tmp_path)["corpus"])],
    }[command]
    result = CliRunner().invoke(app, [*args, "--gpu-id", "0"])
    assert result.exit_code == 1 and "[E450]" in result.stderr, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (tmp_path / "p.html").exists()


@cpu_only
def test_teacher_labels_gpu_id_on_a_cpu_box(tmp_path):
    out = tmp_path / "out.spacy"
    proc = run([*TEACHER_LABELS, str(PIPELINE), str(tmp_path / "t.spacy"), str(out), "--gpu-id=0"])
    assert proc.returncode == 1 and "[E450]" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not out.exists()


@cpu_only
def test_device_module_reports_the_installation():
    proc = run([sys.executable, "-m", "spacy_lisa.device"])
    assert proc.returncode == 1 and "[E450]" in proc.stderr, proc.stderr
    assert f"torch: {torch.__version__}" in proc.stdout and "CuPy:" in proc.stdout
    proc = run([sys.executable, "-m", "spacy_lisa.device", "--gpu-id=-1"])
    assert proc.returncode == 0 and "can run on CPU" in proc.stdout


@cpu_only
def test_ray_worker_gpus_on_a_cpu_box_is_refused_before_ray_starts(tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    text = tmp_path / "in.txt"
    text.write_text("John sold the car.\n", encoding="utf8")
    args = ["predict", str(PIPELINE), str(text), "-o", str(tmp_path / "out"), "--engine", "ray"]
    result = CliRunner().invoke(app, [*args, "--worker-gpus", "1"])
    assert result.exit_code == 1 and "[E458]" in result.stderr, result.output
    assert "--worker-gpus 0" in result.stderr and not (tmp_path / "out").exists()


def test_predict_refuses_worker_processes_with_a_gpu(tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("John sold the car.\n", encoding="utf8")
    result = CliRunner().invoke(
        app, ["predict", str(PIPELINE), str(text), "-n", "2", "--gpu-id", "0"]
    )
    assert result.exit_code == 1 and "[E456]" in result.stderr, result.output
    assert "--worker-gpus 1" in result.stderr
    result = CliRunner().invoke(app, ["predict", str(PIPELINE), str(text), "--gpu-id", "-2"])
    assert result.exit_code == 1 and "[E453]" in result.stderr, result.output


# --- model builders and precision per device --------------------------------------------


@cpu_only
def test_builders_refuse_thinc_on_cupy_with_a_cpu_build_of_torch():
    """``spacy train --gpu-id 0`` with CuPy but a CPU torch: E455 when the model is built,
    not torch's assertion deep inside thinc."""
    from spacy.util import registry

    from spacy_lisa.models.lisa import build_lisa_model
    from spacy_lisa.models.transformer import build_transformer_tok2vec

    tok2vec = registry.resolve({"t": TINY_MODEL["tok2vec"]})["t"]
    before = get_current_ops()
    set_current_ops(object.__new__(CupyOps))  # thinc's ops on the GPU, as require_gpu sets
    try:
        with pytest.raises(ValueError, match=r"\[E455\].*CPU-only build.*make install-gpu"):
            build_lisa_model(tok2vec)
        with pytest.raises(ValueError, match=r"\[E455\].*TransformerTok2Vec"):
            build_transformer_tok2vec()
    finally:
        set_current_ops(before)
    assert build_lisa_model(tok2vec) is not None  # on the CPU it builds


def test_mixed_precision_is_an_option_of_the_single_pass_only():
    """The predicate-aware architecture has no mixed_precision: a config that sets it
    fails validation, naming it."""
    from confection import ConfigValidationError
    from spacy.util import registry

    config = {**TINY_MODEL, "mixed_precision": True}
    assert registry.resolve({"m": config})["m"] is not None
    config["@architectures"] = "spacy-lisa.PredicateAwareLISA.v1"
    with pytest.raises(ConfigValidationError, match="mixed_precision"):
        registry.resolve({"m": config})


@cpu_only
def test_mixed_precision_config_trains_and_predicts_on_the_cpu():
    """mixed_precision = true is a GPU setting: on the CPU the model runs in float32 (thinc's
    autocast and gradient scaler are CUDA-only; the scaler would refuse CPU tensors)."""
    model = copy.deepcopy(TINY_MODEL)
    model["mixed_precision"] = True
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": model})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "CUDA is not available" autocast warnings
        overfit(nlp, gold_examples(nlp, TEXT_SENTENCES[:2]), steps=2)
        doc = nlp("John sold the car to Mary .")
    shim = nlp.get_pipe("lisa_srl").model.layers[1].shims[0]
    assert shim._mixed_precision is False and shim._grad_scaler._enabled is False
    assert isinstance(doc._.srl_frames, list)


@pytest.mark.parametrize(
    "device_type, bf16_native, training, expected",
    [
        ("cpu", False, True, "bfloat16"),
        ("cpu", False, False, "bfloat16"),
        ("cuda", True, True, "bfloat16"),  # Ampere and later
        ("cuda", True, False, "bfloat16"),
        ("cuda", False, True, None),  # older GPUs train in float32
        ("cuda", False, False, "float16"),  # and predict in float16
        ("mps", False, False, None),
    ],
)
def test_transformer_autocast_per_device(device_type, bf16_native, training, expected):
    got = device.choose_autocast(device_type, bf16_native=bf16_native, training=training)
    assert got == expected


@pytest.mark.parametrize("autocast", [True, False])
def test_transformer_encoder_runs_under_the_autocast_of_its_device(autocast):
    from transformers import BertConfig, BertModel

    from spacy_lisa.models.transformer_torch import EncoderInputs, SubBatch, TransformerTokenEncoder

    config = BertConfig(
        vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32,
    )  # fmt: skip
    encoder = TransformerTokenEncoder(autocast=autocast)
    encoder.build(BertModel(config))
    seen: List[Any] = []

    def hook(module: Any, args: Any, output: Any) -> None:
        seen.append((torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")))

    encoder.transformer.register_forward_hook(hook)
    sub = SubBatch(
        input_ids=torch.tensor([[1, 5, 6, 2]]),
        attention_mask=torch.ones(1, 4, dtype=torch.long),
        token_index=torch.tensor([-1, 0, 1, -1]),
    )
    output = encoder(EncoderInputs(sub_batches=[sub], n_tokens=2)).vectors
    with torch.no_grad():
        encoder(EncoderInputs(sub_batches=[sub], n_tokens=2))
    assert output.dtype == torch.float32  # pooled in float32 whatever ran inside
    expected = (True, torch.bfloat16) if autocast else (False, torch.get_autocast_dtype("cpu"))
    assert seen == [expected, expected]


# --- host copies: one per array and batch ------------------------------------------------


class FakeDeviceArray:
    """Stands in for a CuPy array: the data comes to the host through ``.get()``
    (counted), and, as with CuPy, never through an implicit ``numpy.asarray``."""

    def __init__(self, data: numpy.ndarray, counter: List[int]) -> None:
        self._data = data
        self._counter = counter
        self.shape = data.shape
        self.dtype = data.dtype
        self.size = data.size
        self.ndim = data.ndim

    def get(self) -> numpy.ndarray:
        self._counter[0] += 1
        return self._data.copy()

    def __array__(self, *args: Any, **kwargs: Any) -> numpy.ndarray:
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()`")

    def __len__(self) -> int:
        return len(self._data)


def test_viterbi_and_decoding_copy_device_scores_to_the_host_once():
    from spacy_lisa.decoding.frames import decode_frames
    from spacy_lisa.decoding.viterbi import viterbi_paths

    labels = ("O", "B-V", "I-V", "B-ARG0", "I-ARG0", "B-ARG1", "I-ARG1")
    rng = numpy.random.default_rng(0)
    scores = rng.normal(size=(40, 9, len(labels))).astype("float32")  # 40 frames
    lengths = rng.integers(1, 10, size=40)
    counter = [0]
    paths = viterbi_paths(FakeDeviceArray(scores, counter), lengths, labels)
    assert counter == [1]
    numpy.testing.assert_array_equal(paths, viterbi_paths(scores, lengths, labels))
    positions = numpy.minimum(rng.integers(0, 9, size=40), lengths - 1)
    counter[0] = 0
    frames = decode_frames(FakeDeviceArray(scores, counter), positions, lengths, labels)
    assert counter == [1]
    assert frames == decode_frames(scores, positions, lengths, labels)


def _doc_outputs(docs: List[Any]) -> List[Dict[str, Any]]:
    return [
        {
            "frames": [f.to_dict() for f in doc._.srl_frames],
            "parse": doc._.srl_parse,
            "pos": doc._.srl_pos,
            "spans": [[s.start, s.end, s.label_] for s in doc.spans.get("srl", [])],
        }
        for doc in docs
    ]


def test_annotating_device_outputs_copies_each_array_once_per_batch(texts):
    """The pinned fixture's outputs as CuPy would hold them on a GPU: the same frames,
    parse and POS, with one host copy per array and model call, whatever the number of
    frames (the Viterbi and the labels read those copies)."""
    nlp = spacy.load(PIPELINE)
    srl = nlp.get_pipe("lisa_srl")
    sentencizer = nlp.get_pipe("sentencizer")
    plain = [sentencizer(nlp.make_doc(text)) for text in texts * 3]
    on_device = [sentencizer(nlp.make_doc(text)) for text in texts * 3]
    srl.set_annotations(plain, srl.predict(plain))
    prediction = srl.predict(on_device)
    counter = [0]
    n_arrays = n_frames = 0
    for group in prediction.groups:
        out = group.output
        n_frames += int(out.frames.shape[0])
        for name in ("tag_scores", "head_scores", "dep_scores", "frames", "role_scores",
                     "label_attention", "used_heads", "sense_scores", "lemma_scores",
                     "pred_pos_scores"):  # fmt: skip
            value = getattr(out, name)
            if value is not None:
                setattr(out, name, FakeDeviceArray(numpy.asarray(value), counter))
                n_arrays += name != "head_scores"  # annotating does not read the parent scores
    srl.set_annotations(on_device, prediction)
    assert _doc_outputs(on_device) == _doc_outputs(plain)
    assert n_frames > 2 * len(prediction.groups) and counter == [n_arrays]
