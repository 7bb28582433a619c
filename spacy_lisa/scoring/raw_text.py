"""Raw-text SRL evaluation: the pipeline tokenises, segments and parses each gold
document's text itself, and its frames are matched to the gold frames by *character*
offsets (``spacy-lisa evaluate --raw``).

Documents: sentence Docs (one per sentence, as ``spacy-lisa convert ewt`` writes) are
grouped by their ``spacy_lisa.doc_id`` user data in file order; a Doc that already holds
several sentences (a document-level DocBin) is a document by itself, as is a sentence
with no document id. A document's text is its sentences' texts, joined with one space
where the previous sentence has no trailing whitespace.

Scoring follows the CoNLL-2005 conventions of :mod:`.scorer` with
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
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from spacy.language import Language
from spacy.tokens import Doc

from ..corpus.docbin import DOC_ID_KEY
from ..errors import Errors
from ..frames import SRLFrame, doc_sentences, has_srl_annotation
from .counts import (
    OFFICIAL,
    Argument,
    SRLEvaluation,
    check_convention,
    join_continuations,
    pair_frames,
)
from .preset_sentences import pipe_as_one_sentence

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
    sentences: List[CharSpan] = field(default_factory=list)  # every sentence's characters


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
    sentences = doc_sentences(doc)
    document.n_sentences += len(sentences)
    document.sentences.extend((offset + s.start_char, offset + s.end_char) for s in sentences)
    if has_srl_annotation(doc):
        document.scored.append((offset, offset + len(doc.text)))
        document.frames.extend(_char_frame(f, offset) for f in doc._.srl_frames)


@dataclass
class Prediction:
    """What the pipeline made of one document's text: its frames in characters of that
    text, its token boundaries (start and end characters) and its sentence count."""

    text: str
    frames: List[CharFrame]
    starts: Set[int]
    ends: Set[int]
    n_sentences: int
    n_words: int

    @classmethod
    def from_docs(
        cls, docs: Sequence[Doc], text: str, pieces: Optional[Sequence[CharSpan]] = None
    ) -> Prediction:
        """The prediction of ``docs``, the ``pieces`` of ``text`` (character spans; by
        default one doc for the whole text), e.g. one per sentence."""
        prediction = cls(text=text, frames=[], starts=set(), ends=set(), n_sentences=0, n_words=0)
        for doc, (offset, end) in zip(docs, pieces or [(0, len(text))], strict=True):
            if text[offset:end] != doc.text:
                raise ValueError(Errors.E261.format(text=text[offset:end][:40]))
            prediction.frames.extend(_char_frame(f, offset) for f in doc._.srl_frames)
            prediction.starts.update(offset + t.idx for t in doc)
            prediction.ends.update(offset + t.idx + len(t) for t in doc)
            prediction.n_sentences += len(doc_sentences(doc))
            prediction.n_words += len(doc)
        return prediction


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


def score_document(
    document: GoldDocument,
    doc: Doc | Prediction,
    result: RawEvaluation,
    convention: str = "strict",
) -> None:
    """Add one predicted doc's (or :class:`Prediction`'s) agreement with its gold
    document to ``result``."""
    predicted = doc if isinstance(doc, Prediction) else Prediction.from_docs([doc], document.text)
    result.n_documents += 1
    result.n_sentences += document.n_sentences
    result.n_pred_sentences += predicted.n_sentences
    result.n_words += predicted.n_words
    _count_unreachable(document, predicted, result)
    gold = _by_key(document.frames, lambda span: span)
    scored = (f for f in predicted.frames if _in_scored(document, f.predicate[0]))
    pred = _by_key(scored, lambda span: span)
    result.srl.count_frames(gold, pred)
    official = convention == OFFICIAL
    if official:  # srl-eval.pl pairs props by row: the predicate's first character
        gold = _by_key((f for fs in gold.values() for f in fs), lambda span: span[0])
        pred = _by_key((f for fs in pred.values() for f in fs), lambda span: span[0])
    for gold_frame, pred_frame in pair_frames(gold, pred, skip_spurious=official):
        result.srl.count_arguments(_arguments(pred_frame), _arguments(gold_frame))


def _count_unreachable(
    document: GoldDocument, predicted: Prediction, result: RawEvaluation
) -> None:
    """Count the gold predicates and arguments the predicted tokens cannot reach."""

    def reachable(start: int, end: int) -> bool:
        return start in predicted.starts and end in predicted.ends

    for frame in document.frames:
        result.n_gold_preds_unreachable += int(not reachable(*frame.predicate))
        for _, pieces in join_continuations(frame.roles):
            result.n_gold_args += 1
            result.n_gold_args_unreachable += int(not all(reachable(*p) for p in pieces))


def _by_key(
    frames: Iterable[CharFrame], key: Callable[[CharSpan], Any]
) -> Dict[Any, List[CharFrame]]:
    """Frames grouped by ``key`` of their predicate span, in order."""
    out: Dict[Any, List[CharFrame]] = {}
    for frame in frames:
        out.setdefault(key(frame.predicate), []).append(frame)
    return out


def _arguments(frame: Optional[CharFrame]) -> Set[Argument]:
    return set(join_continuations(frame.roles)) if frame is not None else set()


def evaluate_raw(
    nlp: Language,
    docs: Sequence[Doc],
    *,
    convention: str = "strict",
    batch_size: int = 64,
    disable: Sequence[str] = (),
    gold_sentences: bool = False,
) -> RawEvaluation:
    """Run ``nlp`` on the text of each gold document of ``docs`` and score its frames
    by character offsets (see the module doc).

    ``gold_sentences``: a diagnostic, the segmentation oracle: ``nlp`` runs on each gold
    sentence's text separately, held to one sentence (it still tokenises, tags and
    parses, but its segmenter cannot cut the sentence), so the difference from the
    default is what the pipeline's sentence segmentation costs."""
    check_convention(convention)
    documents = [d for d in group_documents(docs) if d.scored]
    result = RawEvaluation()
    spans = [d.sentences if gold_sentences else [(0, len(d.text))] for d in documents]
    texts = [[d.text[b:e] for b, e in group] for d, group in zip(documents, spans, strict=True)]
    start = time.perf_counter()
    all_texts = (text for group in texts for text in group)
    if gold_sentences:
        pieces = iter(pipe_as_one_sentence(nlp, all_texts, batch_size, disable))
    else:
        pieces = iter(nlp.pipe(all_texts, batch_size=batch_size, disable=list(disable)))
    predicted = [[next(pieces) for _ in group] for group in texts]
    result.seconds = time.perf_counter() - start
    for document, group, group_docs in zip(documents, spans, predicted, strict=True):
        prediction = Prediction.from_docs(group_docs, document.text, group)
        score_document(document, prediction, result, convention)
    return result
