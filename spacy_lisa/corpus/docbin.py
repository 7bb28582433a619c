"""Sentence records -> spaCy Docs with gold frames -> ``DocBin(store_user_data=True)``.

Each Doc gets the words and spaces, ``tag_`` (XPOS), ``pos_`` (UPOS), ``lemma_``,
``morph`` (FEATS), heads and dependency labels where the records have them (sentence
boundaries then follow the trees; without trees they are set directly), and the gold
frames through :func:`spacy_lisa.frames.set_srl_frames`, which fills
``doc._.srl_frames`` and ``doc.spans["srl"]``. Records without SRL annotation give Docs
with ``set_srl_frames(doc, None)``, which a reader can tell from an annotated Doc with
no predicate (``[]``). Records whose predicates are not all annotated
(``predicates_complete=False``, e.g. the PropBank frame-file examples) give Docs marked so
in ``doc.user_data`` (:func:`spacy_lisa.frames.predicates_complete` reads it back).

By default every sentence is its own Doc. With ``n_sents=N`` up to N consecutive
sentences share a Doc; a Doc never mixes documents, sentences with and without SRL, or
sentences with and without trees, or sentences whose predicates are all annotated and
sentences whose are not, so such a change starts a new Doc early.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from spacy.parts_of_speech import IDS as POS_IDS
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from ..errors import Errors
from ..frames import PREDICATES_COMPLETE_KEY, set_srl_frames
from ._io import CorpusFormatError, PathLike
from .records import SentenceRecord
from .stats import CorpusStats

DOC_ID_KEY = "spacy_lisa.doc_id"
SENT_IDS_KEY = "spacy_lisa.sent_ids"


def _group_key(record: SentenceRecord) -> Tuple[Any, ...]:
    return (
        record.doc_id,
        record.path,
        record.has_srl,
        record.heads is not None,
        record.predicates_complete,
    )


def group_records(
    records: Iterable[SentenceRecord], *, n_sents: int = 1
) -> Iterator[List[SentenceRecord]]:
    """Consecutive records in groups of at most ``n_sents`` that may share a Doc."""
    if n_sents < 1:
        raise ValueError(Errors.E121.format(n_sents=n_sents))
    group: List[SentenceRecord] = []
    for record in records:
        if group and (len(group) >= n_sents or _group_key(record) != _group_key(group[0])):
            yield group
            group = []
        group.append(record)
    if group:
        yield group


def _concat(records: Sequence[SentenceRecord], attr: str) -> Optional[List[Any]]:
    """The records' token-level lists joined, or ``None`` if any record lacks it."""
    values = [getattr(r, attr) for r in records]
    if any(v is None for v in values):
        return None
    return [item for value in values for item in value]


def records_to_doc(vocab: Vocab, records: Sequence[SentenceRecord]) -> Doc:
    """One Doc from one or more sentence records (see the module docstring)."""
    first = records[0]
    pos = _concat(records, "upos")
    if pos is not None:
        _check_upos(records)
    heads, deps, sent_starts = _tree(records)
    try:
        doc = Doc(
            vocab,
            words=[w for r in records for w in r.words],
            spaces=[s for r in records for s in r.spaces],
            tags=_concat(records, "xpos"),
            pos=pos,
            lemmas=_concat(records, "lemmas"),
            morphs=_concat(records, "morphs"),
            heads=heads,
            deps=deps,
            sent_starts=sent_starts,
        )
    except ValueError as err:  # e.g. a FEATS value spaCy's morphology cannot read
        raise CorpusFormatError(
            Errors.E123.format(where=first.where, message=str(err)),
            path=first.path or "",
            line=first.line,
            reason="invalid_annotation",
        ) from err
    _set_gold(doc, records)
    return doc


def _tree(
    records: Sequence[SentenceRecord],
) -> Tuple[Optional[List[int]], Optional[List[str]], Optional[List[Union[bool, int, None]]]]:
    """The heads and labels of the records' trees (doc-absolute), or without a tree in
    every record, none and sentence starts instead."""
    if not all(r.heads is not None and r.deprels is not None for r in records):
        return None, None, [i == 0 for r in records for i in range(len(r))]
    heads: List[int] = []
    deps: List[str] = []
    offset = 0
    for r in records:
        heads.extend(h + offset for h in r.heads or ())
        deps.extend(r.deprels or ())
        offset += len(r)
    return heads, deps, None


def _check_upos(records: Sequence[SentenceRecord]) -> None:
    """Every UPOS tag is one spaCy knows (E122 names the first that is not)."""
    for r in records:
        for i, tag in enumerate(r.upos or ()):
            if tag not in POS_IDS:
                raise CorpusFormatError(
                    Errors.E122.format(where=r.where, tag=tag, word=r.words[i]),
                    path=r.path or "",
                    line=r.line,
                    reason="invalid_upos",
                )


def _set_gold(doc: Doc, records: Sequence[SentenceRecord]) -> None:
    """The records' frames (re-based on the doc), ids and predicate completeness on
    ``doc``."""
    first = records[0]
    if first.has_srl:
        frames: List[Dict[str, Any]] = []
        offset = 0
        for r in records:
            frames.extend(r.frames(offset) or ())
            offset += len(r)
        set_srl_frames(doc, frames)
    else:
        set_srl_frames(doc, None)
    doc.user_data[DOC_ID_KEY] = first.doc_id
    doc.user_data[SENT_IDS_KEY] = [r.sent_id for r in records]
    if not all(r.predicates_complete for r in records):
        doc.user_data[PREDICATES_COMPLETE_KEY] = False


def write_docbin(docs: Iterable[Doc], path: PathLike) -> int:
    """Write the docs, user data (the frames) included, to a ``.spacy`` file; returns
    how many were written."""
    doc_bin = DocBin(store_user_data=True)
    n = 0
    for doc in docs:
        doc_bin.add(doc)
        n += 1
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc_bin.to_disk(path)
    return n


def read_docbin(path: PathLike, vocab: Optional[Vocab] = None) -> List[Doc]:
    """The docs of a ``.spacy`` file with their user data (frames)."""
    vocab = vocab if vocab is not None else Vocab()
    return list(DocBin().from_disk(path).get_docs(vocab))


def convert_to_docbin(
    records: Iterable[SentenceRecord],
    output: PathLike,
    *,
    stats: CorpusStats,
    n_sents: int = 1,
    limit: int = 0,
    skip_invalid: bool = False,
    vocab: Optional[Vocab] = None,
) -> CorpusStats:
    """Write ``records`` (at most ``limit`` sentences, 0 = all) as Docs of ``n_sents``
    sentences to ``output`` and count them in ``stats``. A group that cannot become a
    Doc raises its :class:`CorpusFormatError`, or with ``skip_invalid`` is counted as
    skipped."""
    vocab = vocab if vocab is not None else Vocab()

    def limited() -> Iterator[SentenceRecord]:
        for i, record in enumerate(records):
            if limit and i >= limit:
                return
            yield record

    doc_bin = DocBin(store_user_data=True)
    for group in group_records(limited(), n_sents=n_sents):
        try:
            doc = records_to_doc(vocab, group)
        except CorpusFormatError as err:
            if not skip_invalid:
                raise
            stats.skip(err.reason, err.where, str(err), count=len(group))
            continue
        for record in group:
            stats.add_sentence(record)
        doc_bin.add(doc)
        stats.docs_written += 1
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc_bin.to_disk(path)
    return stats
