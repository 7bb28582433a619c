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

from bisect import bisect_right
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

import spacy
from spacy.scorer import PRFScore
from spacy.tokens import Doc
from spacy.training import Example

from ..alignment import TokenMap
from ..bio import VERB
from ..errors import Errors
from ..frames import SRLFrame, doc_sentences, has_srl_annotation

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
        _score_frames_official(example, token_map, result)
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


# --- the official convention: what srl-eval.pl computes on the props files ------------
#
# A port of the parts of srl-eval.pl (CoNLL-2005) that decide the counts, applied to
# the columns ``spacy-lisa evaluate --conll-dir`` writes (corpus/conll2005.py):
#
# - props are paired by their *row* in the sentence (the script's "position": the row
#   of the lemma in the first column), not by predicate span: a predicted "grow" paired
#   with a gold "grow up" that starts on the same token is scored against it. The
#   writer puts the lemma on the predicate's first token, or, when another frame of the
#   sentence took that row, on the next free one (:func:`props_rows`).
# - a gold prop with no predicted prop at its row: all its arguments missed; a
#   predicted prop with no gold prop at its row: skipped (not counted).
# - one column is read as nested brackets; spans with the same start and end collapse
#   into one (the last written survives, ``V`` is written first); an argument with
#   other spans nested inside it (the ``V`` included) is compared by the spans of
#   those nested phrases, like a discontinuous argument, so it equals only a gold
#   argument with the same nested spans.
# - ``C-X`` joins the last ``X`` read before it (read by start, longer spans first).
# - ``V`` is not scored; roles outside the predicate's sentence cannot be written and
#   are not scored; the lemma strings are taken to match (the writer copies the gold
#   lemma of the row, see ``spacy_lisa.cli.evaluate.write_props``).


class _Phrase:
    """A phrase (or argument) as srl-eval.pl holds it: ``end`` inclusive."""

    __slots__ = ("start", "end", "type", "phrases")

    def __init__(self, start: int, end: int, type_: str) -> None:
        self.start, self.end, self.type = start, end, type_
        self.phrases: List[_Phrase] = []

    @property
    def single(self) -> bool:
        return not self.phrases

    def dfs(self) -> Iterator[_Phrase]:
        yield self
        for phrase in self.phrases:
            yield from phrase.dfs()


def props_rows(predicates: Sequence[Piece], length: int) -> List[Optional[int]]:
    """The props row of each predicate of one sentence (sentence offsets, in the order
    they are written: sorted by span), as ``write_conll2005`` places the lemmas: the
    predicate's first free token, else the nearest free token after it, else before
    it; ``None`` when the sentence has no free row left."""
    used: set = set()
    rows: List[Optional[int]] = []
    for start, end in predicates:
        candidates = [*range(start, end), *range(end, length), *range(start - 1, -1, -1)]
        row = next((i for i in candidates if i not in used), None)
        if row is not None:
            used.add(row)
        rows.append(row)
    return rows


def _read_prop(spans: Sequence[Tuple[int, int, str]]) -> List[_Phrase]:
    """The arguments srl-eval.pl reads from the bracket column of ``spans`` (``V``
    first, then the roles; end exclusive), ``V`` included."""
    opens: Dict[int, List[str]] = defaultdict(list)
    closes: Dict[int, int] = defaultdict(int)
    for start, end, label in sorted(spans, key=lambda s: (s[0], -s[1])):
        opens[start].append(label)
        closes[end - 1] += 1
    stack: List[_Phrase] = []
    matrix: Dict[Piece, _Phrase] = {}
    for i in sorted(set(opens) | set(closes)):
        for label in opens.get(i, ()):
            stack.append(_Phrase(i, -1, label))
        for _ in range(closes.get(i, 0)):
            phrase = stack.pop()
            phrase.end = i
            if stack:
                stack[-1].phrases.append(phrase)
            else:  # a top phrase: it and every phrase inside it join the set
                for inner in phrase.dfs():
                    matrix[(inner.start, inner.end)] = inner
    args: List[_Phrase] = []
    last_of_type: Dict[str, _Phrase] = {}
    for key in sorted(matrix, key=lambda k: (k[0], -k[1])):
        phrase = matrix[key]
        if phrase.type.startswith(CONTINUATION_PREFIX):
            base = phrase.type[len(CONTINUATION_PREFIX) :]
            head = last_of_type.get(base)
            if head is not None:
                if head.single:
                    head.phrases.append(_Phrase(head.start, head.end, base))
                head.phrases.append(phrase)
                head.end = phrase.end
                continue
            phrase.type = base  # an orphan C-X is a plain X
        args.append(phrase)
        last_of_type[phrase.type] = phrase
    return args


