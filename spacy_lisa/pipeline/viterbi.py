"""Constrained BIO decoding of role scores (plain numpy, no spaCy).

- :func:`viterbi_decode`: best BIO role sequence of one frame under hard BIO constraints,
  optionally with transition/start log-probabilities estimated from the training data
  (:func:`estimate_transitions`), as in LISA §7 (Table 7: +0.2 to +0.6 F1 over greedy).
- :func:`viterbi_paths`: the same for every frame of a batch at once (``[F, T]`` ids).
- :func:`greedy_decode`, :func:`greedy_paths`: per-token argmax (the baseline).
- :class:`BioLabels` (:func:`bio_labels`): array views of a label set (prefix, span type)
  that the decoders and :mod:`spacy_lisa.pipeline.decoding` read instead of strings.

Convention: ``transitions[i, j]`` is the score of tag ``labels[j]`` following tag
``labels[i]`` (row = previous tag).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from ..bio import VERB
from ..errors import Errors

# Scores below this are clamped to it. A finite floor (instead of -inf) keeps every path
# and every tree reachable, so the decoders always return a well-formed answer even when
# a caller masks labels or arcs with -inf; hard constraints use a real -inf on top.
_FLOOR = -1e30


def estimate_transitions(
    sequences: Iterable[Sequence[str]],
    labels: Sequence[str],
    smoothing: float = 1.0,
) -> Tuple[np.ndarray, np.ndarray]:
    """Log transition (``[L, L]``, row = previous tag) and log start (``[L]``)
    probabilities from training BIO sequences, add-``smoothing`` estimated.

    Invalid BIO transitions are not forbidden here (the decoder enforces them); never
    seen in valid data, they only receive smoothing mass. A previous tag never seen
    with ``smoothing=0`` gets a uniform row (no evidence either way).
    """
    if smoothing < 0:
        raise ValueError(Errors.E250.format(message=f"smoothing must be >= 0, got {smoothing}"))
    index: Dict[str, int] = {label: i for i, label in enumerate(labels)}
    n = len(index)
    if n != len(labels):
        raise ValueError(Errors.E250.format(message="labels contain duplicates"))
    counts = np.zeros((n, n), dtype=np.float64)
    starts = np.zeros((n,), dtype=np.float64)
    for seq in sequences:
        try:
            ids = [index[tag] for tag in seq]
        except KeyError as err:
            raise ValueError(
                Errors.E250.format(message=f"tag {err.args[0]!r} is not among the labels")
            ) from None
        if not ids:
            continue
        starts[ids[0]] += 1
        # np.add.at accumulates repeated (prev, next) pairs, unlike fancy-index +=
        np.add.at(counts, (ids[:-1], ids[1:]), 1)
    counts += smoothing
    starts += smoothing
    return _log_normalise(counts), _log_normalise(starts[None, :])[0]


def _log_normalise(counts: np.ndarray) -> np.ndarray:
    """Row-wise log(counts / row sum); all-zero rows become uniform."""
    totals = counts.sum(axis=-1, keepdims=True)
    n = counts.shape[-1]
    probs = np.where(totals > 0, counts / np.where(totals > 0, totals, 1.0), 1.0 / max(n, 1))
    with np.errstate(divide="ignore"):  # zero counts with smoothing=0 are log(0) = -inf
        return np.log(probs)


@lru_cache(maxsize=64)
def _bio_masks(labels: Tuple[str, ...]) -> Tuple[np.ndarray, np.ndarray]:
    """Additive masks (0 allowed, -inf forbidden) for transitions ``[L, L]`` and starts
    ``[L]`` under hard BIO constraints; cached because every frame of every doc reuses
    the component's one label tuple."""
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
    trans_mask = np.where(allowed, 0.0, -np.inf)
    start_mask = np.where(is_inside, -np.inf, 0.0)
    trans_mask.setflags(write=False)
    start_mask.setflags(write=False)
    return trans_mask, start_mask


def _floored(values: np.ndarray, what: str) -> np.ndarray:
    """``values`` with -inf (and anything below) clamped to the finite floor; NaN and
    +inf are rejected because they make every path's score meaningless."""
    if np.isnan(values).any() or np.isposinf(values).any():
        raise ValueError(Errors.E251.format(what=what, message="contains NaN or +inf"))
    return np.maximum(values, _FLOOR)


