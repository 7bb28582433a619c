"""Where spacy-lisa runs, the CPU or one CUDA GPU, and how results come back to the host.

- :func:`select_device` (the ``--gpu-id`` of every command, the Ray workers, ``spacy-lisa
  serve``): ``-1`` keeps the CPU; ``N >= 0`` checks that this installation can use CUDA
  GPU ``N`` and switches thinc (CuPy) and torch to it, or raises :class:`DeviceError`
  with a numbered message that says what to install or to pass instead (E450-E454).
  :func:`gpu_support` / :func:`gpu_problem` are its checks without the switch.
- :func:`check_torch_follows_thinc`: the model builders' check that torch can follow
  thinc onto the GPU (E455; ``spacy train --gpu-id 0`` with CuPy but a CPU build of torch).
- Precision per device: :func:`lisa_mixed_precision` (thinc's float16 autocast and
  gradient scaler for the LISA layers: CUDA only) and :func:`autocast_dtype` (the
  transformer tok2vec's ``autocast``).
- :func:`to_host` / :func:`host_output`: device arrays (CuPy, torch) to numpy, one copy
  per array and batch, for the decoding that runs on the CPU (Viterbi, spans, labels).

``python -m spacy_lisa.device [--gpu-id N]`` prints what the installation has and whether
GPU ``N`` can be used (exit status 1 with the numbered error when it cannot).

Nothing here imports torch, CuPy or spaCy at module level.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, Optional, TypeVar

import numpy

from .errors import Errors, UserError

if TYPE_CHECKING:
    import torch
    from _typeshed import DataclassInstance

# a dataclass of arrays, e.g. the LISA model's LisaOutput
Output = TypeVar("Output", bound="DataclassInstance")

# The GPU build (make install-gpu): CuPy for CUDA 12 (the extra, after spaCy's
# spacy[cuda12x]) and the CUDA 12 build of the torch that make install pins, from
# PyTorch's wheel index, in one pip command. PyPI's own Linux torch wheel of this version
# is a CUDA 13 build: it would not match cupy-cuda12x.
GPU_EXTRA = "cuda12x"
# or, for CUDA 13 drivers (make install-gpu-cuda13): PyPI's torch with CuPy for CUDA 13
GPU_EXTRA_CUDA13 = "cuda13x"
TORCH_VERSION = "2.13.0"
TORCH_CUDA = "cu128"
TORCH_CUDA_INDEX = f"https://download.pytorch.org/whl/{TORCH_CUDA}"
GPU_INSTALL = (
    f'`make install-gpu` in the repository, i.e. pip install "torch=={TORCH_VERSION}+'
    f'{TORCH_CUDA}" -e ".[{GPU_EXTRA}]" --extra-index-url {TORCH_CUDA_INDEX} (torch and '
    "CuPy in one command); with a driver for CUDA 13, `make install-gpu-cuda13`, i.e. pip "
    f'install "torch=={TORCH_VERSION}" -e ".[{GPU_EXTRA_CUDA13}]" (PyPI\'s torch is a CUDA 13 '
    "build)"
)


class DeviceError(UserError):
    """The device asked for cannot be used; the message (numbered) says what to do."""


@dataclass(frozen=True)
class GpuSupport:
    """What this installation has for CUDA."""

    cupy: Optional[str]  # CuPy's version; None when thinc cannot import CuPy
    torch: str  # torch's version
    torch_cuda: Optional[str]  # the CUDA version torch was built for; None: a CPU build
    devices: int  # CUDA devices torch sees
    detail: str = ""  # why torch sees none, when it said

    @property
    def missing(self) -> str:
        """What keeps this installation on the CPU ("" when CuPy and CUDA torch are in)."""
        missing = []
        if self.cupy is None:
            missing.append("CuPy is not installed")
        if self.torch_cuda is None:
            missing.append(f"torch {self.torch} is a CPU-only build")
        return " and ".join(missing)


def gpu_support() -> GpuSupport:
    """Probe CuPy (as thinc sees it) and torch's CUDA build and devices."""
    import thinc.compat
    import torch

    cupy = getattr(thinc.compat, "cupy", None) if thinc.compat.has_cupy else None
    cuda = torch.version.cuda
    devices, detail = 0, ""
    if cuda:
        try:
            devices = int(torch.cuda.device_count())
            if not devices and not torch.cuda.is_available():
                torch.cuda.init()  # raises with the driver's reason
        except Exception as err:  # a driver that is missing or too old
            detail = _first_line(err)
    return GpuSupport(
        cupy=None if cupy is None else str(cupy.__version__),
        torch=str(torch.__version__),
        torch_cuda=None if cuda is None else str(cuda),
        devices=devices,
        detail=detail,
    )


