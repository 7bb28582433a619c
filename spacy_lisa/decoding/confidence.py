"""Confidence scores of decoded frames (plain numpy, no spaCy).

A role span's score is its marginal probability in the lattice the decoder searches:
the model's per-token label distributions (the softmax of the role logits at a
temperature ``T``), the hard BIO constraints, the predicate token held to ``B-V``/``I-V``
and, for Viterbi decoding, the weighted transition scores. Over all the paths of that
lattice, weighted as the decoder weighs them, the score is the share of weight on the
paths that hold the span: ``B-X`` at its first token, ``I-X`` at each later one and no
``I-X`` right after it (forward-backward, scaled per token, one batched matrix product
per token for all frames). The re-decoding that keeps numbered arguments unique is not
part of it.
A predicate's score is the joint POS/predicate classifier's probability that the token
is a predicate; a roleset's, the sense classifier's probability among the lemma's
candidates.
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from .bio import BioLabels
from .scores import log_softmax

Spans = Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # frame, start, end, type id


def span_scores(
    role_logits: np.ndarray,
    spans: Spans,
    lengths: np.ndarray,
    info: BioLabels,
    temperature: float,
    *,
    positions: Optional[np.ndarray] = None,
    transitions: Optional[np.ndarray] = None,
    start: Optional[np.ndarray] = None,
) -> np.ndarray:
    """The marginal probability of each span (``[n_spans]``, in ``spans`` order) in the
    decoder's lattice over ``softmax(role_logits / temperature)`` (``[F, T, L]``, padded;
    ``lengths`` the frames' window lengths), with the predicate tokens ``positions`` held
    to ``V`` and ``transitions`` / ``start`` (already weighted, log) where given."""
    frame, begin, end, type_id = (np.asarray(a, dtype=np.int64) for a in spans)
    if not len(frame):
        return np.zeros(0, dtype=np.float64)
    sizes = np.asarray(lengths, dtype=np.int64).reshape(-1)
    emit = _emissions(role_logits, info, temperature, positions)
    step = np.exp(info.transition_mask + (0.0 if transitions is None else transitions))
    first = np.exp(info.start_mask + (0.0 if start is None else start))
    alpha, beta, scale = _forward_backward(emit, sizes, step, first)
    begin_id, inside_id, has_inside = _label_ids(info)
    b_ids, i_ids = begin_id[type_id], inside_id[type_id]
    log_score = np.log(alpha[frame, begin, b_ids])
    # each inner token: the step into I-X (from B-X at the first, then from I-X)
    n_inside = end - begin - 1
    owner = np.repeat(np.arange(len(frame)), n_inside)
    offset = np.arange(owner.shape[0]) - np.repeat(np.cumsum(n_inside) - n_inside, n_inside)
    tokens = np.repeat(begin + 1, n_inside) + offset
    previous = np.where(offset == 0, b_ids[owner], i_ids[owner])
    f_in, i_in = frame[owner], i_ids[owner]
    inner = step[previous, i_in] * emit[f_in, tokens, i_in] / scale[f_in, tokens]
    log_score += np.bincount(owner, weights=np.log(inner), minlength=len(frame))
    # the token after the span, inside the window: any label but I-X
    more = np.flatnonzero(end < sizes[frame])
    f_m, t_m = frame[more], end[more]
    last = np.where(end[more] - begin[more] > 1, i_ids[more], b_ids[more])
    onward = step[last] * emit[f_m, t_m] * beta[f_m, t_m]  # [n_more, L]
    cont = np.where(has_inside[type_id[more]], onward[np.arange(len(more)), i_ids[more]], 0.0)
    log_score[more] += np.log(np.maximum(onward.sum(axis=1) - cont, 0.0) / scale[f_m, t_m])
    return np.clip(np.exp(log_score), 0.0, 1.0)


# marginals are clipped to [CLIP, 1 - CLIP] before the logit of the calibration map
CLIP = 1e-6


def calibrated(marginals: np.ndarray, a: float, b: float) -> np.ndarray:
    """``sigmoid(a * logit(p) + b)`` of each marginal ``p`` (Platt scaling)."""
    if (a, b) == (1.0, 0.0):
        return marginals
    p = np.clip(marginals, CLIP, 1 - CLIP)
    return 1.0 / (1.0 + np.exp(-(a * np.log(p / (1 - p)) + b)))


def _emissions(
    role_logits: np.ndarray, info: BioLabels, temperature: float, positions: Optional[np.ndarray]
) -> np.ndarray:
    """Per-token label probabilities ``[F, T, L]`` at ``temperature``, the predicate
    token of each frame held to the ``V`` labels (as the decoder holds it)."""
    emit = np.exp(log_softmax(np.asarray(role_logits, dtype=np.float64) / temperature, axis=-1))
    if positions is not None and info.verb_type >= 0 and len(emit):
        not_verb = np.flatnonzero(info.type_id[:-1] != info.verb_type)
        frames = np.arange(emit.shape[0])[:, None]
        emit[frames, np.asarray(positions, dtype=np.int64).reshape(-1, 1), not_verb[None, :]] = 0.0
    return emit


def _forward_backward(
    emit: np.ndarray, sizes: np.ndarray, step: np.ndarray, first: np.ndarray
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scaled forward and backward weights ``[F, T, L]`` and the per-token scales
    ``[F, T]`` (each forward row sums to 1; a padded token has scale 1 and carries the
    last real row forward, backward rows past a frame's last token are 1)."""
    n_frames, n_tokens, n_labels = emit.shape
    alpha = np.zeros_like(emit)
    beta = np.ones_like(emit)
    scale = np.ones((n_frames, n_tokens))
    tiny = np.finfo(np.float64).tiny
    current = first[None, :] * emit[:, 0]
    for t in range(n_tokens):
        if t:
            current = (alpha[:, t - 1] @ step) * emit[:, t]
            current = np.where((t < sizes)[:, None], current, alpha[:, t - 1])
        total = np.maximum(current.sum(axis=1), tiny)
        scale[:, t] = np.where(t < sizes, total, 1.0)
        alpha[:, t] = current / scale[:, t, None]
    for t in range(n_tokens - 2, -1, -1):
        following = emit[:, t + 1] * beta[:, t + 1] / scale[:, t + 1, None]
        beta[:, t] = np.where((t + 1 < sizes)[:, None], following @ step.T, 1.0)
    return alpha, beta, scale


