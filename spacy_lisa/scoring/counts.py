"""The counts of an SRL evaluation (:class:`SRLEvaluation`) and the shapes they
count: arguments as ``(type, pieces)`` with ``C-X`` continuations joined to their ``X``,
frames paired by their predicate, the scoring conventions and the predicate classes.
Shared by the scorer on tokens (:mod:`.scorer`, :mod:`.strict`), the port of srl-eval.pl
(:mod:`.official`) and the raw-text scorer (:mod:`.raw_text`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import (
    Any,
    Dict,
    Hashable,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Set,
    Tuple,
    TypeVar,
)

from spacy.scorer import PRFScore

from ..decoding.bio import VERB
from ..errors import Errors

CONTINUATION_PREFIX = "C-"
# the predicate classes of ``srl_pred_per_pos`` (UPOS of the predicate's first token)
PREDICATE_POS = ("VERB", "AUX", "NOUN", "ADJ", "other")
STRICT = "strict"
OFFICIAL = "official"
CONVENTIONS = (STRICT, OFFICIAL)

Piece = Tuple[int, int]
# (type, pieces): pieces sorted; a one-piece argument is an ordinary span
Argument = Tuple[str, Tuple[Piece, ...]]


class Frame(Protocol):
    """What the counts read of a frame (token or character offsets alike)."""

    @property
    def roleset(self) -> Optional[str]: ...


Key = TypeVar("Key", bound=Hashable)
F = TypeVar("F", bound=Frame)


def check_convention(convention: str) -> None:
    """Raise ValueError (E024) unless ``convention`` is one of :data:`CONVENTIONS`."""
    if convention not in CONVENTIONS:
        raise ValueError(
            Errors.E024.format(value=convention, option="convention", choices=list(CONVENTIONS))
        )


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

    def count_frames(
        self, gold: Mapping[Key, Sequence[Frame]], pred: Mapping[Key, Sequence[Frame]]
    ) -> None:
        """Count one reference doc's frames, keyed by predicate span: the frames, the
        predicates found (by span) and the rolesets of the predicted frames paired with
        a gold frame that has one."""
        self.n_docs += 1
        self.n_gold_frames += sum(len(v) for v in gold.values())
        self.n_pred_frames += sum(len(v) for v in pred.values())
        self.predicates.score_set(set(pred), set(gold))
        for _, gold_roleset, pred_roleset in sense_pairs(gold, pred):
            self.senses.total += 1
            self.senses.correct += int(pred_roleset == gold_roleset)

    def count_arguments(self, pred: Set[Argument], gold: Set[Argument]) -> None:
        """Count the arguments of one pair of frames, in all and per type."""
        self.args.score_set(pred, gold)
        for label in {a[0] for a in gold} | {a[0] for a in pred}:
            self.per_type[label].score_set(
                {a for a in pred if a[0] == label}, {a for a in gold if a[0] == label}
            )

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


def sense_pairs(
    gold: Mapping[Key, Sequence[Frame]], pred: Mapping[Key, Sequence[Frame]]
) -> Iterator[Tuple[Key, str, Optional[str]]]:
    """``(key, gold roleset, predicted roleset)`` of the frames of one predicate span
    paired in order, where the gold frame has a roleset."""
    for key in set(gold) & set(pred):
        for gold_frame, pred_frame in zip(gold[key], pred[key], strict=False):
            if gold_frame.roleset:
                yield key, gold_frame.roleset, pred_frame.roleset


def pair_frames(
    gold: Mapping[Key, Sequence[F]], pred: Mapping[Key, Sequence[F]], *, skip_spurious: bool
) -> Iterator[Tuple[Optional[F], Optional[F]]]:
    """The frames of each key paired in order, ``None`` where one side has fewer (a
    predicate missed or spurious; duplicates of one predicate, in malformed data, stay
    unpaired). ``skip_spurious``: a predicted frame without gold is left out, as
    srl-eval.pl skips a "predicted prop without its gold reference"."""
    for key in set(gold) | set(pred):
        gold_frames, pred_frames = gold.get(key, ()), pred.get(key, ())
        for i in range(max(len(gold_frames), len(pred_frames))):
            if i >= len(gold_frames) and skip_spurious:
                continue
            yield (
                gold_frames[i] if i < len(gold_frames) else None,
                pred_frames[i] if i < len(pred_frames) else None,
            )
