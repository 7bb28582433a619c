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
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from spacy.language import Language
from spacy.tokens import Doc

from .corpus.docbin import DOC_ID_KEY
from .errors import Errors
from .frames import SRLFrame, doc_sentences, has_srl_annotation
from .pipeline.scorer import (
    OFFICIAL,
    Argument,
    SRLEvaluation,
    _check_convention,
    join_continuations,
)

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


def _count(srl: SRLEvaluation, pred: Set[Argument], gold: Set[Argument]) -> None:
    srl.args.score_set(pred, gold)
    for label in {a[0] for a in gold} | {a[0] for a in pred}:
        srl.per_type[label].score_set(
            {a for a in pred if a[0] == label}, {a for a in gold if a[0] == label}
        )


def score_document(
    document: GoldDocument,
    doc: Doc | Prediction,
    result: RawEvaluation,
    convention: str = "strict",
) -> None:
    """Add one predicted doc's (or :class:`Prediction`'s) agreement with its gold
    document to ``result``."""
    predicted = doc if isinstance(doc, Prediction) else Prediction.from_docs([doc], document.text)
    srl = result.srl
    result.n_documents += 1
    result.n_sentences += document.n_sentences
    result.n_pred_sentences += predicted.n_sentences
    result.n_words += predicted.n_words

    def reachable(start: int, end: int) -> bool:
        return start in predicted.starts and end in predicted.ends

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
    for frame in predicted.frames:
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
    gold_sentences: bool = False,
) -> RawEvaluation:
    """Run ``nlp`` on the text of each gold document of ``docs`` and score its frames
    by character offsets (see the module doc).

    ``gold_sentences``: a diagnostic, the segmentation oracle: ``nlp`` runs on each gold
    sentence's text separately, held to one sentence (it still tokenises, tags and
    parses, but its segmenter cannot cut the sentence), so the difference from the
    default is what the pipeline's sentence segmentation costs."""
    _check_convention(convention)
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


# factories that set sentence starts and keep the ones a component before them preset
# (spaCy's parser always does; senter and sentencizer unless configured to overwrite)
SEGMENTER_FACTORIES = ("parser", "beam_parser", "senter", "sentencizer")


def pipe_as_one_sentence(
    nlp: Language, texts: Iterable[str], batch_size: int, disable: Sequence[str] = ()
) -> Iterable[Doc]:
    """``nlp.pipe`` with each text held to one sentence: just before the first component
    that segments, the first token starts a sentence and no other may, so the segmenter
    keeps the text whole (components before it, such as ``lisa_split_its``, may still
    change the tokens)."""
    return pipe_with_preset_starts(
        nlp, texts, lambda doc, _: _one_sentence(doc), batch_size, disable
    )


def pipe_with_preset_starts(
    nlp: Language,
    texts: Iterable[str],
    preset: Callable[[Doc, int], Doc],
    batch_size: int,
    disable: Sequence[str] = (),
) -> Iterable[Doc]:
    """``nlp.pipe`` with ``preset(doc, i)`` (``i``: the text's position in ``texts``)
    applied just before the first component that segments: the sentence starts it sets
    (``token.is_sent_start`` True or False) are kept, those it leaves ``None`` are the
    segmenter's to decide."""
    docs: Iterable[Doc] = (nlp.make_doc(text) for text in texts)
    held = False
    for name, component in nlp.pipeline:
        if name in disable:
            continue
        if not held and nlp.get_pipe_meta(name).factory in SEGMENTER_FACTORIES:
            docs = (preset(doc, i) for i, doc in enumerate(docs))
            held = True
        if hasattr(component, "pipe"):
            docs = component.pipe(docs, batch_size=batch_size)
        else:
            # map binds this component now (a generator expression would look the name
            # up when iterated, after the loop has moved on to the last component)
            docs = map(component, docs)
    return docs


def _one_sentence(doc: Doc) -> Doc:
    for token in doc:
        token.is_sent_start = token.i == 0
    return doc
