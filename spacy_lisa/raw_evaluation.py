"""Raw-text SRL evaluation: the pipeline tokenises, segments and parses each gold
document's text itself, and its frames are matched to the gold frames by *character*
offsets (``spacy-lisa evaluate --raw``).

Documents: sentence Docs (one per sentence, as ``spacy-lisa convert ewt`` writes) are
grouped by their ``spacy_lisa.doc_id`` user data in file order; a Doc that already holds
several sentences (a document-level DocBin) is a document by itself, as is a sentence
with no document id. A document's text is its sentences' texts, joined with one space
where the previous sentence has no trailing whitespace.

Scoring follows the CoNLL-2005 conventions of :mod:`spacy_lisa.pipeline.scorer` with
character spans in place of token spans: ``V`` is not scored, ``C-X`` pieces join their
``X`` into one discontinuous argument, ``R-X`` are labels of their own, an argument is
right only if its label and every piece's characters are exact. Frames pair by
predicate character span; in the ``strict`` convention the arguments of spurious
predicted predicates are false positives, in the ``official`` one they are skipped and
frames pair by the predicate's first character (srl-eval.pl's "same row"). Predictions
whose predicate lies in a sentence without SRL annotation are not scored.

A gold argument (or predicate) is *unreachable* when one of its start or end characters
is not a token boundary of the predicted tokenisation: no prediction could match it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from spacy.language import Language
from spacy.tokens import Doc

from .frames import SRLFrame, doc_sentences, has_srl_annotation
from .pipeline.scorer import (
    OFFICIAL,
    Argument,
    SRLEvaluation,
    _check_convention,
    join_continuations,
)

DOC_ID_KEY = "spacy_lisa.doc_id"

CharSpan = Tuple[int, int]


@dataclass
class CharFrame:
    """A frame in character offsets of its document's text."""

    predicate: CharSpan
    roleset: Optional[str]
    roles: List[Tuple[int, int, str]]


@dataclass
class GoldDocument:
    """One document to evaluate: its text, the gold frames in character offsets and the
    character ranges of its sentences that carry SRL annotation."""

    doc_id: Optional[str]
    text: str
    frames: List[CharFrame] = field(default_factory=list)
    scored: List[CharSpan] = field(default_factory=list)
    n_sentences: int = 0


def _char_frame(frame: SRLFrame, offset: int) -> CharFrame:
    def chars(start: int, end: int) -> CharSpan:
        doc = frame.doc
        return offset + doc[start].idx, offset + doc[end - 1].idx + len(doc[end - 1])

    return CharFrame(
        predicate=chars(frame.predicate.start, frame.predicate.end),
        roleset=frame.roleset,
        roles=[(*chars(r.start, r.end), r.label_) for r in frame.roles],
    )


def group_documents(docs: Iterable[Doc]) -> List[GoldDocument]:
    """The gold documents of a DocBin's Docs (see the module doc)."""
    out: List[GoldDocument] = []
    current: Optional[GoldDocument] = None
    by_id: Dict[str, GoldDocument] = {}
    for doc in docs:
        doc_id = doc.user_data.get(DOC_ID_KEY)
        several = len(doc_sentences(doc)) > 1
        if several or doc_id is None:
            current = GoldDocument(doc_id=doc_id, text="")
            out.append(current)
        elif doc_id in by_id:
            current = by_id[doc_id]
        else:
            current = by_id[doc_id] = GoldDocument(doc_id=doc_id, text="")
            out.append(current)
        _append(current, doc)
    return out


def _append(document: GoldDocument, doc: Doc) -> None:
    if document.text and not document.text[-1].isspace():
        document.text += " "
    offset = len(document.text)
    document.text += doc.text
    document.n_sentences += len(doc_sentences(doc))
    if has_srl_annotation(doc):
        document.scored.append((offset, offset + len(doc.text)))
        document.frames.extend(_char_frame(f, offset) for f in doc._.srl_frames)


def _pred_frames(doc: Doc) -> List[CharFrame]:
    return [_char_frame(f, 0) for f in doc._.srl_frames]


def _in_scored(document: GoldDocument, char: int) -> bool:
    return any(start <= char < end for start, end in document.scored)


@dataclass
class RawEvaluation:
    """The counts of :func:`evaluate_raw`: the scorer's plus what tokenisation lost."""

    srl: SRLEvaluation = field(default_factory=SRLEvaluation)
    n_documents: int = 0
    n_sentences: int = 0
    n_pred_sentences: int = 0
    n_words: int = 0
    n_gold_args: int = 0
    n_gold_args_unreachable: int = 0
    n_gold_preds_unreachable: int = 0
    seconds: float = 0.0

    def to_scores(self) -> Dict[str, Any]:
        scores = self.srl.to_scores()
        for key in ("srl_per_type", "srl_uas", "srl_las", "srl_pos_acc", "srl_pred_per_pos"):
            scores.pop(key, None)
        scores["srl_per_type"] = self.srl.to_scores()["srl_per_type"]
        scores["srl_per_type_counts"] = self.srl.per_type_counts()
        scores["n_docs"] = self.n_documents
        scores["n_sentences"] = self.n_sentences
        scores["n_pred_sentences"] = self.n_pred_sentences
        scores["n_words"] = self.n_words
        scores["n_gold_frames"] = self.srl.n_gold_frames
        scores["n_pred_frames"] = self.srl.n_pred_frames
        scores["n_gold_args"] = self.n_gold_args
        scores["n_gold_args_unreachable"] = self.n_gold_args_unreachable
        scores["n_gold_preds_unreachable"] = self.n_gold_preds_unreachable
        scores["speed"] = self.n_words / self.seconds if self.seconds > 0 else None
        return scores


