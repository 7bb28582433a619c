"""Token alignment between an :class:`~spacy.training.Example`'s predicted and reference
docs: the one-to-one token map shared by the scorer and the ``lisa_srl`` component.

Two tokens are *partners* when each aligns to exactly one token of the other doc and
that token is the other (spaCy's ``example.alignment``: ``x`` is predicted, ``y`` the
reference). Tokens split or merged by the other tokenisation have no partner; their
annotation is masked, never guessed. When both docs have the same words the map is the
identity and ``example.alignment`` is not computed.
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
from spacy.attrs import ORTH
from spacy.training import Example

Piece = Tuple[int, int]


def same_words(example: Example) -> bool:
    """True when the predicted and reference docs have the same tokens (texts)."""
    pred, ref = example.predicted, example.reference
    if len(pred) != len(ref):
        return False
    # the texts' hashes, one array each, rather than a Token object per token: a hash
    # depends on the text alone, in every vocab
    return bool(np.array_equal(pred.to_array(ORTH), ref.to_array(ORTH)))


def one_to_one(example: Example) -> Tuple[np.ndarray, np.ndarray]:
    """``(p2r, r2p)``: int32 arrays mapping each predicted token to its reference
    partner and back, ``-1`` for tokens without a one-to-one partner."""
    pred, ref = example.predicted, example.reference
    if same_words(example):
        ident = np.arange(len(pred), dtype="i")
        return ident, ident.copy()
    x2y, y2x = example.alignment.x2y, example.alignment.y2x
    p2r = np.full(len(pred), -1, dtype="i")
    r2p = np.full(len(ref), -1, dtype="i")
    y_lengths = y2x.lengths
    for i, (n, start) in enumerate(zip(x2y.lengths, x2y.starts, strict=True)):
        if n == 1:
            j = int(x2y.data[start])
            if y_lengths[j] == 1:
                p2r[i] = j
                r2p[j] = i
    return p2r, r2p


class TokenMap:
    """Predicted-token -> reference-token offsets of one example: single tokens through
    the one-to-one map, spans through the full alignment."""

    def __init__(self, example: Example) -> None:
        self.identity = same_words(example)
        if self.identity:
            self.p2r, self.r2p = one_to_one(example)
        else:
            align = example.alignment
            self.x2y, self.y2x = align.x2y, align.y2x
            self.p2r, self.r2p = one_to_one(example)

    def token(self, i: int) -> Optional[int]:
        """The reference partner of predicted token ``i`` (``None`` if it has none)."""
        j = int(self.p2r[i])
        return j if j >= 0 else None

    def span(self, start: int, end: int) -> Optional[Piece]:
        """Reference offsets of predicted span ``[start, end)``, or ``None`` when its
        boundaries do not fall on reference token boundaries."""
        if self.identity:
            return (start, end)
        ys = self.x2y.data[self.x2y.starts[start] : self.x2y.ends[end - 1]]
        if len(ys) == 0:
            return None
        first, last = int(ys.min()), int(ys.max()) + 1
        if len(np.unique(ys)) != last - first:  # not contiguous
            return None
        # every reference token covered must lie wholly inside the predicted span
        xs = self.y2x.data[self.y2x.starts[first] : self.y2x.ends[last - 1]]
        if len(xs) == 0 or int(xs.min()) < start or int(xs.max()) >= end:
            return None
        return (first, last)
