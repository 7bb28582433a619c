"""The ``official`` convention of the SRL scorer: what CoNLL-2005's ``srl-eval.pl``
computes on the props files ``spacy-lisa evaluate --conll-dir`` writes (see
:mod:`.scorer` for the conventions, and the notes below for the parts ported)."""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from spacy.training import Example

from ..alignment import TokenMap
from ..decoding.bio import VERB
from ..frames import doc_sentences
from .counts import CONTINUATION_PREFIX, Piece, SRLEvaluation

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
#   lemma of the row, see ``props.write_props``).


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


def score_frames_official(example: Example, token_map: TokenMap, result: SRLEvaluation) -> None:
    """Count the arguments of one example as srl-eval.pl does on its props files (see the
    notes above): props paired by row, sentence by sentence."""
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
