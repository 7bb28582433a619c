"""Confidence scores of decoded frames (plain numpy, no spaCy).

A role span's score is its probability under the model's own per-token label
distributions (the softmax of the role logits at a temperature ``T``, the distributions
the role loss trains): ``B-X`` at its first token, ``I-X`` at every later one, and not
``I-X`` at the token after it (the span ends there). The decoder's transition scores and
constraints are not part of it, so a span that Viterbi prefers over the per-token argmax
can score low: the score says how sure the model was, not how good the path is.
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
    lengths (a span ending there has no token after it)."""
    frame, start, end, type_id = (np.asarray(a, dtype=np.int64) for a in spans)
    if not len(frame):
        return np.zeros(0, dtype=np.float64)
    begin_id, inside_id, has_inside = _label_ids(info)
    log_probs = log_softmax(np.asarray(role_logits, dtype=np.float64) / temperature, axis=-1)
    log_score = log_probs[frame, start, begin_id[type_id]]
    # every token after the first: one flat index over all spans' inner tokens
    n_inside = end - start - 1
    owner = np.repeat(np.arange(len(frame)), n_inside)
    first = np.cumsum(n_inside) - n_inside
    tokens = np.repeat(start + 1, n_inside) + np.arange(owner.shape[0]) - np.repeat(first, n_inside)
    inside = log_probs[frame[owner], tokens, inside_id[type_id[owner]]]
    log_score += np.bincount(owner, weights=inside, minlength=len(frame))
    # the token after the span, inside the window, does not continue it
    more = np.flatnonzero((end < np.asarray(lengths, dtype=np.int64)[frame]) & has_inside[type_id])
    continues = np.exp(log_probs[frame[more], end[more], inside_id[type_id[more]]])
    log_score[more] += np.log1p(-np.minimum(continues, 1.0 - 1e-12))
    return np.exp(log_score)


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
