"""``spacy-lisa.release_memory.v1``: give freed memory back to the OS during training.

Training the predicate-aware architecture (``spacy-lisa.PredicateAwareLISA.v1``)
allocates tensors of a different shape at every step (a batch's predicates' windows,
padded per sub-batch), up to a few GB each
step. glibc's allocator keeps much of what is freed in its heaps instead of returning it,
so a long run's resident memory grows step after step (on EWT on 2 cores: 5 GB to over
8 GB within 40 minutes), until the machine runs out. ``malloc_trim`` hands the free pages
back; called every few steps it keeps the process at its per-step peak (BENCHMARKS.md,
Training cost). Used as ``[training.before_update]`` in configs/lisa_trf_marked.cfg; a
no-op where the C library has no ``malloc_trim`` (not glibc).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any, Callable, Dict, Optional

from spacy.language import Language
from spacy.util import registry

from .errors import Errors


def _malloc_trim() -> Optional[Callable[[int], int]]:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    trim = getattr(ctypes.CDLL(name), "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim  # type: ignore[no-any-return]


@registry.callbacks("spacy-lisa.release_memory.v1")
def release_memory(every: int = 10) -> Callable[[Language, Dict[str, Any]], None]:
    """A ``[training.before_update]`` callback: every ``every`` steps, return the memory
    the C allocator holds free to the OS (glibc's ``malloc_trim(0)``)."""
    if every < 1:
        raise ValueError(Errors.E175.format(every=every))
    trim = _malloc_trim()

    def before_update(nlp: Language, args: Dict[str, Any]) -> None:
        if trim is not None and args.get("step", 0) % every == 0:
            trim(0)

    return before_update
