"""A :class:`~.types.LisaBatch` laid out for the torch network (:class:`PaddedBatch`):
padded windows, masks, and what to score (:class:`ScoreRequest`: the injected parse as
window offsets, the predicates as (window, offset) pairs), all validated (numpy on the
host; the token vectors in ``model.ops`` arrays)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace
from typing import Any, List, Optional, Tuple

import numpy
from thinc.api import Model
from thinc.types import Floats2d, Floats3d

from ..errors import Errors
from .types import PARSE_MODES, LisaBatch


@dataclass
class ScoreRequest:
    """What the torch module scores on a batch of B padded windows of T tokens, and the
    parse its syntactic head gives the layers above it (see
    :meth:`~.biaffine.SyntacticHead.forward`). Its arrays are numpy on the host, as
    :func:`prepare_batch` makes them, and torch tensors on the module's device once
    :meth:`on` has moved them.

    heads [B, T] long: the injected parse as parent offsets in the window (-1 = unknown,
    a self-loop), or None; given_rows [B] bool: the windows that follow ``heads`` (None:
    none), the others follow the model's own parse, ``own_parse`` "soft" or "argmax".
    dep_labels False: no dependency-label scores (zeros); head_scores False too, with
    every window given: no parent scores either (nothing reads the head's own parse, as
    at prediction on docs with their own parse; training always scores them, their
    loss). frame_window / frame_pos [F] long: the predicates to score (None: predicted,
    argmax tag in ``predicate_tags`` [n_tags] bool). score_roles False: no role scorer
    (role_scores [0, T, n_roles]), for the predicate-aware architecture's sentence pass.

    ``marked``: the predicate-aware architecture's second pass instead: row b is the
    window of one predicate at offset ``frame_pos[b]`` [B], marked there, following
    ``heads`` (the parse the sentence pass used); only its role scores are computed."""

    heads: Any = None
    given_rows: Any = None
    own_parse: str = "argmax"
    dep_labels: bool = True
    head_scores: bool = True
    frame_window: Any = None
    frame_pos: Any = None
    predicate_tags: Any = None
    score_roles: bool = True
    marked: bool = False

    def on(self, device: Any, is_train: bool) -> ScoreRequest:
        """The request with its arrays as tensors on ``device``."""
        import torch

        def tensor(array: Optional[numpy.ndarray], dtype: Any = None) -> Any:
            return None if array is None else torch.as_tensor(array, dtype=dtype, device=device)

        return replace(
            self,
            heads=tensor(self.heads, torch.long),
            given_rows=tensor(self.given_rows),
            head_scores=self.head_scores or is_train,
            frame_window=tensor(self.frame_window, torch.long),
            frame_pos=tensor(self.frame_pos, torch.long),
            predicate_tags=tensor(self.predicate_tags),
        )


@dataclass
class PaddedBatch:
    """The input of the LISA torch layer (its ``PyTorchWrapper_v2`` converters): token
    vectors padded to windows, and what to score on them."""

    windows: List[Tuple[int, int, int]]  # (input array, start, end) per window, S entries
    doc_lengths: List[int]  # rows of each input array (the gradient is split by them)
    mask: numpy.ndarray  # [S, T] bool
    X: Floats3d  # [S, T, nI] padded token vectors (model.ops)
    request: ScoreRequest


def prepare_batch(
    model: Model, batch: LisaBatch, Xs: List[Floats2d], *, parts: bool = False
) -> PaddedBatch:
    """Validate a batch and lay it out as windows (numpy on the CPU, X with model.ops).
    ``parts`` (prediction, :attr:`LisaBatch.parts`): a doc's windows may cover a run
    of it."""
    windows, rows = _window_rows(model, batch, Xs, parts)
    lengths = [end - start for _, start, end in windows]
    mask, X_pad = pad_windows(model.ops, lengths, rows, model.get_dim("nI"))
    return PaddedBatch(
        windows=windows,
        doc_lengths=[len(doc) for doc in batch.docs],
        mask=mask,
        X=X_pad,
        request=_score_request(model, batch, windows, mask.shape[1]),
    )


def _window_rows(
    model: Model, batch: LisaBatch, Xs: List[Floats2d], parts: bool
) -> Tuple[List[Tuple[int, int, int]], List[Floats2d]]:
    """The batch's windows as (doc, start, end), and each doc's token vectors under its
    windows, checked against the docs and the model's width."""
    docs = batch.docs
    if len(Xs) != len(docs):
        raise ValueError(Errors.E157.format(what=f"{len(Xs)} arrays for {len(docs)} docs"))
    if len(batch.windows) != len(docs):
        message = f"{len(batch.windows)} window lists for {len(docs)} docs"
        raise ValueError(Errors.E156.format(doc=0, n_tokens="?", message=message))
    n_in = model.get_dim("nI")
    windows: List[Tuple[int, int, int]] = []
    rows: List[Floats2d] = []
    for i, (doc, doc_windows, X) in enumerate(zip(docs, batch.windows, Xs, strict=True)):
        if X.shape[0] != len(doc) or (len(doc) and X.shape[1] != n_in):
            raise ValueError(
                Errors.E157.format(
                    what=f"an array of shape {X.shape} for doc {i} of {len(doc)} tokens, "
                    f"model width nI={n_in}"
                )
            )
        start, end = _window_run(i, len(doc), doc_windows, parts)
        windows.extend((i, int(s), int(e)) for s, e in doc_windows)
        rows.append(X[start:end])
    return windows, rows


