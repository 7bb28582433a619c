"""BIO role tags <-> labelled spans, for one predicate over one window of tokens.

LISA scores one BIO tag per (predicate, token). The predicate itself is tagged ``B-V``
(``I-V`` for multi-word predicates), every role span ``B-X I-X ...``, all else ``O``.

- :func:`spans_to_bio`: spans -> tags (training targets, corpus statistics, formats).
  BIO cannot hold overlapping spans: it keeps the spans in order (earlier start first,
  longer first) and returns those it could not place, so callers count them instead of
  dropping them silently.
- :class:`BioLabels` (:func:`bio_labels`): array views of a label set (prefix, span type,
  the hard BIO constraints) that the decoders read instead of strings.
- :func:`paths_to_spans`: decoded label id paths -> spans, on arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, Iterable, List, Tuple

import numpy as np

from ..errors import Errors

OUTSIDE = "O"
VERB = "V"

LabelledSpan = Tuple[int, int, str]  # (start, end exclusive, label)


def spans_to_bio(
    length: int,
    spans: Iterable[LabelledSpan],
    *,
    predicate: Tuple[int, int] | None = None,
) -> Tuple[List[str], List[LabelledSpan]]:
    """Tag ``length`` tokens with BIO tags from ``spans`` (offsets relative to the window).

    The predicate span, if given, is placed first as ``V``. Returns the tags and the
    spans that overlapped an already placed span (or fell outside the window) and were
    therefore not tagged.
    """
    tags = [OUTSIDE] * length
    rejected: List[LabelledSpan] = []
    ordered: List[LabelledSpan] = []
    if predicate is not None:
        ordered.append((predicate[0], predicate[1], VERB))
    ordered.extend(sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))))
    for start, end, label in ordered:
        if not 0 <= start < end <= length or any(t != OUTSIDE for t in tags[start:end]):
            rejected.append((start, end, label))
            continue
        tags[start] = f"B-{label}"
        for i in range(start + 1, end):
            tags[i] = f"I-{label}"
    return tags, rejected


@dataclass(frozen=True)
class BioLabels:
    """Array views of a BIO label set, computed once per label tuple (:func:`bio_labels`).

    ``prefix`` and ``type_id`` have one extra entry at the end (index ``-1``) for padding,
    which reads as ``O``: padded paths (``-1`` past a frame's length) need no special case.
    Convention: ``transition_mask[i, j]`` is for tag ``labels[j]`` following ``labels[i]``
    (row = previous tag).
    """

    labels: Tuple[str, ...]
    types: Tuple[str, ...]  # span types (``"ARG0"``, ``"V"``, ...), ``type_id`` indexes them
    prefix: np.ndarray  # [L + 1] int8: 1 = B-, 2 = I-, 0 = anything else (O, padding)
    type_id: np.ndarray  # [L + 1] int64: the type after the B-/I- prefix, -1 for others
    verb_type: int  # type id of ``V`` (the predicate), -1 when the set has no V tag
    free: np.ndarray  # ids of labels that may follow any label (not I-)
    inside: np.ndarray  # ids of I- labels
    inside_prev: np.ndarray  # [n_inside, k]: labels allowed before each I- label, ascending
    transition_mask: np.ndarray  # [L, L] float64: 0 allowed, -inf forbidden (I-X after no X)
    start_mask: np.ndarray  # [L] float64: 0 allowed, -inf for I- labels


def _bio_masks(labels: Tuple[str, ...]) -> Tuple[np.ndarray, np.ndarray]:
    """Additive masks (0 allowed, -inf forbidden) for transitions ``[L, L]`` and starts
    ``[L]`` under hard BIO constraints."""
    is_inside = np.array([label.startswith("I-") for label in labels], dtype=bool)
    is_begin = np.array([label.startswith("B-") for label in labels], dtype=bool)
    # the type after the B-/I- prefix; other tags (O, ...) get a type no I- tag can have
    types = np.array(
        [
            label[2:] if (b or i) else None
            for label, b, i in zip(labels, is_begin, is_inside, strict=True)
        ],
        dtype=object,
    )
    same_type = types[:, None] == types[None, :]  # [prev, next]
    continues = (is_begin | is_inside)[:, None] & same_type
    allowed = ~is_inside[None, :] | continues
    return np.where(allowed, 0.0, -np.inf), np.where(is_inside, -np.inf, 0.0)


@lru_cache(maxsize=64)
def bio_labels(labels: Tuple[str, ...]) -> BioLabels:
    """The :class:`BioLabels` of ``labels`` (cached, its arrays read-only: a component has
    one label tuple, which every frame of every doc reuses)."""
    labels = tuple(labels)
    trans_mask, start_mask = _bio_masks(labels)
    types: Dict[str, int] = {}
    prefix = np.zeros(len(labels) + 1, dtype=np.int8)
    type_id = np.full(len(labels) + 1, -1, dtype=np.int64)
    for i, label in enumerate(labels):
        # as conlleval reads tags: "B-X" / "I-X" open or continue an X span
        head, _, name = label.partition("-")
        if head in ("B", "I"):
            prefix[i] = 1 if head == "B" else 2
            type_id[i] = types.setdefault(name, len(types))
    is_inside = prefix[:-1] == 2
    inside = np.flatnonzero(is_inside)
    allowed = [np.flatnonzero(trans_mask[:, j] == 0) for j in inside]
    width = max((len(a) for a in allowed), default=1)
    # pad each row by repeating its last (largest) id: a repeated candidate never wins an
    # argmax over its first occurrence, so ties still go to the lowest label id
    inside_prev = np.array(
        [np.concatenate([a, np.full(width - len(a), a[-1])]) for a in allowed], dtype=np.intp
    ).reshape(len(inside), width)
    free = np.flatnonzero(~is_inside)
    for array in (prefix, type_id, inside, inside_prev, free, trans_mask, start_mask):
        array.setflags(write=False)
    return BioLabels(
        labels=labels,
        types=tuple(types),
        prefix=prefix,
        type_id=type_id,
        verb_type=types.get(VERB, -1),
        free=free,
        inside=inside,
        inside_prev=inside_prev,
        transition_mask=trans_mask,
        start_mask=start_mask,
    )


def paths_to_spans(
    paths: np.ndarray, info: BioLabels
) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Labelled spans of padded label id paths (``[F, T]``, ``-1`` = padding), read as
    conlleval reads tags (lenient: an ``I-X`` that continues no ``X`` span opens one).
    Returns ``(frame, start, end, type_id)`` arrays, ordered by frame then start;
    ``end`` is exclusive, ``type_id`` indexes ``info.types``."""
    paths = np.asarray(paths, dtype=np.int64)
    if paths.ndim != 2:
        raise ValueError(
            Errors.E251.format(what="paths", message=f"expected 2 dims, got {paths.shape}")
        )
    prefix = info.prefix[paths]
    types = info.type_id[paths]
    in_span = prefix > 0
    # continues[f, t]: position t extends the span open at t - 1
    continues = np.zeros_like(in_span)
    continues[:, 1:] = (prefix[:, 1:] == 2) & in_span[:, :-1] & (types[:, 1:] == types[:, :-1])
    opens = in_span & ~continues
    closes = in_span.copy()  # a span closes after t unless t + 1 continues it
    closes[:, :-1] &= ~continues[:, 1:]
    frame, start = np.nonzero(opens)
    _, last = np.nonzero(closes)  # row-major: the k-th close of a frame ends its k-th span
    return frame, start, last + 1, types[frame, start]
