"""The counts of an SRL evaluation (:class:`SRLEvaluation`) and the shapes they
count: arguments as ``(type, pieces)`` with ``C-X`` continuations joined to their ``X``,
the scoring conventions and the predicate classes. Shared by the strict scorer
(:mod:`.scorer`), the port of srl-eval.pl (:mod:`.srl_eval_official`) and the raw-text
scorer (:mod:`spacy_lisa.raw_evaluation`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

from spacy.scorer import PRFScore

from ..decoding.bio import VERB

CONTINUATION_PREFIX = "C-"
# the predicate classes of ``srl_pred_per_pos`` (UPOS of the predicate's first token)
PREDICATE_POS = ("VERB", "AUX", "NOUN", "ADJ", "other")
STRICT = "strict"
OFFICIAL = "official"
CONVENTIONS = (STRICT, OFFICIAL)

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
    senses: AccuracyCount = field(default_factory=AccuracyCount)
    senses_baseline: AccuracyCount = field(default_factory=AccuracyCount)
    pred_per_pos: Dict[str, PRFScore] = field(default_factory=lambda: defaultdict(PRFScore))
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
        scores["srl_sense_acc"] = self.senses.value
        scores["srl_pred_per_pos"] = (
            {
                pos: self.pred_per_pos[pos].to_dict()
                for pos in PREDICATE_POS
                if pos in self.pred_per_pos
            }
            if len(self.predicates) > 0
            else None
        )
        if self.senses_baseline.total:
            scores["srl_sense_acc_mfs"] = self.senses_baseline.value
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


def join_continuations(roles: Iterable[Tuple[int, int, str]]) -> List[Argument]:
    """Arguments ``(type, pieces)`` of one frame's roles ``(start, end, label)`` (any
    offsets, e.g. tokens or characters): each ``C-X`` piece joined to the closest ``X``
    before it, an orphan ``C-X`` a plain ``X``, ``V`` left out."""
    pieces: List[List[Piece]] = []
    types: List[str] = []
    last_of_type: Dict[str, int] = {}
    for start, end, label in sorted(roles, key=lambda r: (r[0], r[1])):
        if label.startswith(CONTINUATION_PREFIX) and label[2:] in last_of_type:
            pieces[last_of_type[label[2:]]].append((start, end))
            continue
        if label.startswith(CONTINUATION_PREFIX):  # orphan C-X: a plain X, as srl-eval.pl
            label = label[2:]
        last_of_type[label] = len(types)
        types.append(label)
        pieces.append([(start, end)])
    return [
        (label, tuple(sorted(spans)))
        for label, spans in zip(types, pieces, strict=True)
        if label != VERB
    ]