def _arguments(frames: List[CharFrame], i: int) -> Set[Argument]:
    return set(join_continuations(frames[i].roles)) if i < len(frames) else set()


def _count(srl: SRLEvaluation, pred: Set[Argument], gold: Set[Argument]) -> None:
    srl.args.score_set(pred, gold)
    for label in {a[0] for a in gold} | {a[0] for a in pred}:
        srl.per_type[label].score_set(
            {a for a in pred if a[0] == label}, {a for a in gold if a[0] == label}
        )


def score_document(
    document: GoldDocument, doc: Doc, result: RawEvaluation, convention: str = "strict"
) -> None:
    """Add one predicted doc's agreement with its gold document to ``result``."""
    if doc.text != document.text:
        raise ValueError(
            "The pipeline changed the text of a document (its tokenizer must keep the "
            f"characters): {document.text[:40]!r}. Use a spaCy tokenizer, or evaluate "
            "on gold tokens (without --raw)."
        )
    srl = result.srl
    result.n_documents += 1
    result.n_sentences += document.n_sentences
    result.n_pred_sentences += len(doc_sentences(doc))
    result.n_words += len(doc)
    starts = {t.idx for t in doc}
    ends = {t.idx + len(t) for t in doc}

    def reachable(start: int, end: int) -> bool:
        return start in starts and end in ends

    official = convention == OFFICIAL
    gold: Dict[CharSpan, List[CharFrame]] = {}
    for frame in document.frames:
        gold.setdefault(frame.predicate, []).append(frame)
        srl.n_gold_frames += 1
        result.n_gold_preds_unreachable += int(not reachable(*frame.predicate))
        for _, pieces in join_continuations(frame.roles):
            result.n_gold_args += 1
            result.n_gold_args_unreachable += int(not all(reachable(*p) for p in pieces))
    pred: Dict[CharSpan, List[CharFrame]] = {}
    for frame in _pred_frames(doc):
        if _in_scored(document, frame.predicate[0]):
            pred.setdefault(frame.predicate, []).append(frame)
            srl.n_pred_frames += 1
    srl.n_docs += 1
    srl.predicates.score_set(set(pred), set(gold))
    for key in set(gold) & set(pred):
        for g, p in zip(gold[key], pred[key], strict=False):
            if g.roleset:
                srl.senses.total += 1
                srl.senses.correct += int(p.roleset == g.roleset)

    # pairing: by predicate characters, or (official) by the first character
    def pair_key(span: CharSpan) -> Any:
        return span[0] if official else span

    gold_by: Dict[Any, List[CharFrame]] = {}
    for frames in gold.values():
        for frame in frames:
            gold_by.setdefault(pair_key(frame.predicate), []).append(frame)
    pred_by: Dict[Any, List[CharFrame]] = {}
    for frames in pred.values():
        for frame in frames:
            pred_by.setdefault(pair_key(frame.predicate), []).append(frame)
    for key in set(gold_by) | set(pred_by):
        gold_frames, pred_frames = gold_by.get(key, []), pred_by.get(key, [])
        for i in range(max(len(gold_frames), len(pred_frames))):
            if i >= len(gold_frames) and official:
                continue  # srl-eval.pl skips a predicted prop without gold
            gold_args = (
                set(join_continuations(gold_frames[i].roles)) if i < len(gold_frames) else set()
            )
            pred_args = (
                set(join_continuations(pred_frames[i].roles)) if i < len(pred_frames) else set()
            )
            _count(srl, pred_args, gold_args)


def evaluate_raw(
    nlp: Language,
    docs: Sequence[Doc],
    *,
    convention: str = "strict",
    batch_size: int = 64,
    disable: Sequence[str] = (),
) -> RawEvaluation:
    """Run ``nlp`` on the text of each gold document of ``docs`` and score its frames
    by character offsets (see the module doc)."""
    _check_convention(convention)
    documents = [d for d in group_documents(docs) if d.scored]
    result = RawEvaluation()
    start = time.perf_counter()
    predicted = list(
        nlp.pipe((d.text for d in documents), batch_size=batch_size, disable=list(disable))
    )
    result.seconds = time.perf_counter() - start
    for document, doc in zip(documents, predicted, strict=True):
        score_document(document, doc, result, convention)
    return result
