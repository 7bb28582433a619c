"""Prediction-time GEMM for the tok2vec layers: blis matmuls moved onto torch's BLAS.

On a 2-core AVX-512 box, blis (the default) took ~3x as long as torch's BLAS for the
tok2vec's maxout matmuls ([~500, 640] x [640, 384]): they were most of the tok2vec's time
at prediction. Training keeps blis (and so its exact numerics).

The switch is per thread: :func:`torch_gemm` gives the layer's blis nodes a
:class:`TorchGemmOps` once (idempotent) and turns torch's GEMM on for the calling thread
only, so two threads sharing one pipeline (one predicting, one training, or both
predicting) never undo each other's setting.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator, Optional, cast

from thinc.api import Model, NumpyOps

_local = threading.local()


def _torch_gemm_on() -> bool:
    return bool(getattr(_local, "on", False))


class TorchGemmOps(NumpyOps):
    """``NumpyOps`` whose ``gemm`` runs on torch's CPU BLAS (with torch's thread setting,
    which the component keeps at 1 in ``n_process`` workers) while the calling thread is
    inside :func:`torch_gemm`, and on blis otherwise. The products differ from blis's by
    float rounding only."""

    def gemm(
        self,
        x: Any,
        y: Any,
        *,
        out: Optional[Any] = None,
        trans1: bool = False,
        trans2: bool = False,
    ) -> Any:
        if not _torch_gemm_on():
            return super().gemm(x, y, out=out, trans1=trans1, trans2=trans2)
        import torch

        a = torch.from_numpy(self.as_contig(x))
        b = torch.from_numpy(self.as_contig(y))
        a = a.T if trans1 else a
        b = b.T if trans2 else b
        if out is None:
            return torch.matmul(a, b).numpy()
        torch.matmul(a, b, out=torch.from_numpy(out))
        return out


_TORCH_GEMM_OPS = TorchGemmOps()


@contextmanager
def torch_gemm(layer: Model, enabled: bool = True) -> Iterator[None]:
    """Within the block, the calling thread's matmuls in the nodes of ``layer`` that run
    on blis ``NumpyOps`` run on torch's BLAS. Prediction only (``enabled``): training
    keeps blis."""
    if not enabled:
        yield
        return
    for node in layer.walk():
        ops = node.ops
        # exactly NumpyOps (not a subclass with other kernels, nor one swapped already),
        # with blis; the swap is permanent and harmless: outside the block it is blis
        if type(ops) is NumpyOps and cast(NumpyOps, ops).use_blis:
            node.ops = _TORCH_GEMM_OPS
    previous = _torch_gemm_on()
    _local.on = True
    try:
        yield
    finally:
        _local.on = previous
