"""A :class:`~.types.LisaBatch` laid out for the torch network: padded windows, masks,
the injected parse as window offsets, the predicates as (window, offset) pairs, all
validated (numpy on the host; the token vectors in ``model.ops`` arrays)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import numpy
from thinc.api import Model
from thinc.types import Floats2d, Floats3d

from ..errors import Errors
from .types import PARSE_MODES, LisaBatch


@dataclass
class PaddedWindows:
    """The input of the LISA torch layer (its ``PyTorchWrapper_v2`` converters): token
    vectors padded to windows, and what to score (:meth:`request`)."""

    windows: List[Tuple[int, int, int]]  # (input array, start, end) per window, S entries
    doc_lengths: List[int]  # rows of each input array (the gradient is split by them)
    mask: Any  # numpy bool [S, T]
    X: Any  # ops array [S, T, nI], padded token vectors

    def request(self, device: Any, is_train: bool) -> Any:
        """What the torch module scores, its tensors on ``device``."""
        raise NotImplementedError


@dataclass
class PreparedBatch(PaddedWindows):
    """A LisaBatch laid out as padded sentence windows (a :class:`~.lisa_torch.SentenceRequest`)."""

    heads: Optional[numpy.ndarray]  # [S, T] parent offsets (-1 none) or None
    given_rows: numpy.ndarray  # [S] bool: windows following the given parse
    own_parse: str  # "soft" | "argmax" for the other windows
    dep_labels: bool  # score dependency labels (else dep_scores are zeros)
    # parent scores needed: not when every window follows the given parse and no labels
    # are scored (the component's prediction on docs with their own parse), where
    # nothing reads the head's own parse; training always scores them (their loss)
    head_scores: bool
    frame_window: Optional[numpy.ndarray]  # [F] or None (predict predicates)
    frame_pos: Optional[numpy.ndarray]  # [F]
    predicate_tags: numpy.ndarray  # [n_tags] bool
    # False: no role scores (the predicate-aware architecture scores them marked)
    score_roles: bool = True

    def request(self, device: Any, is_train: bool) -> Any:
        import torch

        from .lisa_torch import ParseRequest, SentenceRequest

        parse = ParseRequest(
            heads=_long(self.heads, device),
            given_rows=torch.as_tensor(self.given_rows, device=device),
            own_parse=self.own_parse,
            dep_labels=self.dep_labels,
            head_scores=self.head_scores or is_train,
        )
        return SentenceRequest(
            parse=parse,
            frame_window=_long(self.frame_window, device),
            frame_pos=_long(self.frame_pos, device),
            predicate_tags=torch.as_tensor(self.predicate_tags, device=device),
            score_roles=self.score_roles,
        )


@dataclass
class MarkedBatch(PaddedWindows):
    """One padded row per predicate, its window marked at ``frame_pos`` [F], following
    ``heads`` [F, T] (a :class:`~.lisa_torch.MarkedRequest`)."""

    heads: Optional[numpy.ndarray]
    frame_pos: numpy.ndarray

    def request(self, device: Any, is_train: bool) -> Any:
        from .lisa_torch import MarkedRequest

        frame_pos = _long(self.frame_pos, device)
        assert frame_pos is not None
        return MarkedRequest(frame_pos=frame_pos, heads=_long(self.heads, device))


def _long(array: Optional[numpy.ndarray], device: Any) -> Any:
    import torch

    return None if array is None else torch.as_tensor(array, dtype=torch.long, device=device)


def prepare_batch(
    model: Model, batch: LisaBatch, Xs: List[Floats2d], *, parts: bool = False
) -> PreparedBatch:
    """Validate a batch and lay it out as windows (numpy on the CPU, X with model.ops).
    ``parts`` (prediction, :attr:`LisaBatch.parts`): a doc's windows may cover a run
    of it."""
    ops = model.ops
    docs = batch.docs
    if len(Xs) != len(docs):
        raise ValueError(Errors.E157.format(what=f"{len(Xs)} arrays for {len(docs)} docs"))
    if len(batch.windows) != len(docs):
        message = f"{len(batch.windows)} window lists for {len(docs)} docs"
        raise ValueError(Errors.E156.format(doc=0, n_tokens="?", message=message))
    n_in = model.get_dim("nI")
    windows: List[Tuple[int, int, int]] = []
    rows: List[Floats2d] = []  # each doc's token vectors under its windows
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
    n_windows = len(windows)
    length = max((end - start for _, start, end in windows), default=0)
    mask, X_pad = pad_windows(ops, [end - start for _, start, end in windows], rows, n_in)
    mode = batch.parse_mode
    if mode not in PARSE_MODES:
        raise ValueError(
            Errors.E024.format(value=mode, option="parse_mode", choices=", ".join(PARSE_MODES))
        )
    has_parser = model.attrs["lisa_config"]["parse_layer"] > 0
    heads = None
    given = mode == "given" and has_parser
    if given:
        if batch.heads is None:
            raise ValueError(Errors.E154.format(mode=mode))
        heads = _window_heads(batch, windows, length)
    own_parse = "soft" if mode == "soft" else "argmax"
    frame_window, frame_pos = None, None
    if batch.predicates is not None:
        frame_window, frame_pos = _frames(batch, windows)
    return PreparedBatch(
        windows=windows,
        doc_lengths=[len(doc) for doc in docs],
        mask=mask,
        X=X_pad,
        heads=heads,
        given_rows=numpy.full((n_windows,), given, dtype=bool),
        own_parse=own_parse,
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
