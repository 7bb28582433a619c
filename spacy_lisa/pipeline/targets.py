"""Gold -> the model's :class:`~spacy_lisa.models.types.LisaTargets`: class indices per
token and frame for the windows and frames of one model output (-1: masked)."""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, cast

import numpy as np
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Ops
from thinc.types import Ints1d, Ints2d

from ..alignment import one_to_one
from ..decoding.bio import spans_to_bio
from ..errors import Warnings
from ..frames import predicates_complete
from ..models.types import LisaOutput, LisaTargets
from .batching import ints1d
from .labels import PREDICATE_SUFFIX
from .teacher import soft_targets

if TYPE_CHECKING:
    from .labels import FrameLabelTables
    from .options import SRLOptions
    from .senses import LemmaTrees, SenseDecoder

logger = logging.getLogger("spacy_lisa")


def gold_targets(
    examples: List[Example],
    output: LisaOutput,
    ops: Ops,
    cfg: Dict[str, Any],
    options: SRLOptions,
    tables: FrameLabelTables,
    masked: Optional[Counter] = None,
) -> LisaTargets:
    """Targets of the windows and frames of ``output`` (the model's output on the
    examples' predicted docs) from the examples' gold, by the labels in ``cfg``, the
    component's options and its lemma classes and rolesets per lemma (``tables``).

    Gold that cannot be a target is masked and counted in ``masked`` by reason, never
    dropped silently: ``predicate_not_aligned`` (the gold predicate's first token has no
    one-to-one predicted token), ``frames_on_one_token`` (a second gold frame on a token
    that has one: only the first is learned), ``role_not_aligned`` (a role boundary inside
    a split token: the frame's roles are masked), ``role_not_taggable`` (a role BIO cannot
    hold: overlapping another role or the predicate, or outside the window)."""
    masked = Counter() if masked is None else masked
    reasons_before = set(masked)
    gold = WindowGold.gather(examples, output, cfg, masked)
    frames_idx = ops.to_numpy(output.frames)
    senses, lemmas, pred_pos = frame_targets(frames_idx, gold.frames, cfg, tables.trees)
    sense_allowed = None
    decoder = tables.senses
    if senses is not None and decoder is not None and options.sense_loss == "candidates":
        allowed = sense_candidate_mask(frames_idx, gold.frames, senses, decoder)
        sense_allowed = ops.xp.asarray(allowed)
    role_soft = tag_soft = None
    if options.loss_weights.teacher > 0:  # distillation: a teacher's targets too
        role_soft, tag_soft = soft_targets(examples, output, ops, cfg)
    new = [reason for reason in masked if reason not in reasons_before]
    if new:  # once per reason: the counts keep growing in the component's masked_gold
        logger.warning(Warnings.W004.format(reasons=", ".join(new), counts=dict(masked)))
    return LisaTargets(
        tags=ops.asarray1i(ints1d(gold.tags)),
        heads=ops.asarray2i(cast(Ints2d, gold.heads)),
        deps=ops.asarray2i(cast(Ints2d, gold.deps)),
        roles=ops.asarray2i(cast(Ints2d, gold.roles(frames_idx))),
        senses=None if senses is None else ops.asarray1i(senses),
        sense_allowed=sense_allowed,
        lemmas=None if lemmas is None else ops.asarray1i(lemmas),
        pred_pos=None if pred_pos is None else ops.asarray1i(pred_pos),
        role_soft=role_soft,
        tag_soft=tag_soft,
    )