def _label_ids(info: BioLabels) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per span type the label id of its ``B-`` and ``I-`` tag, and whether it has an
    ``I-`` tag (a type without one has only one-token spans, which nothing continues)."""
    n_types = len(info.types)
    begin_id = np.zeros(n_types, dtype=np.int64)
    inside_id = np.zeros(n_types, dtype=np.int64)
    has_inside = np.zeros(n_types, dtype=bool)
    for label_id in range(len(info.labels)):
        kind, type_ = int(info.prefix[label_id]), int(info.type_id[label_id])
        if kind == 1:
            begin_id[type_] = label_id
        elif kind == 2:
            inside_id[type_], has_inside[type_] = label_id, True
    return begin_id, inside_id, has_inside


def predicate_scores(
    tag_logits: np.ndarray, rows: np.ndarray, predicate_tags: np.ndarray
) -> np.ndarray:
    """The probability that each token at ``rows`` of ``tag_logits`` (``[N, n_tags]``) is
    a predicate: the softmax mass of the ``predicate_tags`` (joint POS/predicate ids)."""
    if not len(rows) or not len(predicate_tags):
        return np.zeros(len(rows), dtype=np.float64)
    probs = np.exp(log_softmax(np.asarray(tag_logits[rows], dtype=np.float64), axis=-1))
    return probs[:, predicate_tags].sum(axis=-1)