def _discriminate(
    gold: List[_Phrase], pred: List[_Phrase]
) -> Tuple[List[str], List[str], List[str]]:
    """The types of the correct, excess and missed arguments (srl-eval.pl's
    ``discriminate_args``)."""
    index: Dict[Piece, _Phrase] = {}
    for arg in gold:
        index[(arg.start, arg.end)] = arg  # a later one with the same extent wins
    correct: List[str] = []
    excess: List[str] = []
    for arg in pred:
        key = (arg.start, arg.end)
        match = index.get(key)
        if match is None or match.single != arg.single or match.type != arg.type:
            excess.append(arg.type)
            continue
        right = True
        if not arg.single:
            pieces = {(p.start, p.end) for p in match.phrases}
            for piece in arg.phrases:
                if (piece.start, piece.end) not in pieces:
                    right = False
                    break
                pieces.discard((piece.start, piece.end))
            right = right and not pieces
        if right:
            correct.append(arg.type)
            del index[key]
        else:
            excess.append(arg.type)
    return correct, excess, [arg.type for arg in index.values()]


def _count(result: SRLEvaluation, types: List[str], what: str) -> None:
    for label in types:
        if label == VERB:
            continue
        for prf in (result.args, result.per_type[label]):
            setattr(prf, what, getattr(prf, what) + 1)


def _score_frames_official(example: Example, token_map: TokenMap, result: SRLEvaluation) -> None:
    ref = example.reference
    sentences = [(s.start, s.end) for s in doc_sentences(ref)]
    starts = [start for start, _ in sentences]

    def sentence_of(i: int) -> int:
        return max(0, bisect_right(starts, i) - 1)

    Column = Tuple[Piece, List[Tuple[int, int, str]]]
    gold: Dict[int, List[Column]] = defaultdict(list)
    for frame in ref._.srl_frames:
        start, end = frame.predicate.start, frame.predicate.end
        roles = [(r.start, r.end, r.label_) for r in frame.roles]
        gold[sentence_of(start)].append(((start, end), roles))
    pred: Dict[int, List[Column]] = defaultdict(list)
    for frame in example.predicted._.srl_frames:
        key = token_map.span(frame.predicate.start, frame.predicate.end)
        if key is None:  # no row to pair with: skipped, as a prop without gold
            continue
        lo, hi = sentences[sentence_of(key[0])] if sentences else (0, len(ref))
        roles = []
        for role in frame.roles:
            span = token_map.span(role.start, role.end)
            if span is None:  # cannot equal a gold span: an excess argument
                if not role.label_.startswith(CONTINUATION_PREFIX):
                    _count(result, [role.label_], "fp")
            elif lo <= span[0] and span[1] <= hi:  # others cannot be written
                roles.append((span[0], span[1], role.label_))
        pred[sentence_of(key[0])].append((key, roles))
    for s, gold_columns in gold.items():
        lo, hi = sentences[s] if sentences else (0, len(ref))
        gold_columns.sort(key=lambda c: c[0])
        gold_rows = props_rows([(a - lo, b - lo) for (a, b), _ in gold_columns], hi - lo)
        pred_columns = sorted(pred.get(s, []), key=lambda c: c[0])
        pred_rows = props_rows([(a - lo, b - lo) for (a, b), _ in pred_columns], hi - lo)
        pred_by_row = {r: c for r, c in zip(pred_rows, pred_columns, strict=True) if r is not None}
        for row, ((gstart, gend), groles) in zip(gold_rows, gold_columns, strict=True):
            if row is None:
                continue
            gold_args = _read_prop([(gstart, gend, VERB), *groles])
            pred_args: List[_Phrase] = []
            if row in pred_by_row:
                (pstart, pend), proles = pred_by_row[row]
                pred_args = _read_prop([(pstart, pend, VERB), *proles])
            correct, excess, missed = _discriminate(gold_args, pred_args)
            _count(result, correct, "tp")
            _count(result, excess, "fp")
            _count(result, missed, "fn")


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
def make_srl_scorer() -> Callable[..., Dict[str, Any]]:
    """The scorer of the ``lisa_srl`` component (``score_srl``, strict convention)."""
    return score_srl


@spacy.registry.scorers("spacy-lisa.srl_scorer.v2")
def make_srl_scorer_v2(convention: str = STRICT) -> Callable[..., Dict[str, Any]]:
    """``score_srl`` in the given convention: ``"strict"`` (the arguments of spurious
    predicted predicates are false positives) or ``"official"`` (srl-eval.pl's)."""
    _check_convention(convention)
    return partial(score_srl, convention=convention)
