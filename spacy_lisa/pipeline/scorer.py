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
- ``convention="strict"`` (the default, the usual end-to-end convention): frames are
  paired by predicate token span. A gold frame with no predicted frame counts all its
  arguments as missed; a predicted frame with no gold frame counts all its arguments as
  false positives (``count_spurious_predicates=False`` skips them instead, still pairing
  by span: the approximation of srl-eval.pl this scorer had before ``"official"``).
- ``convention="official"``: the counts ``srl-eval.pl`` prints for the props files
  ``spacy-lisa evaluate --conll-dir`` writes (see the notes above
  :func:`props_rows`): props pair by their row, i.e. the predicate's *first token*, so
  a one-token "grow" predicted for a gold "grow up" is scored against it; props with no
  gold at their row are skipped.

Predicates: ``srl_pred_p/r/f`` by exact predicate span (both conventions), and by the
gold UPOS of the predicate's first token in ``srl_pred_per_pos`` (``VERB``, ``AUX``,
``NOUN``, ``ADJ``, ``other``; a spurious predicate takes its predicted token's UPOS when
the predicted doc has POS, else the aligned reference token's). ``srl_sense_acc``: the
share of predicted predicates matching a gold predicate (same span) that has a roleset
whose roleset is right; with ``sense_baseline`` (:func:`lemma_mfs`) also
``srl_sense_acc_mfs``, the lemma most-frequent-sense baseline on the same predicates.

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

from collections import Counter, defaultdict
from functools import partial
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional

import spacy
from spacy.tokens import Doc
from spacy.training import Example

from ..alignment import TokenMap
from ..errors import Errors
from ..frames import SRLFrame, has_srl_annotation
from .srl_eval_official import props_rows, score_frames_official
from .srl_evaluation import (
    CONVENTIONS,
    OFFICIAL,
    PREDICATE_POS,
    STRICT,
    Argument,
    Piece,
    SRLEvaluation,
    join_continuations,
)


def _frame_arguments(frame: SRLFrame, to_ref: Optional[TokenMap]) -> List[Argument]:
    """The frame's arguments with ``C-X`` pieces joined to their ``X`` (V excluded).
    ``to_ref`` maps predicted offsets to reference offsets (``None`` for gold)."""
    args = join_continuations((r.start, r.end, r.label_) for r in frame.roles)
    if to_ref is None:
        return args
    mapped_args: List[Argument] = []
    for label, spans in args:
        mapped = []
        for start, end in spans:
            ref_span = to_ref.span(start, end)
            # negative offsets never equal a gold piece, yet stay distinct per span
            mapped.append(ref_span if ref_span is not None else (-1 - start, -1 - end))
        mapped_args.append((label, tuple(sorted(mapped))))
    return mapped_args


def _frames_by_predicate(
    frames: List[SRLFrame], to_ref: Optional[TokenMap]
) -> Dict[Piece, List[SRLFrame]]:
    """Frames keyed by predicate span (reference offsets); a predicate that does not map
    gets a negative key, so it pairs with no gold frame."""
    out: Dict[Piece, List[SRLFrame]] = defaultdict(list)
    for frame in frames:
        start, end = frame.predicate.start, frame.predicate.end
        key: Optional[Piece] = (start, end) if to_ref is None else to_ref.span(start, end)
        out[key if key is not None else (-1 - start, -1 - end)].append(frame)
    return out


def _pos_class(pos: str) -> str:
    return pos if pos in PREDICATE_POS else "other"


def _score_predicates(
    example: Example,
    token_map: TokenMap,
    gold: Dict[Piece, List[SRLFrame]],
    pred: Dict[Piece, List[SRLFrame]],
    result: SRLEvaluation,
    sense_baseline: Optional[Mapping[str, str]],
) -> None:
    """Predicate P/R/F by the gold UPOS of the predicate's first token and the sense
    (roleset) accuracy of the predicted predicates that match a gold one by span."""
    ref, predicted = example.reference, example.predicted
    pred_has_pos = predicted.has_annotation("POS")
    for key in set(gold) | set(pred):
        if key in gold:
            pos = _pos_class(ref[key[0]].pos_)
        else:  # a spurious predicate: the predicted token's UPOS, else the aligned one's
            start = pred[key][0].predicate.start
            partner = token_map.token(start)
            if pred_has_pos:
                pos = _pos_class(predicted[start].pos_)
            else:
                pos = _pos_class(ref[partner].pos_) if partner is not None else "other"
        prf = result.pred_per_pos[pos]
        if key in gold and key in pred:
            prf.tp += 1
        elif key in gold:
            prf.fn += 1
        else:
            prf.fp += 1
        for gold_frame, pred_frame in zip(gold.get(key, []), pred.get(key, []), strict=False):
            if not gold_frame.roleset:
                continue
            result.senses.total += 1
            result.senses.correct += int(pred_frame.roleset == gold_frame.roleset)
            if sense_baseline is not None:
                lemma = ref[key[0]].lemma_
                guess = sense_baseline.get(lemma, f"{lemma}.01")
                result.senses_baseline.total += 1
                result.senses_baseline.correct += int(guess == gold_frame.roleset)


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