def viterbi_decode(
    log_probs: np.ndarray,
    labels: Sequence[str],
    transitions: Optional[np.ndarray] = None,
    start: Optional[np.ndarray] = None,
) -> List[int]:
    """Best label index sequence for ``log_probs`` (``[T, L]``) that is valid BIO (no
    ``I-X`` unless after ``B-X``/``I-X``, no ``I-`` first). ``transitions`` (``[L, L]``,
    row = previous) and ``start`` (``[L]``) are added log-scores, e.g. from
    :func:`estimate_transitions`. O(T·L²), vectorised over labels."""
    scores = np.asarray(log_probs, dtype=np.float64)
    if scores.ndim != 2:
        raise ValueError(
            Errors.E251.format(
                what="log_probs",
                message=f"expected shape [tokens, {len(labels)}], got {scores.shape}",
            )
        )
    # one frame of the batch decoder, which checks the label axis and the values
    path = viterbi_paths(scores[None], [scores.shape[0]], labels, transitions, start)[0]
    return path.tolist()


@dataclass(frozen=True)
class BioLabels:
    """Array views of a BIO label set, computed once per label tuple (:func:`bio_labels`).

    Every per-label array has one extra entry at the end (index ``-1``) for padding, which
    reads as ``O``: padded paths (``-1`` past a frame's length) need no special case.
    """

    labels: Tuple[str, ...]
    types: Tuple[str, ...]  # span types (``"ARG0"``, ``"V"``, ...), ``type_id`` indexes them
    prefix: np.ndarray  # [L + 1] int8: 1 = B-, 2 = I-, 0 = anything else (O, padding)
    type_id: np.ndarray  # [L + 1] int64: the type after the B-/I- prefix, -1 for others
    verb_type: int  # type id of ``V`` (the predicate), -1 when the set has no V tag
    free: np.ndarray  # ids of labels that may follow any label (not I-)
    inside: np.ndarray  # ids of I- labels
    inside_prev: np.ndarray  # [n_inside, k]: labels allowed before each I- label, ascending


@lru_cache(maxsize=64)
def bio_labels(labels: Tuple[str, ...]) -> BioLabels:
    """The :class:`BioLabels` of ``labels`` (cached: a component has one label tuple)."""
    labels = tuple(labels)
    trans_mask, _ = _bio_masks(labels)
    types: Dict[str, int] = {}
    prefix = np.zeros(len(labels) + 1, dtype=np.int8)
    type_id = np.full(len(labels) + 1, -1, dtype=np.int64)
    for i, label in enumerate(labels):
        # as bio.bio_to_spans reads tags: "B-X" / "I-X" open or continue an X span
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
    for array in (prefix, type_id, inside, inside_prev):
        array.setflags(write=False)
    free = np.flatnonzero(~is_inside)
    free.setflags(write=False)
    return BioLabels(
        labels=labels,
        types=tuple(types),
        prefix=prefix,
        type_id=type_id,
        verb_type=types.get(VERB, -1),
        free=free,
        inside=inside,
        inside_prev=inside_prev,
    )


def _lengths(lengths: Sequence[int], n_frames: int, n_tokens: int) -> np.ndarray:
    sizes = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if sizes.shape[0] != n_frames or (sizes < 0).any() or (sizes > n_tokens).any():
        raise ValueError(
            Errors.E251.format(
                what="lengths", message=f"expected {n_frames} values in [0, {n_tokens}]"
            )
        )
    return sizes


def _checked_scores(log_probs: np.ndarray, n_labels: int) -> np.ndarray:
    scores = np.asarray(log_probs)
    if scores.ndim != 3 or scores.shape[2] != n_labels:
        raise ValueError(
            Errors.E251.format(
                what="log_probs",
                message=f"expected shape [frames, tokens, {n_labels}], got {scores.shape}",
            )
        )
    return scores


def _viterbi_tables(
    labels: Tuple[str, ...], transitions: Optional[np.ndarray], start: Optional[np.ndarray]
) -> Tuple[np.ndarray, np.ndarray]:
    """Transition ``[L, L]`` and start ``[L]`` log-scores: hard BIO masks plus the soft
    scores given, checked."""
    n_labels = len(labels)
    trans_mask, start_mask = _bio_masks(labels)
    if not np.isfinite(start_mask).any():
        raise ValueError(
            Errors.E251.format(what="labels", message="all are I- tags, no valid BIO sequence")
        )
    trans = trans_mask.copy()
    if transitions is not None:
        soft = np.asarray(transitions, dtype=np.float64)
        if soft.shape != (n_labels, n_labels):
            raise ValueError(
                Errors.E251.format(
                    what="transitions",
                    message=f"expected shape ({n_labels}, {n_labels}), got {soft.shape}",
                )
            )
        trans = trans + _floored(soft, "transitions")
    first = start_mask.copy()
    if start is not None:
        soft_start = np.asarray(start, dtype=np.float64)
        if soft_start.shape != (n_labels,):
            raise ValueError(
                Errors.E251.format(
                    what="start", message=f"expected shape ({n_labels},), got {soft_start.shape}"
                )
            )
        first = first + _floored(soft_start, "start")
    return trans, first


