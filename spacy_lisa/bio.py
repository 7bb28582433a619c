"""BIO role tags <-> labelled spans, for one predicate over one window of tokens.

LISA scores one BIO tag per (predicate, token). The predicate itself is tagged ``B-V``
(``I-V`` for multi-word predicates), every role span ``B-X I-X ...``, all else ``O``.
BIO cannot hold overlapping spans: :func:`spans_to_bio` keeps the spans in order
(earlier start first, longer first) and returns those it could not place, so callers
count them instead of dropping them silently.
"""

from __future__ import annotations

from typing import Iterable, List, Tuple

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