def gpu_problem(gpu_id: int, support: GpuSupport) -> Optional[str]:
    """The numbered error that keeps ``--gpu-id gpu_id`` from working with ``support``,
    or None (``-1``, the CPU, always works)."""
    if gpu_id < -1:
        return Errors.E453.format(gpu_id=gpu_id)
    if gpu_id == -1:
        return None
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "not set")
    if support.missing:
        return Errors.E450.format(gpu_id=gpu_id, missing=support.missing, install=GPU_INSTALL)
    if support.devices == 0:
        return Errors.E451.format(
            gpu_id=gpu_id,
            cupy=support.cupy,
            torch=support.torch,
            cuda=support.torch_cuda,
            detail=f" ({support.detail})" if support.detail else "",
            visible=visible,
        )
    if gpu_id >= support.devices:
        return Errors.E452.format(
            gpu_id=gpu_id, n=support.devices, last=support.devices - 1, visible=visible
        )
    return None


def select_device(gpu_id: int) -> str:
    """Run spaCy, thinc and torch on CUDA GPU ``gpu_id`` (thinc's ops are per thread: call
    it in each thread that runs the pipeline), or keep the CPU for ``-1``. Returns the
    device in words; raises :class:`DeviceError` (E450-E454) before changing anything
    when the GPU cannot be used."""
    if gpu_id == -1:
        return "CPU"
    if gpu_id < -1:
        raise DeviceError(Errors.E453.format(gpu_id=gpu_id))
    support: Optional[GpuSupport] = None  # on macOS thinc's own GPU path (MPS) checks
    if platform.system() != "Darwin":
        support = gpu_support()
        problem = gpu_problem(gpu_id, support)
        if problem is not None:
            raise DeviceError(problem)
    import spacy

    try:
        spacy.require_gpu(gpu_id)
    except Exception as err:  # thinc's ValueError, CuPy's or torch's CUDA errors
        raise DeviceError(Errors.E454.format(gpu_id=gpu_id, detail=_first_line(err))) from None
    if support is None:
        return f"GPU {gpu_id}"
    import torch

    return f"GPU {gpu_id} ({torch.cuda.get_device_name(gpu_id)}, CUDA {support.torch_cuda})"


def check_torch_follows_thinc(layer: str) -> None:
    """For the builders of models with torch layers: ValueError E455 when thinc's
    current ops run on CuPy but torch cannot use CUDA (``spacy train --gpu-id 0`` with
    CuPy and a CPU build of torch), before torch fails deep inside thinc."""
    if not _thinc_on_cupy():
        return
    import torch

    if not torch.cuda.is_available():
        raise ValueError(
            Errors.E455.format(torch=torch.__version__, layer=layer, install=GPU_INSTALL)
        )


def _thinc_on_cupy() -> bool:
    from thinc.api import CupyOps, get_current_ops

    return isinstance(get_current_ops(), CupyOps)


# --- precision per device -------------------------------------------------------------


def lisa_mixed_precision(requested: bool) -> bool:
    """``mixed_precision`` of the LISA torch layers as run: thinc's float16 autocast with
    its gradient scaler on a CUDA device, off on the CPU (thinc's autocast and scaler are
    CUDA-only). The device is the one the layers are built on (thinc's current ops)."""
    if not requested:
        return False
    from thinc.util import get_torch_default_device

    return get_torch_default_device().type == "cuda"