class WindowGold:
    """The token and role targets of a model output's windows, gathered window by window
    (:meth:`gather`): the joint POS/predicate tag per token, the head offset and
    dependency label per window position, and per frame (``(window, offset)`` of its
    predicate) the gold frame and its BIO role row."""

    def __init__(self, cfg: Dict[str, Any], n_windows: int, max_len: int, masked: Counter):
        labels = cfg["labels"]
        self.role_index = {label: i for i, label in enumerate(labels["roles"])}
        self.tag_index = {label: i for i, label in enumerate(labels["tags"])}
        self.dep_index = {label: i for i, label in enumerate(labels["deps"])}
        self.max_len = max_len
        self.masked = masked
        self.tags: List[int] = []
        self.heads = np.full((n_windows, max_len), -1, dtype="i")
        self.deps = np.full((n_windows, max_len), -1, dtype="i")
        self.frames: Dict[Tuple[int, int], Any] = {}  # (window, offset) -> gold SRLFrame
        self.role_rows: Dict[Tuple[int, int], np.ndarray] = {}

    @classmethod
    def gather(
        cls, examples: List[Example], output: LisaOutput, cfg: Dict[str, Any], masked: Counter
    ) -> WindowGold:
        """The targets of every window of ``output``, from its example's gold."""
        max_len = max((e - s for _, s, e in output.windows), default=0)
        gold = cls(cfg, len(output.windows), max_len, masked)
        aligned = [one_to_one(eg) for eg in examples]
        gold_by_doc: Dict[int, Dict[int, Any]] = {}  # predicted token -> gold frame, per doc
        for s, (doc_i, w_start, w_end) in enumerate(output.windows):
            ref = examples[doc_i].reference
            p2r, r2p = aligned[doc_i]
            if doc_i not in gold_by_doc:  # once per doc, so every masked frame counts once
                gold_by_doc[doc_i] = _gold_predicates(ref._.srl_frames, r2p, masked)
            gold.add_tokens(s, (w_start, w_end), ref, p2r, r2p, gold_by_doc[doc_i])
            for t, frame in gold_by_doc[doc_i].items():
                if w_start <= t < w_end:  # a frame whose predicate lies in this window
                    gold.frames[(s, t - w_start)] = frame
                    gold.role_rows[(s, t - w_start)] = gold.role_row(frame, t, w_start, w_end, r2p)
        return gold

    def add_tokens(
        self,
        s: int,
        window: Tuple[int, int],
        ref: Doc,
        p2r: np.ndarray,
        r2p: np.ndarray,
        gold_preds: Dict[int, Any],
    ) -> None:
        """The tag, head and dependency targets of window ``s``'s predicted tokens."""
        w_start, w_end = window
        has_dep = ref.has_annotation("DEP")
        # a doc that annotates only some predicates (the PropBank frame-file examples)
        # says nothing of which other words are predicates: no POS/predicate target
        complete = predicates_complete(ref)
        for t in range(w_start, w_end):
            j = int(p2r[t])
            if j < 0:
                self.tags.append(-1)
                continue
            token = ref[j]
            if complete:
                label = (token.tag_ or "X") + (PREDICATE_SUFFIX if t in gold_preds else "")
                self.tags.append(self.tag_index.get(label, -1))
            else:
                self.tags.append(-1)
            if has_dep:
                h = int(r2p[token.head.i])
                if w_start <= h < w_end:
                    self.heads[s, t - w_start] = h - w_start
                    self.deps[s, t - w_start] = self.dep_index.get(token.dep_, -1)

    def role_row(self, frame: Any, t: int, w_start: int, w_end: int, r2p: np.ndarray) -> np.ndarray:
        """The BIO role targets of ``frame`` (predicate on predicted token ``t``) over
        the window [w_start, w_end), -1 past it or where its roles cannot be targets."""
        row = np.full(self.max_len, -1, dtype="i")
        spans = []
        for r in frame.roles:
            b, e = int(r2p[r.start]), int(r2p[r.end - 1])
            if b < 0 or e < 0:  # role boundary not aligned: mask this frame
                self.masked["role_not_aligned"] += 1
                return row
            spans.append((b - w_start, e + 1 - w_start, r.label_))
        p_end = int(r2p[frame.predicate.end - 1])
        pred = (t - w_start, (p_end if p_end >= t else t) + 1 - w_start)
        bio, rejected = spans_to_bio(w_end - w_start, spans, predicate=pred)
        untaggable = sum(1 for r in rejected if r[2] != "V")
        if untaggable:
            self.masked["role_not_taggable"] += untaggable
        row[: w_end - w_start] = [self.role_index.get(tag, -1) for tag in bio]
        return row

    def roles(self, frames_idx: np.ndarray) -> np.ndarray:
        """[F, max_len] the role rows of the scored frames (``frames_idx``: window and
        offset of each), -1 for a frame without gold."""
        roles = np.full((len(frames_idx), self.max_len), -1, dtype="i")
        for f, (s, pos) in enumerate(frames_idx):
            row = self.role_rows.get((int(s), int(pos)))
            if row is not None:
                roles[f] = row
        return roles


def _gold_predicates(frames: List[Any], r2p: np.ndarray, masked: Counter) -> Dict[int, Any]:
    """The gold frames by their predicate's predicted token; frames whose predicate has
    no one-to-one token, or whose token already has a frame, are counted in ``masked``."""
    by_token: Dict[int, Any] = {}
    for frame in frames:
        t = int(r2p[frame.predicate.start])
        if t < 0:
            masked["predicate_not_aligned"] += 1
        elif t in by_token:
            masked["frames_on_one_token"] += 1
        else:
            by_token[t] = frame
    return by_token


def sense_candidate_mask(
    frames_idx: np.ndarray,
    gold_frames: Dict[Tuple[int, int], Any],
    senses: Ints1d,
    decoder: SenseDecoder,
) -> np.ndarray:
    """[F, n_senses] bool: for each scored frame with a gold roleset (``senses``, the
    frames' roleset targets), the rolesets of that frame's lemma (the decoder's
    candidates: what decoding chooses among, given the right lemma) and the gold one;
    every roleset for the other frames (they have no sense target)."""
    from .senses import gold_lemma

    allowed = np.ones((len(frames_idx), len(decoder.senses)), dtype=bool)
    for f, (s, p) in enumerate(frames_idx):
        if senses[f] < 0:
            continue
        frame = gold_frames[(int(s), int(p))]
        allowed[f] = False
        allowed[f, decoder.scored.get(gold_lemma(frame), [])] = True
        allowed[f, senses[f]] = True  # were it listed under no lemma
    return allowed


def frame_targets(
    frames_idx: np.ndarray,
    gold_frames: Dict[Tuple[int, int], Any],
    cfg: Dict[str, Any],
    trees: Optional[LemmaTrees],
) -> Tuple[Optional[Ints1d], Optional[Ints1d], Optional[Ints1d]]:
    """Roleset, lemma edit-tree and UPOS class of each scored frame's gold frame
    (-1: no gold frame there, or a class the model does not have)."""
    from .senses import gold_lemma

    sense_index = {s: i for i, s in enumerate(cfg["senses"])}
    pos_index = {p: i for i, p in enumerate(cfg["pred_pos_labels"])}
    senses, lemmas, pos = [], [], []
    for s, p in frames_idx:
        frame = gold_frames.get((int(s), int(p)))
        if frame is None:
            senses.append(-1)
            lemmas.append(-1)
            pos.append(-1)
            continue
        first = frame.predicate[0]
        senses.append(sense_index.get(frame.roleset or "", -1))
        lemmas.append(trees.target(first.text, gold_lemma(frame)) if trees else -1)
        pos.append(pos_index.get(first.pos_, -1))
    return (
        ints1d(senses) if sense_index else None,
        ints1d(lemmas) if trees else None,
        ints1d(pos) if pos_index else None,
    )
