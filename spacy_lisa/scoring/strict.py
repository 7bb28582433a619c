"""Frames paired by predicate span, in reference-token offsets: predicate P/R/F by the
gold UPOS of the predicate's first token, roleset accuracy (and the lemma
most-frequent-sense baseline), and the argument counts of the ``strict`` convention
(see :mod:`.scorer` for the conventions)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Mapping, Optional, Set

from spacy.tokens import Doc
from spacy.training import Example

from ..alignment import TokenMap
from ..frames import SRLFrame
from .counts import (
    PREDICATE_POS,
    Argument,
    Piece,
    SRLEvaluation,
    join_continuations,
    pair_frames,
    sense_pairs,
)

FramesBySpan = Dict[Piece, List[SRLFrame]]


def frames_by_predicate(frames: List[SRLFrame], to_ref: Optional[TokenMap]) -> FramesBySpan:
    """Frames keyed by predicate span (reference offsets; ``to_ref`` maps predicted
    offsets to them, ``None`` for gold); a predicate that does not map gets a negative
    key, so it pairs with no gold frame."""
    out: FramesBySpan = defaultdict(list)
    for frame in frames:
        start, end = frame.predicate.start, frame.predicate.end
        key: Optional[Piece] = (start, end) if to_ref is None else to_ref.span(start, end)
        out[key if key is not None else (-1 - start, -1 - end)].append(frame)
    return out


def _frame_arguments(frame: Optional[SRLFrame], to_ref: Optional[TokenMap]) -> Set[Argument]:
    """The frame's arguments with ``C-X`` pieces joined to their ``X`` (V excluded; none
    without a frame). ``to_ref`` maps predicted offsets to reference offsets (``None``
    for gold)."""
    if frame is None:
        return set()
    args = join_continuations((r.start, r.end, r.label_) for r in frame.roles)
    if to_ref is None:
        return set(args)
    mapped_args: Set[Argument] = set()
    for label, spans in args:
        mapped = []
        for start, end in spans:
            ref_span = to_ref.span(start, end)
            # negative offsets never equal a gold piece, yet stay distinct per span
            mapped.append(ref_span if ref_span is not None else (-1 - start, -1 - end))
        mapped_args.add((label, tuple(sorted(mapped))))
    return mapped_args


def score_arguments_strict(
    token_map: TokenMap,
    gold: FramesBySpan,
    pred: FramesBySpan,
    result: SRLEvaluation,
    count_spurious_predicates: bool,
) -> None:
    """The arguments of frames paired by predicate span: a gold frame without its
    predicted one counts its arguments as missed, a predicted one without gold as
    false positives (unless ``count_spurious_predicates=False``: skipped)."""
    for gold_frame, pred_frame in pair_frames(
        gold, pred, skip_spurious=not count_spurious_predicates
    ):
        pred_args = _frame_arguments(pred_frame, token_map)
        result.count_arguments(pred_args, _frame_arguments(gold_frame, None))


def _pos_class(pos: str) -> str:
    return pos if pos in PREDICATE_POS else "other"


def score_predicates(
    example: Example,
    token_map: TokenMap,
    gold: FramesBySpan,
    pred: FramesBySpan,
    result: SRLEvaluation,
    sense_baseline: Optional[Mapping[str, str]],
) -> None:
    """Predicate P/R/F by the gold UPOS of the predicate's first token (a spurious
    predicate: the predicted token's UPOS, else the aligned one's) and the sense
    baseline's accuracy on the predicates :meth:`SRLEvaluation.count_frames` scores."""
    ref, predicted = example.reference, example.predicted
    pred_has_pos = predicted.has_annotation("POS")
    for key in set(gold) | set(pred):
        if key in gold:
            pos = _pos_class(ref[key[0]].pos_)
        elif pred_has_pos:
            pos = _pos_class(predicted[pred[key][0].predicate.start].pos_)
        else:
            partner = token_map.token(pred[key][0].predicate.start)
            pos = _pos_class(ref[partner].pos_) if partner is not None else "other"
        prf = result.pred_per_pos[pos]
        if key in gold and key in pred:
            prf.tp += 1
        elif key in gold:
            prf.fn += 1
        else:
            prf.fp += 1
    if sense_baseline is None:
        return
    for key, gold_roleset, _ in sense_pairs(gold, pred):
        lemma = ref[key[0]].lemma_
        guess = sense_baseline.get(lemma, f"{lemma}.01")
        result.senses_baseline.total += 1
        result.senses_baseline.correct += int(guess == gold_roleset)


def lemma_mfs(docs: Iterable[Doc]) -> Dict[str, str]:
    """The lemma most-frequent-sense table of a training set: for each lemma
    (``token.lemma_`` of a gold predicate's first token), its most frequent roleset
    (ties: the first seen). The baseline guesses ``lemma.01`` for unseen lemmas."""
    counts: Dict[str, Counter] = defaultdict(Counter)
    for doc in docs:
        for frame in doc._.srl_frames:
            if frame.roleset:
                counts[doc[frame.predicate.start].lemma_][frame.roleset] += 1
    return {lemma: c.most_common(1)[0][0] for lemma, c in counts.items()}