def choose_autocast(device_type: str, *, bf16_native: bool, training: bool) -> Optional[str]:
    """The autocast dtype of the transformer tok2vec (``autocast = true``) per device:
    bfloat16 on the CPU and on GPUs with native bfloat16 (compute capability 8.0 and up);
    float16 on older GPUs at prediction only (float16 gradients underflow without loss
    scaling, so training there stays float32); none elsewhere (e.g. Apple's MPS)."""
    if device_type == "cpu":
        return "bfloat16"
    if device_type == "cuda":
        if bf16_native:
            return "bfloat16"
        return None if training else "float16"
    return None


def autocast_dtype(device: torch.device, *, training: bool) -> Optional[torch.dtype]:
    """:func:`choose_autocast` for a torch device, as a torch dtype (None: no autocast)."""
    import torch

    native = device.type == "cuda" and torch.cuda.is_bf16_supported(including_emulation=False)
    name = choose_autocast(device.type, bf16_native=native, training=training)
    return None if name is None else getattr(torch, name)


# --- host copies ----------------------------------------------------------------------


def to_host(array: Any) -> Any:
    """``array`` as a numpy array: numpy as it is, CuPy through ``.get()``, a torch tensor
    through ``.cpu()`` (one device-to-host copy each); None stays None."""
    if array is None or isinstance(array, numpy.ndarray):
        return array
    if hasattr(array, "detach") and hasattr(array, "cpu"):  # torch
        return array.detach().cpu().numpy()
    get = getattr(array, "get", None)
    if callable(get) and not isinstance(array, dict):  # cupy
        return get()
    return numpy.asarray(array)


def host_output(output: Output, exclude: Iterable[str] = ()) -> Output:
    """``output`` with every array on the host, each copied once (not once per frame or
    window); fields named in ``exclude`` are left out (None), e.g. ``head_scores``, which
    annotating does not read."""
    skip = set(exclude)
    changes: Dict[str, Any] = {}
    for field in dataclasses.fields(output):
        value = getattr(output, field.name)
        if field.name in skip:
            changes[field.name] = None
        elif hasattr(value, "shape") and hasattr(value, "dtype"):  # arrays, not windows
            changes[field.name] = to_host(value)
    return dataclasses.replace(output, **changes)


def _first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__


def describe(support: GpuSupport) -> str:
    """What the installation has, in lines (``python -m spacy_lisa.device``)."""
    lines = [
        f"CuPy:  {support.cupy or 'not installed'}",
        f"torch: {support.torch} ("
        + (f"CUDA {support.torch_cuda}" if support.torch_cuda else "CPU-only build")
        + ")",
        f"CUDA devices visible to torch: {support.devices}"
        + (f" ({support.detail})" if support.detail else ""),
        f"CUDA_VISIBLE_DEVICES: {os.environ.get('CUDA_VISIBLE_DEVICES', 'not set')}",
    ]
    return "\n".join(lines)


def main(argv: Optional[list] = None) -> int:
    """``python -m spacy_lisa.device [--gpu-id N]``: what this installation has for CUDA
    and whether GPU N (default 0) can be used; exit status 1 with the numbered error if
    not."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--gpu-id", type=int, default=0, help="the GPU to check (default 0)")
    args = parser.parse_args(argv)
    print(describe(gpu_support()))
    try:
        where = select_device(args.gpu_id)
    except DeviceError as err:
        print(f"✘ {err}", file=sys.stderr)
        return 1
    print(f"✔ spacy-lisa can run on {where}")
    return 0


__all__ = [
    "DeviceError",
    "GpuSupport",
    "GPU_INSTALL",
    "autocast_dtype",
    "check_torch_follows_thinc",
    "choose_autocast",
    "gpu_problem",
    "gpu_support",
    "host_output",
    "lisa_mixed_precision",
    "select_device",
    "to_host",
]

if __name__ == "__main__":
    sys.exit(main())