def viterbi_paths(
    log_probs: np.ndarray,
    lengths: Sequence[int],
    labels: Sequence[str],
    transitions: Optional[np.ndarray] = None,
    start: Optional[np.ndarray] = None,
    *,
    chunk_size: Optional[int] = None,
    prune: bool = True,
) -> np.ndarray:
    """Best valid BIO paths of many frames: ``log_probs`` ``[F, T, L]`` padded to the
    longest frame, ``lengths`` the real length of each. Returns ``[F, T]`` label ids,
    ``-1`` past each frame's length (padding is never read, it may hold anything).

    One loop over token positions for a chunk of ``chunk_size`` length-sorted frames, the
    max over the previous label one broadcast op per step for the whole chunk. The hard
    BIO constraints are used structurally: a label that is not ``I-`` may follow any label
    (a dense ``[chunk, L_free, L]`` max), an ``I-X`` only ``B-X``/``I-X`` (a gather of 2
    candidates), which halves the work of the dense ``[chunk, L, L]`` max over all labels
    and gives exactly its result, ties included (lowest previous label id wins). With
    ``prune``, previous labels that provably win no next label in any frame of the chunk
    at this step are left out of the dense max (exact too). ``chunk_size`` ``None``:
    chosen from the label count (23 frames for 103 labels, 512 for 16).
    """
    info = bio_labels(tuple(labels))
    n_labels = len(info.labels)
    raw = _checked_scores(log_probs, n_labels)
    n_frames, n_tokens = raw.shape[:2]
    sizes = _lengths(lengths, n_frames, n_tokens)
    trans, first = _viterbi_tables(info.labels, transitions, start)
    paths = np.full((n_frames, n_tokens), -1, dtype=np.int64)
    if n_frames == 0 or n_tokens == 0:
        return paths
    # float64 like the one-frame decoder; only the real positions are checked
    if (sizes == n_tokens).all():
        scores = raw.astype(np.float64, copy=True)
    else:
        real = np.arange(n_tokens)[None, :] < sizes[:, None]
        scores = np.where(real[..., None], raw, 0.0).astype(np.float64, copy=False)
    if np.isnan(scores).any() or np.isposinf(scores).any():
        raise ValueError(Errors.E251.format(what="log_probs", message="contains NaN or +inf"))
    np.maximum(scores, _FLOOR, out=scores)
    # [next, prev] tables: the max over the previous label runs over the contiguous axis
    free_t = np.ascontiguousarray(trans[:, info.free].T)  # [L_free, L]
    inside_t = trans[info.inside_prev, info.inside[:, None]]  # [L_in, k]
    if chunk_size is None:
        # a [chunk, L_free, L] candidate array of about 1 MB: big enough that numpy's
        # per-call overhead is spread over many frames, small enough to stay in cache
        chunk_size = int(np.clip(2**17 // max(1, info.free.size * n_labels), 16, 512))
    order = np.argsort(sizes, kind="stable")  # length-sorted chunks pad less
    for begin in range(0, n_frames, max(1, chunk_size)):
        idx = order[begin : begin + chunk_size]
        idx = idx[sizes[idx] > 0]
        if idx.size == 0:
            continue
        span = int(sizes[idx].max())
        paths[idx, :span] = _viterbi_chunk(
            scores[idx, :span], sizes[idx], first, free_t, inside_t, info, prune
        )
    return paths


def _viterbi_chunk(
    scores: np.ndarray,
    sizes: np.ndarray,
    first: np.ndarray,
    free_t: np.ndarray,
    inside_t: np.ndarray,
    info: BioLabels,
    prune: bool = True,
) -> np.ndarray:
    """Viterbi over ``scores`` ``[F, T, L]`` (every size >= 1, T = max size); returns
    ``[F, T]`` label ids, -1 past each size."""
    n_frames, n_tokens, n_labels = scores.shape
    free, inside, inside_prev = info.free, info.inside, info.inside_prev
    n_free, n_inside = free.size, inside.size
    rows = np.arange(n_frames)
    free_rows = np.arange(n_frames * n_free)
    inside_rows = np.arange(n_frames * n_inside)
    # delta[f, j]: best score of frame f's prefix ending in label j; back[t, f, j]: the
    # previous label on that prefix. Finished frames keep their delta unchanged.
    delta = first[None, :] + scores[:, 0]
    back = np.zeros((n_tokens, n_frames, n_labels), dtype=np.intp)
    cand = np.empty((n_frames, n_free, n_labels), dtype=np.float64)  # reused every step
    best = np.empty((n_frames, n_labels), dtype=np.float64)
    all_active = bool((sizes == n_tokens).all())
    # exact pruning of the dense max: a previous label p can win no next label of frame f
    # when delta[f, p] + (p's best transition) < the score that f's best label so far
    # reaches in every next label; the labels no frame of the chunk needs are skipped
    free_rowmax = free_t.max(axis=0) if prune else None  # [L]
    free_rows_t = np.ascontiguousarray(free_t.T)  # [L, L_free], row = previous
    misses = 0  # the test costs ~8 small numpy calls: stop after 2 steps that skip little
    for t in range(1, n_tokens):
        kept = None
        if free_rowmax is not None and misses < 2:
            top = delta.argmax(axis=1)
            floor = (delta[rows, top][:, None] + free_rows_t[top]).min(axis=1)  # [F]
            needed = ((delta + free_rowmax) >= floor[:, None]).any(axis=0)
            kept = np.flatnonzero(needed)
            if kept.size * 2 > n_labels:  # too few to skip: the dense max is as fast
                kept = None
                misses += 1
            else:
                misses = 0
        if kept is None:
            np.add(delta[:, None, :], free_t[None, :, :], out=cand)  # [F, next, prev]
            arg = cand.argmax(axis=2)
            back[t][:, free] = arg
            best[:, free] = cand.reshape(-1, n_labels)[free_rows, arg.reshape(-1)].reshape(
                n_frames, n_free
            )
        else:
            # the kept labels stay in ascending order: ties still go to the lowest id
            sub = delta[:, kept][:, None, :] + free_t[:, kept][None, :, :]  # [F, next, K]
            arg = sub.argmax(axis=2)
            back[t][:, free] = kept[arg]
            best[:, free] = sub.reshape(-1, kept.size)[free_rows, arg.reshape(-1)].reshape(
                n_frames, n_free
            )
        if n_inside:
            cand_in = delta[:, inside_prev] + inside_t  # [F, L_in, k]
            arg_in = cand_in.argmax(axis=2)
            back[t][:, inside] = np.take_along_axis(
                np.broadcast_to(inside_prev, cand_in.shape), arg_in[..., None], axis=2
            )[..., 0]
            best[:, inside] = cand_in.reshape(-1, inside_prev.shape[1])[
                inside_rows, arg_in.reshape(-1)
            ].reshape(n_frames, n_inside)
        step = best + scores[:, t]
        delta = step if all_active else np.where((t < sizes)[:, None], step, delta)
    path = np.full((n_frames, n_tokens), -1, dtype=np.int64)
    current = delta.argmax(axis=1)
    for t in range(n_tokens - 1, -1, -1):
        real = t < sizes  # frames whose sequence has a position t
        path[real, t] = current[real]
        if t > 0:
            current = np.where(real, back[t, rows, current], current)
    return path


def greedy_paths(log_probs: np.ndarray, lengths: Sequence[int]) -> np.ndarray:
    """Per-token argmax of ``log_probs`` ``[F, T, L]``, ``-1`` past each length (may be
    invalid BIO, like :func:`greedy_decode`)."""
    scores = np.asarray(log_probs)
    if scores.ndim != 3:
        raise ValueError(
            Errors.E251.format(what="log_probs", message=f"expected 3 dims, got {scores.shape}")
        )
    n_frames, n_tokens = scores.shape[:2]
    sizes = _lengths(lengths, n_frames, n_tokens)
    if scores.shape[2] == 0:
        return np.full((n_frames, n_tokens), -1, dtype=np.int64)
    paths = scores.argmax(axis=2).astype(np.int64)
    paths[np.arange(n_tokens)[None, :] >= sizes[:, None]] = -1
    return paths


def greedy_decode(log_probs: np.ndarray) -> List[int]:
    """Per-token argmax of ``log_probs`` (``[T, L]``); may be invalid BIO."""
    scores = np.asarray(log_probs)
    if scores.ndim != 2:
        raise ValueError(
            Errors.E251.format(what="log_probs", message=f"expected 2 dims, got {scores.shape}")
        )
    return [int(i) for i in scores.argmax(axis=1)] if scores.shape[0] else []
