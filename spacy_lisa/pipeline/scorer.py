"""The SRL scorer: CoNLL-2005 argument P/R/F, predicate detection, and the accuracy of
the parse and POS tags the ``lisa_srl`` component used.

Conventions (those of the official ``srl-eval.pl`` of CoNLL-2005):

- An argument is right only if its label and its exact span match a gold argument of
  the same predicate. Partial overlaps get no credit.
- The predicate's own ``V`` span is not scored (frames keep it apart from the roles; a
  stray ``V`` role is ignored too).
- A ``C-X`` continuation joins the closest preceding ``X`` argument of its frame into one
  discontinuous argument of type ``X``: the argument is the set of its pieces, counted
  once, right only if every piece is right. A ``C-X`` with no ``X`` before it becomes a
  plain ``X`` argument (as ``srl-eval.pl`` does).
- ``R-X`` (reference) arguments are labels of their own.
- Frames are paired by predicate token span. A gold frame with no predicted frame counts
  all its arguments as missed. A predicted frame with no gold frame counts all its
  arguments as false positives (``count_spurious_predicates=True``, the default, the
  usual end-to-end convention); note that the stock ``srl-eval.pl`` instead skips such
  props with a warning: pass ``count_spurious_predicates=False`` to reproduce it.

Offsets are compared in *reference-token* offsets: predicted spans are mapped through
``example.alignment``; a predicted span whose boundaries fall inside a reference token
cannot equal any gold span and counts as a false positive (never silently dropped).

Parse accuracy (``srl_uas``/``srl_las``) compares ``predicted._.srl_parse`` with the
reference heads and labels over the tokens that align one-to-one (others are skipped),
punctuation included (unlike the PTB convention that excludes it); labels compare
case-insensitively (spaCy's ``ROOT`` equals UD's ``root``). ``srl_pos_acc`` compares
``predicted._.srl_pos`` with the reference ``tag_``. Reference docs with no SRL annotation
(``doc._.srl_frame_data is None``) are skipped for the SRL scores; parse and POS are scored
wherever the reference has them. As in spaCy's scorers, a score is ``None`` when there
was nothing to score (no gold and no prediction), else a float in [0, 1].
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np
import spacy
from spacy.scorer import PRFScore
from spacy.training import Example

from ..bio import VERB
from ..errors import Errors
from ..frames import SRLFrame, has_srl_annotation

CONTINUATION_PREFIX = "C-"

Piece = Tuple[int, int]
# (type, pieces): pieces sorted; a one-piece argument is an ordinary span
Argument = Tuple[str, Tuple[Piece, ...]]


@dataclass
class AccuracyCount:
    """Correct / total counter for token-level accuracies."""

    correct: int = 0
    total: int = 0

    @property
    def value(self) -> Optional[float]:
        return self.correct / self.total if self.total else None


@dataclass
class SRLEvaluation:
    """Raw counts behind :func:`score_srl` (the CLI prints them per label)."""

    args: PRFScore = field(default_factory=PRFScore)
    per_type: Dict[str, PRFScore] = field(default_factory=lambda: defaultdict(PRFScore))
    predicates: PRFScore = field(default_factory=PRFScore)
    uas: AccuracyCount = field(default_factory=AccuracyCount)
    las: AccuracyCount = field(default_factory=AccuracyCount)
    pos: AccuracyCount = field(default_factory=AccuracyCount)
    n_docs: int = 0  # reference docs with SRL annotation
    n_gold_frames: int = 0
    n_pred_frames: int = 0

    def to_scores(self) -> Dict[str, Any]:
        """The scores dict (spaCy's convention: ``None`` where nothing was scored)."""
        scores: Dict[str, Any] = {}
        for prefix, prf in (("srl", self.args), ("srl_pred", self.predicates)):
            has = len(prf) > 0
            scores[f"{prefix}_p"] = prf.precision if has else None
            scores[f"{prefix}_r"] = prf.recall if has else None
            scores[f"{prefix}_f"] = prf.fscore if has else None
        scores["srl_per_type"] = (
            {label: prf.to_dict() for label, prf in sorted(self.per_type.items())}
            if len(self.args) > 0
            else None
        )
        scores["srl_uas"] = self.uas.value
        scores["srl_las"] = self.las.value
        scores["srl_pos_acc"] = self.pos.value
        return scores

    def per_type_counts(self) -> Dict[str, Dict[str, int]]:
        """``{label: {"correct", "excess", "missed", "gold", "pred"}}``, like srl-eval.pl."""
        return {
            label: {
                "correct": prf.tp,
                "excess": prf.fp,
                "missed": prf.fn,
                "gold": prf.tp + prf.fn,
                "pred": prf.tp + prf.fp,
            }
            for label, prf in sorted(self.per_type.items())
        }


class _TokenMap:
    """Predicted-token -> reference-token offsets of one example."""

    def __init__(self, example: Example) -> None:
        pred, ref = example.predicted, example.reference
        self.identity = len(pred) == len(ref) and all(
            p.text == r.text for p, r in zip(pred, ref, strict=True)
        )
        if not self.identity:
            align = example.alignment
            self.x2y, self.y2x = align.x2y, align.y2x

    def token(self, i: int) -> Optional[int]:
        """The reference token of predicted token ``i`` if they align one-to-one."""
        if self.identity:
            return i
        if self.x2y.lengths[i] != 1:
            return None
        j = int(self.x2y.data[self.x2y.starts[i]])
        return j if self.y2x.lengths[j] == 1 else None

    def span(self, start: int, end: int) -> Optional[Piece]:
        """Reference offsets of predicted span ``[start, end)``, or ``None`` when its
        boundaries do not fall on reference token boundaries."""
        if self.identity:
            return (start, end)
        ys = self.x2y.data[self.x2y.starts[start] : self.x2y.ends[end - 1]]
        if len(ys) == 0:
            return None
        first, last = int(ys.min()), int(ys.max()) + 1
        if len(np.unique(ys)) != last - first:  # not contiguous
            return None
        # every reference token covered must lie wholly inside the predicted span
        xs = self.y2x.data[self.y2x.starts[first] : self.y2x.ends[last - 1]]
        if len(xs) == 0 or int(xs.min()) < start or int(xs.max()) >= end:
            return None
        return (first, last)


def _frame_arguments(frame: SRLFrame, to_ref: Optional[_TokenMap]) -> List[Argument]:
    """The frame's arguments with ``C-X`` pieces joined to their ``X`` (V excluded).
    ``to_ref`` maps predicted offsets to reference offsets (``None`` for gold)."""
    pieces: List[List[Tuple[int, int]]] = []
    types: List[str] = []
    last_of_type: Dict[str, int] = {}
    for role in sorted(frame.roles, key=lambda r: (r.start, r.end)):
        label = role.label_
        if label.startswith(CONTINUATION_PREFIX) and label[2:] in last_of_type:
            pieces[last_of_type[label[2:]]].append((role.start, role.end))
            continue
        if label.startswith(CONTINUATION_PREFIX):  # orphan C-X: a plain X, as srl-eval.pl
            label = label[2:]
        last_of_type[label] = len(types)
        types.append(label)
        pieces.append([(role.start, role.end)])
    args: List[Argument] = []
    for label, spans in zip(types, pieces, strict=True):
        if label == VERB:
            continue
        if to_ref is not None:
            mapped = []
            for start, end in spans:
                ref_span = to_ref.span(start, end)
                # negative offsets never equal a gold piece, yet stay distinct per span
                mapped.append(ref_span if ref_span is not None else (-1 - start, -1 - end))
            spans = mapped
        args.append((label, tuple(sorted(spans))))
    return args


def _frames_by_predicate(
    frames: List[SRLFrame], to_ref: Optional[_TokenMap]
) -> Dict[Piece, List[SRLFrame]]:
    """Frames keyed by predicate span (reference offsets); a predicate that does not map
    gets a negative key, so it pairs with no gold frame."""
    out: Dict[Piece, List[SRLFrame]] = defaultdict(list)
    for frame in frames:
        start, end = frame.predicate.start, frame.predicate.end
        key: Optional[Piece] = (start, end) if to_ref is None else to_ref.span(start, end)
        out[key if key is not None else (-1 - start, -1 - end)].append(frame)
    return out


def _score_frames(
    example: Example,
    token_map: _TokenMap,
    result: SRLEvaluation,
    count_spurious_predicates: bool,
) -> None:
    gold = _frames_by_predicate(example.reference._.srl_frames, None)
    pred = _frames_by_predicate(example.predicted._.srl_frames, token_map)
    result.n_docs += 1
    result.n_gold_frames += sum(len(v) for v in gold.values())
    result.n_pred_frames += sum(len(v) for v in pred.values())
    result.predicates.score_set(set(pred), set(gold))
    for key in sorted(set(gold) | set(pred)):
        gold_frames, pred_frames = gold.get(key, []), pred.get(key, [])
        # pair in order; duplicates of one predicate (malformed data) stay unpaired
        for i in range(max(len(gold_frames), len(pred_frames))):
            gold_args = (
                set(_frame_arguments(gold_frames[i], None)) if i < len(gold_frames) else set()
            )
            if i < len(pred_frames):
                if i >= len(gold_frames) and not count_spurious_predicates:
                    continue  # srl-eval.pl: "found predicted prop without its gold reference"
                pred_args = set(_frame_arguments(pred_frames[i], token_map))
            else:
                pred_args = set()
            result.args.score_set(pred_args, gold_args)
            for label in {a[0] for a in gold_args} | {a[0] for a in pred_args}:
                result.per_type[label].score_set(
                    {a for a in pred_args if a[0] == label},
                    {a for a in gold_args if a[0] == label},
                )


def _score_parse(example: Example, token_map: _TokenMap, result: SRLEvaluation) -> None:
    pred, ref = example.predicted, example.reference
    parse = pred._.srl_parse
    if parse is None or not ref.has_annotation("DEP"):
        return
    heads, deps = list(parse.get("heads") or ()), list(parse.get("deps") or ())
    if len(heads) != len(pred) or len(deps) != len(pred):
        raise ValueError(
            Errors.E252.format(
                doc=pred.text[:40], n_heads=len(heads), n_deps=len(deps), n_tokens=len(pred)
            )
        )
    for token in pred:
        if token.orth_.isspace():  # as spaCy's score_deps: whitespace is not a word
            continue
        gold_i = token_map.token(token.i)
        if gold_i is None:
            continue
        gold_token = ref[gold_i]
        if not gold_token.dep_:  # missing gold annotation
            continue
        head = int(heads[token.i])
        gold_head = token_map.token(head) if 0 <= head < len(pred) else None
        result.uas.total += 1
        result.las.total += 1
        if gold_head is not None and gold_head == gold_token.head.i:
            result.uas.correct += 1
            if str(deps[token.i]).lower() == gold_token.dep_.lower():
                result.las.correct += 1


def _score_pos(
    example: Example, token_map: _TokenMap, result: SRLEvaluation, pos_attr: str
) -> None:
    pred, ref = example.predicted, example.reference
    tags = pred._.srl_pos
    if tags is None:
        return
    for token in pred:
        gold_i = token_map.token(token.i)
        if gold_i is None or token.i >= len(tags):
            continue
        gold_tag = getattr(ref[gold_i], pos_attr)
        if not gold_tag:  # missing gold annotation
            continue
        result.pos.total += 1
        result.pos.correct += int(tags[token.i] == gold_tag)


def evaluate_srl(
    examples: Iterable[Example],
    *,
    count_spurious_predicates: bool = True,
    pos_attr: str = "tag_",
) -> SRLEvaluation:
    """Count SRL, predicate, parse and POS agreement over ``examples`` (see module doc)."""
    result = SRLEvaluation()
    for example in examples:
        token_map = _TokenMap(example)
        if has_srl_annotation(example.reference):
            _score_frames(example, token_map, result, count_spurious_predicates)
        _score_parse(example, token_map, result)
        _score_pos(example, token_map, result, pos_attr)
    return result


def score_srl(
    examples: Iterable[Example],
    *,
    count_spurious_predicates: bool = True,
    pos_attr: str = "tag_",
    **kwargs: Any,
) -> Dict[str, Any]:
    """Score ``examples``: ``srl_p/r/f``, ``srl_per_type``, ``srl_pred_p/r/f``,
    ``srl_uas``, ``srl_las``, ``srl_pos_acc`` (CoNLL-2005 conventions, see module doc).
    Other keyword arguments (spaCy's scorer config, e.g. ``nlp``) are ignored."""
    return evaluate_srl(
        examples, count_spurious_predicates=count_spurious_predicates, pos_attr=pos_attr
    ).to_scores()


@spacy.registry.scorers("spacy-lisa.srl_scorer.v1")
def make_srl_scorer() -> Callable[..., Dict[str, Any]]:
    """The scorer of the ``lisa_srl`` component (``score_srl``)."""
    return score_srl
