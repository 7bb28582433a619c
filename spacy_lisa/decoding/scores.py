"""The score arrays the decoders read: brought to the host and checked, floored,
log-normalised (plain numpy)."""

from __future__ import annotations

import numpy as np

from ..device import to_host
from ..errors import Errors

# Scores below this are clamped to it. A finite floor (instead of -inf) keeps every path
# and every tree reachable, so the decoders always return a well-formed answer even when
# a caller masks labels or arcs with -inf; hard constraints use a real -inf on top.
FLOOR = -1e30


def host_scores(log_probs: np.ndarray, n_labels: int) -> np.ndarray:
    """``log_probs`` as a numpy array ``[frames, tokens, n_labels]`` (E251 otherwise);
    scores on a GPU (CuPy, torch) come to the host here, once for the whole batch."""
    scores = np.asarray(to_host(log_probs))
    if scores.ndim != 3 or scores.shape[2] != n_labels:
        raise ValueError(
            Errors.E251.format(
                what="log_probs",
                message=f"expected shape [frames, tokens, {n_labels}], got {scores.shape}",
            )
        )
    return scores


def floored(values: np.ndarray, what: str) -> np.ndarray:
    """``values`` with -inf (and anything below) clamped to :data:`FLOOR`; NaN and +inf
    are rejected (E251, naming ``what``) because they make every path's score
    meaningless."""
    if np.isnan(values).any() or np.isposinf(values).any():
        raise ValueError(Errors.E251.format(what=what, message="contains NaN or +inf"))
    return np.maximum(values, FLOOR)


def log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """``log(softmax(x))`` along ``axis``, shifted by the max for stability."""
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