def _score_request(
    model: Model, batch: LisaBatch, windows: List[Tuple[int, int, int]], length: int
) -> ScoreRequest:
    """What to score on the batch's windows: the parse mode, the injected parse as
    window offsets, the given predicates as (window, offset)."""
    mode = batch.parse_mode
    if mode not in PARSE_MODES:
        raise ValueError(
            Errors.E024.format(value=mode, option="parse_mode", choices=", ".join(PARSE_MODES))
        )
    given = mode == "given" and model.attrs["lisa_config"]["parse_layer"] > 0
    heads = None
    if given:
        if batch.heads is None:
            raise ValueError(Errors.E154.format(mode=mode))
        heads = _window_heads(batch, windows, length)
    frame_window, frame_pos = None, None
    if batch.predicates is not None:
        frame_window, frame_pos = _frames(batch, windows)
    return ScoreRequest(
        heads=heads,
        given_rows=numpy.full((len(windows),), given, dtype=bool),
        own_parse="soft" if mode == "soft" else "argmax",
        dep_labels=batch.dep_labels,
        head_scores=batch.dep_labels or mode != "given",
        frame_window=frame_window,
        frame_pos=frame_pos,
        predicate_tags=predicate_tag_mask(model),
    )


def _window_run(
    doc_i: int, n_tokens: int, windows: List[Tuple[int, int]], parts: bool
) -> Tuple[int, int]:
    """``[start, end)`` of the tokens ``windows`` cover, in order without gaps: the
    whole doc, or with ``parts`` a run of it (a non-empty doc has at least one window)."""
    first = windows[0][0] if windows and parts else 0
    position = first
    for start, end in windows:
        if start != position or not start < end <= n_tokens:
            message = f"window ({start}, {end}) after {position}"
            raise ValueError(Errors.E156.format(doc=doc_i, n_tokens=n_tokens, message=message))
        position = end
    if position != n_tokens and not (parts and windows):
        message = f"windows end at {position}"
        raise ValueError(Errors.E156.format(doc=doc_i, n_tokens=n_tokens, message=message))
    return first, position


