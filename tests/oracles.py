"""Reference implementations the tests check the library against: plain, slow and
written for reading, each the way the library's faster code used to do it or the way
the paper defines it. Prediction and training use none of them, so they live here and
not in ``spacy_lisa``. Importable from every test module (tests/ is on sys.path through
its conftest)."""

from __future__ import annotations

import math
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import torch
from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_lisa.corpus.docbin import group_records, records_to_doc
from spacy_lisa.corpus.records import SentenceRecord
from spacy_lisa.decoding.bio import OUTSIDE, LabelledSpan
from spacy_lisa.models.types import MASK_VALUE

# --- BIO tags ----------------------------------------------------------------------------


def bio_to_spans(tags: Sequence[str]) -> List[LabelledSpan]:
    """Labelled spans read back from BIO tags (``V`` spans included), leniently as
    conlleval reads them: an ``I-X`` that does not continue an ``X`` span starts one."""
    spans: List[LabelledSpan] = []
    start, label = -1, ""
    for i, tag in enumerate(list(tags) + [OUTSIDE]):
        prefix, _, tag_label = tag.partition("-")
        continues = prefix == "I" and label == tag_label and start >= 0
        if start >= 0 and not continues:
            spans.append((start, i, label))
            start, label = -1, ""
        if prefix in ("B", "I") and not continues:
            start, label = i, tag_label
    return spans


def is_valid_transition(prev_tag: str, tag: str) -> bool:
    """Hard BIO constraint: ``I-X`` only after ``B-X`` or ``I-X``."""
    if not tag.startswith("I-"):
        return True
    return prev_tag in (f"B-{tag[2:]}", tag)


def is_valid_start(tag: str) -> bool:
    """Hard BIO constraint: a sequence never starts with ``I-``."""
    return not tag.startswith("I-")


def is_valid_bio(tags: Sequence[str]) -> bool:
    """Whether the whole sequence keeps both constraints."""
    if not tags:
        return True
    if not is_valid_start(tags[0]):
        return False
    return all(is_valid_transition(a, b) for a, b in zip(tags, tags[1:], strict=False))


# --- Viterbi -----------------------------------------------------------------------------


def dense_viterbi(
    scores: np.ndarray, lengths: Sequence[int], labels: Sequence[str], trans=None, start=None
) -> List[List[int]]:
    """The best valid BIO path of each frame, one frame at a time, as a dense max over
    every previous label (ties: the lowest label id), the constraints from
    :func:`is_valid_transition` / :func:`is_valid_start`; scores floored at -1e30 and
    added in float64 in the library's order, so the paths are the library's exactly."""
    allowed = [[is_valid_transition(p, t) for t in labels] for p in labels]
    trans_mask = np.where(np.asarray(allowed), 0.0, -np.inf)
    start_mask = np.array([0.0 if is_valid_start(t) else -np.inf for t in labels])
    full = trans_mask + (0.0 if trans is None else np.maximum(np.asarray(trans, "d"), -1e30))
    first = start_mask + (0.0 if start is None else np.maximum(np.asarray(start, "d"), -1e30))
    paths = []
    for f, n in enumerate(lengths):
        unary = np.maximum(np.asarray(scores[f, :n], dtype=np.float64), -1e30)
        if n == 0:
            paths.append([])
            continue
        delta = first + unary[0]
        back = []
        for t in range(1, n):
            cand = delta[None, :] + full.T  # [next, prev]
            back.append(cand.argmax(axis=1))
            delta = cand.max(axis=1) + unary[t]
        path = [int(delta.argmax())]
        for pointers in reversed(back):
            path.append(int(pointers[path[-1]]))
        paths.append(path[::-1])
    return paths


def dense_viterbi_paths(
    scores: np.ndarray, lengths: Sequence[int], labels: Sequence[str], trans=None, start=None
) -> np.ndarray:
    """:func:`dense_viterbi` as ``viterbi_paths`` returns paths: ``[F, T]``, -1 past
    each frame's length."""
    scores = np.asarray(scores)
    paths = np.full(scores.shape[:2], -1, dtype=np.int64)
    for f, path in enumerate(dense_viterbi(scores, lengths, labels, trans, start)):
        paths[f, : len(path)] = path
    return paths


# --- attention ---------------------------------------------------------------------------


def attention_probs(layer, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The attention distributions of all heads of a ``MultiHeadSelfAttention``,
    [B, H, T, T] (no dropout), materialised as the paper writes them (the layer's
    forward pass never does)."""
    B, T, _ = x.shape
    qkv = layer.qkv(x).view(B, T, 3, layer.n_heads, layer.head_width).permute(2, 0, 3, 1, 4)
    scores = torch.matmul(qkv[0], qkv[1].transpose(-1, -2)) / math.sqrt(layer.head_width)
    scores = scores.masked_fill(~mask.to(torch.bool)[:, None, None, :], MASK_VALUE)
    return torch.softmax(scores, dim=-1)


def head_slice(layer, head: int) -> slice:
    """The slice of a ``LabelAttentionLayer``'s output vector that head ``head`` alone
    produced (when the width divides into the heads)."""
    assert layer.attributable, "a linear map mixes the heads' slices"
    return slice(head * layer.slice_width, (head + 1) * layer.slice_width)


# --- corpora -----------------------------------------------------------------------------


def records_to_docs(
    records: Iterable[SentenceRecord], vocab: Optional[Vocab] = None, *, n_sents: int = 1
) -> Iterator[Doc]:
    """Docs of ``n_sents`` sentences at most (one per sentence by default), as
    ``convert_to_docbin`` groups them, without the file."""
    vocab = vocab if vocab is not None else Vocab()
    for group in group_records(records, n_sents=n_sents):
        yield records_to_doc(vocab, group)


__all__: Tuple[str, ...] = (
    "attention_probs",
    "bio_to_spans",
    "dense_viterbi",
    "dense_viterbi_paths",
    "head_slice",
    "is_valid_bio",
    "is_valid_start",
    "is_valid_transition",
    "records_to_docs",
)


def is_tree(heads: Sequence[int]) -> bool:
    """One root (head == itself) and every token reaches it without a cycle (heads are
    offsets, the root pointing to itself)."""
    n = len(heads)
    roots = [i for i, h in enumerate(heads) if h == i]
    if len(roots) != 1 or not all(0 <= h < n for h in heads):
        return False
    for i in range(n):
        seen, node = set(), i
        while heads[node] != node:
            if node in seen:
                return False
            seen.add(node)
            node = heads[node]
    return True
