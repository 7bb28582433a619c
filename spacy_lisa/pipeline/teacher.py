"""Knowledge distillation: a teacher ``lisa_srl``'s distributions as soft training targets.

A trained teacher (e.g. the transformer ``lisa_trf``) labels the training data once
(:func:`label_with_teacher`, run by ``scripts/teacher_labels.py``): for every gold
predicate, its role distribution over each token of the predicate's window, and for every
token its joint POS/predicate distribution, computed as in training (gold predicates, the
gold parse fed to the layers above the syntactic head). Each distribution is kept as its
``top_k`` labels with their probabilities (renormalised), in the reference doc's
``user_data[TEACHER_KEY]`` (:mod:`spacy_lisa.teacher_data`), so it travels with the doc
through ``DocBin`` and the corpus readers.

A student trained on that data with ``loss_weights.teacher = a`` learns, at every position
with a teacher distribution, ``(1 - a) * CE(gold) + a * CE(teacher)`` (see
``models/loss.py``); :func:`soft_targets` lays the stored distributions out on the
student's windows and frames, mapping labels by name.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Protocol, Sequence, Tuple, cast

import numpy as np
from spacy.training import Example
from thinc.api import Model, Ops
from thinc.types import Floats2d, Floats3d

from ..alignment import one_to_one
from ..errors import Errors
from ..models.types import LisaOutput
from ..teacher_data import TEACHER_KEY
from .batching import Windower, train_batch
from .options import SRLOptions


class Teacher(Protocol):
    """What labelling needs of a trained ``lisa_srl`` (a ``LisaSRL``)."""

    model: Model
    cfg: Dict[str, Any]
    options: SRLOptions


def label_with_teacher(
    teacher: Teacher,
    examples: Sequence[Example],
    *,
    top_k: int = 4,
    temperature: float = 1.0,
) -> int:
    """Store the distributions of ``teacher`` (a trained ``lisa_srl``) on each example's
    reference doc; returns the number of frames labelled. The examples' predicted docs
    must share the reference tokens (gold tokenisation)."""
    model, cfg = teacher.model, teacher.cfg
    batch = train_batch(examples, teacher.options, Windower())
    output = model.predict(batch)
    ops = model.ops
    tag_probs = _top_k(ops.to_numpy(output.tag_scores), top_k, temperature)
    role_probs = _top_k(ops.to_numpy(output.role_scores), top_k, temperature)
    frames = ops.to_numpy(output.frames)
    data: List[Dict[str, Any]] = []
    for eg in examples:
        n = len(eg.reference)
        data.append(
            {
                "roles": list(cfg["labels"]["roles"]),
                "tags": list(cfg["labels"]["tags"]),
                "tag_index": np.zeros((n, tag_probs[0].shape[-1]), dtype="uint16"),
                "tag_prob": np.zeros((n, tag_probs[0].shape[-1]), dtype="float16"),
                "frames": [],
            }
        )
    row = 0
    window_rows = []
    for doc_i, start, end in output.windows:
        p2r = one_to_one(examples[doc_i])[0]
        tokens = np.asarray(p2r[start:end])
        keep = tokens >= 0
        index, prob = tag_probs[0][row : row + end - start], tag_probs[1][row : row + end - start]
        data[doc_i]["tag_index"][tokens[keep]] = index[keep]
        data[doc_i]["tag_prob"][tokens[keep]] = prob[keep]
        window_rows.append((doc_i, start, tokens, keep))
        row += end - start
    for f, (s, pos) in enumerate(frames):
        doc_i, start, tokens, keep = window_rows[int(s)]
        n = len(examples[doc_i].reference)
        index = np.zeros((n, role_probs[0].shape[-1]), dtype="uint16")
        prob = np.zeros((n, role_probs[0].shape[-1]), dtype="float16")
        width = len(tokens)
        index[tokens[keep]] = role_probs[0][f, :width][keep]
        prob[tokens[keep]] = role_probs[1][f, :width][keep]
        if tokens[int(pos)] >= 0:
            data[doc_i]["frames"].append([int(tokens[int(pos)]), index, prob])
    for eg, value in zip(examples, data, strict=True):
        eg.reference.user_data[TEACHER_KEY] = value
    return len(frames)


def _top_k(scores: np.ndarray, k: int, temperature: float) -> Tuple[np.ndarray, np.ndarray]:
    """The k most probable classes of softmax(scores / temperature) over the last axis,
    their probabilities renormalised to sum to 1: (index uint16, prob float16)."""
    logits = scores.astype("float32") / temperature
    logits -= logits.max(axis=-1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=-1, keepdims=True)
    k = min(k, probs.shape[-1])
    index = np.argsort(-probs, axis=-1)[..., :k]
    top = np.take_along_axis(probs, index, axis=-1)
    top /= np.maximum(top.sum(axis=-1, keepdims=True), 1e-12)
    return index.astype("uint16"), top.astype("float16")


def merge_teacher_data(
    datas: Sequence[Dict[str, Any]], weights: Optional[Sequence[float]] = None, *, top_k: int = 4
) -> Dict[str, Any]:
    """Several teachers' data for one doc (:func:`label_with_teacher`'s) as the data of
    their ensemble: per token and per predicate, the weighted mean of the teachers'
    distributions (labels matched by name), cut to its ``top_k`` labels and renormalised.
    A predicate only some teachers labelled gets the mean of those."""
    if not datas:
        raise ValueError(Errors.E033.format(problem="no teacher's data"))
    weights = [1.0] * len(datas) if weights is None else list(weights)
    if len(weights) != len(datas) or min(weights) <= 0:
        raise ValueError(Errors.E033.format(problem="give one positive weight per teacher"))
    n = len(datas[0]["tag_index"])
    if any(len(d["tag_index"]) != n for d in datas):
        raise ValueError(
            Errors.E033.format(problem="the teachers' data cover different numbers of tokens")
        )
    roles = _union([d["roles"] for d in datas])
    tags = _union([d["tags"] for d in datas])
    role_maps, tag_maps = _LabelMaps(roles), _LabelMaps(tags)
    tag_dense = np.zeros((n, len(tags)), dtype="float32")
    for data, weight in zip(datas, weights, strict=True):
        label_map = tag_maps(data["tags"])
        _add_weighted(tag_dense, data["tag_index"], data["tag_prob"], label_map, weight)
    role_dense: Dict[int, np.ndarray] = {}
    for data, weight in zip(datas, weights, strict=True):
        label_map = role_maps(data["roles"])
        for t, index, prob in data["frames"]:
            dense = role_dense.setdefault(int(t), np.zeros((n, len(roles)), dtype="float32"))
            _add_weighted(dense, index, prob, label_map, weight)
    tag_index, tag_prob = _dense_top_k(tag_dense, top_k)
    frames = []
    for t in sorted(role_dense):
        index, prob = _dense_top_k(role_dense[t], top_k)
        frames.append([t, index, prob])
    return {
        "roles": roles,
        "tags": tags,
        "tag_index": tag_index,
        "tag_prob": tag_prob,
        "frames": frames,
    }


def _union(label_lists: Sequence[Sequence[str]]) -> List[str]:
    """The labels of all lists, in order of first appearance."""
    return list(dict.fromkeys(label for labels in label_lists for label in labels))


def _add_weighted(
    out: np.ndarray, index: np.ndarray, prob: np.ndarray, label_map: np.ndarray, weight: float
) -> None:
    """out[i, label_map[index[i, j]]] += weight * prob[i, j]."""
    rows = np.broadcast_to(np.arange(len(index))[:, None], index.shape)
    np.add.at(out, (rows, label_map[index.astype("int64")]), weight * prob.astype("float32"))


def _dense_top_k(dense: np.ndarray, k: int) -> Tuple[np.ndarray, np.ndarray]:
    """The k largest entries of each row (index uint16, renormalised prob float16); rows
    of zeros (tokens no teacher covered) stay zeros."""
    k = min(k, dense.shape[-1])
    index = np.argsort(-dense, axis=-1, kind="stable")[:, :k]
    top = np.take_along_axis(dense, index, axis=-1)
    top /= np.maximum(top.sum(axis=-1, keepdims=True), 1e-12)
    return index.astype("uint16"), top.astype("float16")


class _LabelMaps:
    """Teacher label index -> student label index (-1: the student has no such label),
    per teacher label list, built once per list."""

    def __init__(self, student: Sequence[str]):
        self.student = {label: i for i, label in enumerate(student)}
        self._maps: Dict[Tuple[str, ...], np.ndarray] = {}

    def __call__(self, teacher: Sequence[str]) -> np.ndarray:
        key = tuple(teacher)
        if key not in self._maps:
            self._maps[key] = np.asarray([self.student.get(lb, -1) for lb in key], dtype="i")
        return self._maps[key]


def soft_targets(
    examples: List[Example], output: LisaOutput, ops: Ops, cfg: Dict[str, Any]
) -> Tuple[Optional[Any], Optional[Any]]:
    """The teacher's role distributions [F, T, n_roles] and tag distributions
    [N, n_tags] on the windows and frames of ``output`` (rows of zeros where the data has
    none), or (None, None) if no example carries teacher data."""
    if not any(TEACHER_KEY in eg.reference.user_data for eg in examples):
        return None, None
    n_roles = len(cfg["labels"]["roles"])
    n_tags = len(cfg["labels"]["tags"])
    role_maps, tag_maps = _LabelMaps(cfg["labels"]["roles"]), _LabelMaps(cfg["labels"]["tags"])
    max_len = max((e - s for _, s, e in output.windows), default=0)
    frames = ops.to_numpy(output.frames)
    role_soft = np.zeros((len(frames), max_len, n_roles), dtype="float32")
    tag_soft = np.zeros((int(output.tag_scores.shape[0]), n_tags), dtype="float32")
    aligned: Dict[int, np.ndarray] = {}
    window_tokens = []
    row = 0
    for doc_i, start, end in output.windows:
        eg = examples[doc_i]
        if doc_i not in aligned:
            aligned[doc_i] = np.asarray(one_to_one(eg)[0])
        tokens = aligned[doc_i][start:end]  # reference token of each window position
        data = eg.reference.user_data.get(TEACHER_KEY)
        window_tokens.append((data, tokens))
        if data is not None:
            _scatter(
                tag_soft[row : row + end - start],
                tokens,
                data["tag_index"],
                data["tag_prob"],
                tag_maps(data["tags"]),
            )
        row += end - start
    for f, (s, pos) in enumerate(frames):
        data, tokens = window_tokens[int(s)]
        if data is None or tokens[int(pos)] < 0:
            continue
        predicate = int(tokens[int(pos)])
        for t, index, prob in data["frames"]:
            if t == predicate:
                _scatter(role_soft[f], tokens, index, prob, role_maps(data["roles"]))
                break
    return ops.asarray3f(cast(Floats3d, role_soft)), ops.asarray2f(cast(Floats2d, tag_soft))


def _scatter(
    out: np.ndarray, tokens: np.ndarray, index: np.ndarray, prob: np.ndarray, label_map: np.ndarray
) -> None:
    """out[i, label_map[index[tokens[i]]]] = prob[tokens[i]] for the positions whose
    token is aligned (>= 0), renormalised where a teacher label has no student label."""
    positions = np.nonzero(tokens >= 0)[0]
    if not len(positions):
        return
    labels = label_map[index[tokens[positions]].astype("int64")]  # [m, k]
    values = prob[tokens[positions]].astype("float32")
    values[labels < 0] = 0.0
    rows = np.broadcast_to(positions[:, None], labels.shape)
    np.add.at(out, (rows, np.maximum(labels, 0)), values)  # unmapped labels add 0
    sums = out[positions].sum(axis=-1, keepdims=True)
    out[positions] /= np.maximum(sums, 1e-12)
