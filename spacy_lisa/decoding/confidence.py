"""Confidence scores of decoded frames (plain numpy, no spaCy).

A role span's score starts from its probability under the model's own per-token label
distributions (the softmax of the role logits at a temperature ``T``, the distributions
the role loss trains): ``B-X`` at its first token, ``I-X`` at every later one, and not
``I-X`` at the token after it (the span ends there). The decoder's transition scores and
constraints are not part of it. That probability is then mapped by Platt scaling
(:func:`calibrated`, the component's ``score_calibration``, fitted on held-out
documents): on EWT it scored better against rightness than the span's marginal in the
decoder's constrained lattice, and costs no pass over the lattice
(docs/benchmarks/calibration.md).
A predicate's score is the joint POS/predicate classifier's probability that the token
is a predicate; a roleset's, the sense classifier's probability among the lemma's
candidates.
"""

from __future__ import annotations

from typing import Tuple

import numpy as np

from .bio import BioLabels
from .scores import log_softmax

Spans = Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # frame, start, end, type id


def span_scores(
    role_logits: np.ndarray, spans: Spans, lengths: np.ndarray, info: BioLabels, temperature: float
) -> np.ndarray:
    """The probability of each span (``[n_spans]``, in ``spans`` order) under
    ``softmax(role_logits / temperature)`` per token; ``lengths`` are the frames' window
    lengths (a span ending there has no token after it). Only the rows of the tokens a
    span reads are normalised, not the whole padded batch."""
    frame, start, end, type_id = (np.asarray(a, dtype=np.int64) for a in spans)
    if not len(frame):
        return np.zeros(0, dtype=np.float64)
    begin_id, inside_id, has_inside = _label_ids(info)
    # every token of every span, then the token after it where it may continue the span
    length = end - start
    owner = np.repeat(np.arange(len(frame)), length)
    offset = np.arange(owner.shape[0]) - np.repeat(np.cumsum(length) - length, length)
    more = np.flatnonzero((end < np.asarray(lengths, dtype=np.int64)[frame]) & has_inside[type_id])
    rows_frame = np.concatenate([frame[owner], frame[more]])
    rows_token = np.concatenate([start[owner] + offset, end[more]])
    rows = np.asarray(role_logits[rows_frame, rows_token], dtype=np.float64) / temperature
    log_probs = log_softmax(rows, axis=-1)
    n_in = owner.shape[0]
    wanted = np.where(offset == 0, begin_id[type_id[owner]], inside_id[type_id[owner]])
    log_score = np.bincount(owner, weights=log_probs[np.arange(n_in), wanted], minlength=len(frame))
    # the token after the span does not continue it
    continues = np.exp(log_probs[n_in + np.arange(len(more)), inside_id[type_id[more]]])
    log_score[more] += np.log1p(-np.minimum(continues, 1.0 - 1e-12))
    return np.exp(log_score)


# marginals are clipped to [CLIP, 1 - CLIP] before the logit of the calibration map
CLIP = 1e-6


def calibrated(scores: np.ndarray, a: float, b: float) -> np.ndarray:
    """``sigmoid(a * logit(p) + b)`` of each score ``p`` (Platt scaling)."""
    if (a, b) == (1.0, 0.0):
        return scores
    p = np.clip(scores, CLIP, 1 - CLIP)
    return 1.0 / (1.0 + np.exp(-(a * np.log(p / (1 - p)) + b)))


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
