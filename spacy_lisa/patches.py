"""Every change spacy-lisa makes to another library's objects, in one place.

Each one fixes a behaviour of the versions the package was written against (spaCy 3.8,
Thinc 8.3, srsly 2.5 with catalogue 2.0, torch 2.x); each says what it changes, why, and
where it is applied. None is applied at import time: importing ``spacy_lisa``, or
building ``lisa_srl`` through its entry points, leaves srsly, catalogue, Thinc and torch
as they were (``tests/test_patches.py``).

1. :func:`cached_msgpack_codecs` (a context): srsly's two msgpack codec registries
   answer ``get_all`` from a cache. Process-wide while a block is open, so it is opened
   only around the package's own work: ``spacy-lisa predict`` with worker processes,
   around its ``nlp.pipe`` (the workers it forks inherit it), and the training reader
   ``spacy-lisa.SRLCorpus.v1``, around each read.
2. :class:`AveragedPyTorchShim` (a subclass, no patch of Thinc): the shim of the LISA
   encoder's ``PyTorchWrapper_v2``, built as such by :func:`averaged_pytorch_wrapper`
   where the model is built (``models/lisa.py``, ``ensure_built``), and the base of the
   transformer tok2vec's shim. No other shim is touched.
3. :func:`torch_gemm` (a context): the blis ``NumpyOps`` of one layer's nodes replaced
   by :class:`TorchGemmOps`, whose matmuls run on torch's BLAS for the calling thread
   inside the block only (the LISA tok2vec at prediction).

Not patches, and so not here: ``torch.set_num_threads`` where the package owns the
process (``n_process`` workers, ``serve --torch-threads``, the Ray actors), spaCy's Doc
extensions (``install_extensions``: spaCy's API for them), and ``top_blocks_only`` in
``models/transformer_torch.py`` (one Hugging Face model's block list, restored on exit).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, cast

import catalogue
from srsly import msgpack as srsly_msgpack
from thinc.api import ArgsKwargs, Model, NumpyOps, PyTorchShim, PyTorchWrapper_v2, xp2torch

# --- 1. srsly's msgpack codec lookups -------------------------------------------------
#
# Why: srsly builds a new msgpack Packer/Unpacker for every msgpack_dumps/msgpack_loads,
# and each asks catalogue for every registered encoder/decoder (``get_all``); catalogue
# then walks all installed entry points and its whole registry (srsly/msgpack/__init__.py,
# srsly 2.5). With spaCy, Thinc and torch loaded that cost ~0.5-1.5 ms a call, and
# Doc.to_bytes / Doc.from_bytes make 3-5 calls a doc (5 with user data, as every doc
# lisa_srl annotated has): ~3 ms a doc each way, more than lisa_srl spends labelling an
# average EWT sentence. nlp.pipe(..., n_process=N) moves every doc between processes
# with these two calls, and spacy train decodes every DocBin each epoch and evaluation
# (BENCHMARKS.md, Prediction speed). The cache asks again whenever something is
# registered (through the registries' ``register``, or any new name in catalogue's
# registry), so the codecs used are always those a fresh lookup would give.


class _CachedRegistry:
    """``get_all`` of one catalogue registry, cached until a registration."""

    def __init__(self, registry: catalogue.Registry) -> None:
        self.uncached_get_all: Callable[[], Dict[str, Any]] = registry.get_all
        self.uncached_register: Callable[..., Any] = registry.register
        self.value: Optional[Dict[str, Any]] = None
        self.registry_size = -1

    def get_all(self) -> Dict[str, Any]:
        size = len(catalogue.REGISTRY)  # a new name anywhere in catalogue: look again
        if self.value is None or size != self.registry_size:
            self.value = self.uncached_get_all()
            self.registry_size = size
        return dict(self.value)

    def register(self, name: str, *, func: Optional[Any] = None) -> Any:
        self.value = None
        if func is not None:
            return self.uncached_register(name, func=func)
        decorate = self.uncached_register(name)

        def register_and_forget(function: Any) -> Any:
            result = decorate(function)
            self.value = None
            return result

        return register_and_forget


_MISSING = object()
_codec_lock = threading.Lock()
_codec_depth = 0  # open cached_msgpack_codecs blocks, in all threads
# (registry, its cache, what the registry's own __dict__ held for get_all and register)
_codec_caches: List[Tuple[catalogue.Registry, _CachedRegistry, Dict[str, Any]]] = []


def _codec_registries() -> Tuple[catalogue.Registry, catalogue.Registry]:
    return srsly_msgpack.msgpack_encoders, srsly_msgpack.msgpack_decoders


def _install_codec_caches() -> None:
    for registry in _codec_registries():
        saved = {name: vars(registry).get(name, _MISSING) for name in ("get_all", "register")}
        cache = _CachedRegistry(registry)
        registry.get_all = cache.get_all  # type: ignore[method-assign]
        registry.register = cache.register  # type: ignore[method-assign]
        _codec_caches.append((registry, cache, saved))


def _remove_codec_caches() -> None:
    while _codec_caches:
        registry, _, saved = _codec_caches.pop()
        for name, value in saved.items():
            if value is _MISSING:
                vars(registry).pop(name, None)
            else:
                setattr(registry, name, value)


@contextlib.contextmanager
def cached_msgpack_codecs() -> Iterator[None]:
    """Within the block, srsly's msgpack encoder and decoder lookups are cached, in the
    whole process (and in processes it forks meanwhile). Blocks may nest, overlap (two
    readers' generators) and run in several threads: the first to open installs the
    cache, the last to close restores srsly's registries as they were."""
    global _codec_depth
    with _codec_lock:
        if _codec_depth == 0:
            _install_codec_caches()
        _codec_depth += 1
    try:
        yield
    finally:
        with _codec_lock:
            _codec_depth -= 1
            if _codec_depth == 0:
                _remove_codec_caches()


@contextlib.contextmanager
def uncached_msgpack_codecs() -> Iterator[None]:
    """srsly's own lookups within the block, even inside :func:`cached_msgpack_codecs`
    (to measure what the cache saves: ``benchmarks/bench_pipeline_speed.py``)."""
    with _codec_lock:
        caches = list(_codec_caches)
        for registry, cache, _ in caches:
            registry.get_all = cache.uncached_get_all  # type: ignore[method-assign]
    try:
        yield
    finally:
        with _codec_lock:
            for registry, cache, _ in caches:
                if any(cache is still for _, still, _ in _codec_caches):  # not closed
                    registry.get_all = cache.get_all  # type: ignore[method-assign]


# --- 2. Parameter averages for torch layers --------------------------------------------
#
# Why: with ``use_averages = true`` ([training.optimizer]) Thinc's optimizer keeps an
# exponential moving average of every parameter it updates, and spaCy evaluates and
# saves the pipeline inside nlp.use_params(optimizer.averages). For torch layers that
# does nothing in Thinc 8.3: PyTorchShim.finish_update keys each torch parameter's
# average by (shim.id, name), but PyTorchShim.use_params only looks for string keys
# "pytorch_{id}_{name}" (thinc/shims/pytorch.py). The tok2vec's averages were used and
# the LISA encoder's raw weights were not. tests/models/test_averaged_shim.py keeps a
# test of Thinc's behaviour: when it fails, Thinc has fixed it and this can go.
#
# Also: PyTorchShim.predict switches every submodule to eval and back to train on every
# call (~2% of nlp.pipe on lisa_cpu); begin_update sets train mode itself, so the
# subclass leaves the module in eval mode after a prediction.


class AveragedPyTorchShim(PyTorchShim):
    """``PyTorchShim`` whose :meth:`use_params` also finds ``(shim.id, name)`` keys and
    whose :meth:`predict` leaves the module in eval mode."""

    def predict(self, inputs: ArgsKwargs) -> Any:
        import torch

        if self._model.training:  # begin_update switches back to train mode
            self._model.eval()
        with torch.no_grad():
            with torch.autocast(device_type="cuda", enabled=self._mixed_precision):
                return self._model(*inputs.args, **inputs.kwargs)

    @contextlib.contextmanager
    def use_params(self, params: Dict[Any, Any]) -> Iterator[None]:
        averaged = {
            name: xp2torch(params[(self.id, name)], device=self.device)
            for name, _ in self._model.named_parameters()
            if (self.id, name) in params
        }
        if not averaged:
            # Thinc's own string-keyed form (e.g. params saved by other code)
            with super().use_params(params):
                yield
            return
        backup = {key: value.clone() for key, value in self._model.state_dict().items()}
        # strict=False: buffers and never-updated parameters have no average; they
        # keep their current values
        self._model.load_state_dict(averaged, strict=False)
        try:
            yield
        finally:
            self._model.load_state_dict(backup)


def averaged_pytorch_wrapper(
    pytorch_model: Any,
    *,
    convert_inputs: Optional[Callable] = None,
    convert_outputs: Optional[Callable] = None,
    mixed_precision: bool = False,
) -> Model:
    """Thinc's ``PyTorchWrapper_v2`` with an :class:`AveragedPyTorchShim` as its shim.

    The wrapper has no shim argument: the shim it made is replaced by one built with the
    same arguments (Thinc's defaults for the grad scaler and the device), so that the
    wrapper's forward pass, converters and serialisation stay Thinc's own."""
    wrapper = PyTorchWrapper_v2(
        pytorch_model,
        convert_inputs=convert_inputs,
        convert_outputs=convert_outputs,
        mixed_precision=mixed_precision,
    )
    wrapper.shims[0] = AveragedPyTorchShim(pytorch_model, mixed_precision=mixed_precision)
    return wrapper


# --- 3. Prediction-time GEMM on torch's BLAS -------------------------------------------
#
# Why: on a 2-core AVX-512 box, blis (Thinc's NumpyOps default) took ~3x as long as
# torch's BLAS for the tok2vec's maxout matmuls ([~500, 640] x [640, 384]): they were
# most of the tok2vec's time at prediction. Training keeps blis (and so its exact
# numerics). The switch is per thread, so two threads sharing one pipeline (one
# predicting, one training, or both predicting) never undo each other's setting; the
# nodes' new ops are kept after the block (swapping them back would race with another
# thread inside it) and run blis there, as before.

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


@contextlib.contextmanager
def torch_gemm(layer: Model, enabled: bool = True) -> Iterator[None]:
    """Within the block, the calling thread's matmuls in the nodes of ``layer`` that run
    on blis ``NumpyOps`` run on torch's BLAS. Prediction only (``enabled``): training
    keeps blis. Applied by the LISA models' tok2vec pass (``models/lisa.py``,
    ``models/predicate_aware.py``)."""
    if not enabled:
        yield
        return
    for node in layer.walk():
        ops = node.ops
        # exactly NumpyOps (not a subclass with other kernels, nor one swapped already),
        # with blis; the swap is idempotent and, outside the block, runs blis
        if type(ops) is NumpyOps and cast(NumpyOps, ops).use_blis:
            node.ops = _TORCH_GEMM_OPS
    previous = _torch_gemm_on()
    _local.on = True
    try:
        yield
    finally:
        _local.on = previous
