"""Doc serialisation without srsly's registry scan on every msgpack call.

srsly builds a new msgpack ``Packer``/``Unpacker`` for every ``msgpack_dumps`` /
``msgpack_loads`` and, each time, asks catalogue for every registered encoder/decoder:
catalogue then walks all installed entry points and its whole function registry. With
spaCy, Thinc and torch loaded that cost ~0.5-1.5 ms a call, and ``Doc.to_bytes`` /
``Doc.from_bytes`` make 3-5 calls a doc (5 when the doc has user data, as every doc
``lisa_srl`` annotated has): ~3 ms a doc each way, more than ``lisa_srl`` spends
labelling an average EWT sentence. ``nlp.pipe(..., n_process=N)`` moves every doc between
processes with exactly these two calls, so the main process spent its time decoding docs
(BENCHMARKS.md, Prediction speed).

:func:`cache_msgpack_codecs` keeps the answer of the two registries' ``get_all`` and
asks again whenever something is registered (through the registries' ``register``, or
any new name in catalogue's registry), so the encoders used are always the ones a fresh
lookup would give. It changes srsly for the whole process, so it is installed only where
the process is the package's: ``spacy-lisa predict`` when it runs worker processes (``-n
2`` and more; the workers it forks inherit it), and the training reader
(``spacy-lisa.SRLCorpus.v1``), which ``spacy train`` runs over every DocBin each epoch and
each evaluation (a 3,000-sentence read took a tenth of the time cached). A
program that runs ``nlp.pipe(..., n_process=N)`` itself may call it the same way.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, Optional

import catalogue
from srsly import msgpack as srsly_msgpack


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


def cache_msgpack_codecs() -> None:
    """Cache srsly's msgpack encoder and decoder lookups in this process (idempotent)."""
    for registry in (srsly_msgpack.msgpack_encoders, srsly_msgpack.msgpack_decoders):
        if isinstance(getattr(registry, "_spacy_lisa_cache", None), _CachedRegistry):
            continue
        cache = _CachedRegistry(registry)
        registry._spacy_lisa_cache = cache  # type: ignore[attr-defined]
        registry.get_all = cache.get_all  # type: ignore[method-assign]
        registry.register = cache.register  # type: ignore[method-assign]


@contextmanager
def uncached_msgpack_codecs() -> Iterator[None]:
    """srsly's own lookups for the duration of the block (to measure what the cache
    saves, e.g. ``benchmarks/bench_pipeline_speed.py --n-process 2``)."""
    registries = (srsly_msgpack.msgpack_encoders, srsly_msgpack.msgpack_decoders)
    saved = [registry.__dict__.get("get_all") for registry in registries]
    for registry in registries:
        cache = getattr(registry, "_spacy_lisa_cache", None)
        if cache is not None:
            registry.get_all = cache.uncached_get_all  # type: ignore[method-assign]
    try:
        yield
    finally:
        for registry, get_all in zip(registries, saved, strict=True):
            if get_all is not None:
                registry.get_all = get_all  # type: ignore[method-assign]