def _score_frames(
    example: Example,
    token_map: TokenMap,
    result: SRLEvaluation,
    convention: str,
    count_spurious_predicates: bool,
    sense_baseline: Optional[Mapping[str, str]],
) -> None:
    gold = _frames_by_predicate(example.reference._.srl_frames, None)
    pred = _frames_by_predicate(example.predicted._.srl_frames, token_map)
    result.n_docs += 1
    result.n_gold_frames += sum(len(v) for v in gold.values())
    result.n_pred_frames += sum(len(v) for v in pred.values())
    result.predicates.score_set(set(pred), set(gold))
    _score_predicates(example, token_map, gold, pred, result, sense_baseline)
    if convention == OFFICIAL:
        score_frames_official(example, token_map, result)
        return
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


def _score_parse(example: Example, token_map: TokenMap, result: SRLEvaluation) -> None:
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


def _score_pos(example: Example, token_map: TokenMap, result: SRLEvaluation, pos_attr: str) -> None:
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


def _check_convention(convention: str) -> None:
    if convention not in CONVENTIONS:
        raise ValueError(
            Errors.E024.format(value=convention, option="convention", choices=list(CONVENTIONS))
        )


def evaluate_srl(
    examples: Iterable[Example],
    *,
    convention: str = STRICT,
    count_spurious_predicates: bool = True,
    pos_attr: str = "tag_",
    sense_baseline: Optional[Mapping[str, str]] = None,
) -> SRLEvaluation:
    """Count SRL, predicate, parse and POS agreement over ``examples`` (see module doc).
    ``convention``: ``"strict"`` (frames paired by predicate span; the arguments of
    spurious predicates are false positives unless ``count_spurious_predicates=False``)
    or ``"official"`` (srl-eval.pl's counts on the props files). ``sense_baseline``: a
    lemma -> roleset table (:func:`lemma_mfs`) scored beside the model's senses."""
    _check_convention(convention)
    result = SRLEvaluation()
    for example in examples:
        token_map = TokenMap(example)
        if has_srl_annotation(example.reference):
            _score_frames(
                example, token_map, result, convention, count_spurious_predicates, sense_baseline
            )
        _score_parse(example, token_map, result)
        _score_pos(example, token_map, result, pos_attr)
    return result


def score_srl(
    examples: Iterable[Example],
    *,
    convention: str = STRICT,
    count_spurious_predicates: bool = True,
    pos_attr: str = "tag_",
    **kwargs: Any,
) -> Dict[str, Any]:
    """Score ``examples``: ``srl_p/r/f``, ``srl_per_type``, ``srl_pred_p/r/f``,
    ``srl_uas``, ``srl_las``, ``srl_pos_acc`` (CoNLL-2005 conventions, see module doc).
    Other keyword arguments (spaCy's scorer config, e.g. ``nlp``) are ignored."""
    return evaluate_srl(
        examples,
        convention=convention,
        count_spurious_predicates=count_spurious_predicates,
        pos_attr=pos_attr,
    ).to_scores()


@spacy.registry.scorers("spacy-lisa.srl_scorer.v1")
def make_srl_scorer(convention: str = STRICT) -> Callable[..., Dict[str, Any]]:
    """The scorer of the ``lisa_srl`` component: ``score_srl`` in the given convention,
    ``"strict"`` (the arguments of spurious predicted predicates are false positives) or
    ``"official"`` (srl-eval.pl's)."""
    _check_convention(convention)
    return score_srl if convention == STRICT else partial(score_srl, convention=convention)


# the names other modules take from here (the counts and the official convention live
# in .srl_evaluation and .srl_eval_official)
__all__ = [
    "CONVENTIONS",
    "OFFICIAL",
    "PREDICATE_POS",
    "STRICT",
    "Argument",
    "SRLEvaluation",
    "evaluate_srl",
    "join_continuations",
    "lemma_mfs",
    "make_srl_scorer",
    "props_rows",
    "score_srl",
]