def pad_windows(
    ops: Any, lengths: List[int], Xs: List[Floats2d], n_in: int
) -> Tuple[numpy.ndarray, Floats3d]:
    """Windows of ``lengths`` tokens whose rows, concatenated in window order, are the
    rows of ``Xs`` concatenated -> (mask [S, T] numpy bool, X [S, T, n_in] padded ops
    array)."""
    length = max(lengths, default=0)
    mask = numpy.zeros((len(lengths), length), dtype=bool)
    for s, n in enumerate(lengths):
        mask[s, :n] = True
    X_pad = ops.alloc3f(len(lengths), length, n_in)
    if lengths:
        # the real rows of X_pad in row-major order are exactly the arrays' rows
        X_pad[ops.xp.asarray(mask)] = ops.xp.concatenate([X for X in Xs if X.shape[0]], axis=0)
    return mask, X_pad


def _window_heads(
    batch: LisaBatch, windows: List[Tuple[int, int, int]], length: int
) -> numpy.ndarray:
    """Absolute heads per doc -> parent offsets per window [S, T]; unknown (-1) and
    heads outside the window become self-loops (root), padding -1."""
    assert batch.heads is not None
    heads = numpy.full((len(windows), length), -1, dtype="int64")
    doc_heads = [host_ints(h) for h in batch.heads]
    if len(doc_heads) != len(batch.docs):
        raise ValueError(
            Errors.E156.format(doc=0, n_tokens="?", message=f"{len(doc_heads)} head arrays")
        )
    for s, (i, start, end) in enumerate(windows):
        if doc_heads[i].shape[0] != len(batch.docs[i]):
            raise ValueError(
                Errors.E156.format(
                    doc=i, n_tokens=len(batch.docs[i]), message=f"{doc_heads[i].shape[0]} heads"
                )
            )
        absolute = doc_heads[i][start:end]
        own = numpy.arange(end - start)
        inside = (absolute >= start) & (absolute < end)
        heads[s, : end - start] = numpy.where(inside, absolute - start, own)
    return heads


def _frames(
    batch: LisaBatch, windows: List[Tuple[int, int, int]]
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Given predicates (token indices per doc) -> (window, offset) per frame, in window
    then token order (each doc's predicates sorted, duplicates dropped); each within
    the doc's windows."""
    assert batch.predicates is not None
    by_doc: List[List[Tuple[int, int, int]]] = [[] for _ in batch.docs]
    for s, (i, start, end) in enumerate(windows):
        by_doc[i].append((start, s, end))
    frame_window: List[int] = []
    frame_pos: List[int] = []
    for i, predicates in enumerate(batch.predicates):
        n_tokens = len(batch.docs[i])
        starts = [start for start, _, _ in by_doc[i]]
        first, end = (starts[0], by_doc[i][-1][2]) if starts else (0, 0)
        for p in numpy.unique(host_ints(predicates)):
            if not first <= p < end:
                raise ValueError(
                    Errors.E156.format(doc=i, n_tokens=n_tokens, message=f"predicate {p}")
                )
            k = bisect.bisect_right(starts, int(p)) - 1
            start, s, _ = by_doc[i][k]
            frame_window.append(s)
            frame_pos.append(int(p) - start)
    return numpy.asarray(frame_window, dtype="int64"), numpy.asarray(frame_pos, dtype="int64")


def host_ints(values: Any) -> numpy.ndarray:
    """Index array on the CPU from numpy, cupy (``.get()``) or a plain list: [n] int64."""
    if hasattr(values, "get") and not isinstance(values, dict):
        values = values.get()
    return numpy.asarray(values, dtype="int64").reshape(-1)


def predicate_tag_mask(model: Model) -> numpy.ndarray:
    n_tags = model.get_dim("n_tags")
    tags = [int(t) for t in model.attrs.get("predicate_tags") or []]
    bad = [t for t in tags if not 0 <= t < n_tags]
    if bad:
        raise ValueError(Errors.E159.format(value=bad, n_tags=n_tags))
    mask = numpy.zeros((n_tags,), dtype=bool)
    mask[tags] = True
    return mask
