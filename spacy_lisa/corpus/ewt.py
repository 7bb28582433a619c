"""The EWT join: UD CoNLL-U trees + PropBank bracket columns, one record per sentence.

How the two line up (the data's README): PropBank document
``<genre>/00/<doc>.xml.gold_skel`` is UD document ``# newdoc id = <genre>-<doc>``;
within a document the sentences are in the same order; the PropBank tokens are the UD
syntactic words one for one, with few exceptions.

So the join goes document by document, sentence ``i`` with sentence ``i``, and accepts
a pair only when both have the same number of tokens. Everything else is reported in
the :class:`CorpusStats` and never dropped silently:

- a UD document with no PropBank file: its sentences are written *without* SRL
  annotation (``predicates is None``; e.g. the 21 dev documents PropBank lacks), noted
  as ``ud_documents_without_propbank``;
- a document whose UD and PropBank sentence counts differ: all its sentences skipped
  (``sentence_count_mismatch``), since position no longer says which goes with which;
- a sentence pair with different token counts: skipped (``token_count_mismatch``);
- a sentence that is invalid on either side (with ``on_invalid``): skipped under its
  format error's reason; an unreadable PropBank file skips its document's sentences
  (``propbank_file_invalid``);
- PropBank documents with no UD document (normal when converting one split with the
  whole PropBank folder) are only noted (``propbank_documents_not_in_ud``).

The split lists (``ewt.train.txt``/``ewt.dev.txt``) are not needed: the UD file given
decides which documents are converted.

Tokens that disagree in POS (UD XPOS vs PropBank column 4) or, for ``.gold_conll``
files, in word form are counted as notes; the UD side wins.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional

from ..errors import Errors
from ._io import CorpusFormatError, OnInvalid, PathLike
from .conll2012 import read_conll2012
from .conllu import read_conllu
from .records import SentenceRecord
from .stats import CorpusStats

PROPBANK_SUFFIXES = (".gold_skel", ".gold_conll")

# a document's sentences by position; None marks an invalid sentence (already counted)
Slots = Dict[int, Optional[SentenceRecord]]

_SENT_NUMBER = re.compile(r"-\d+$")


def propbank_doc_key(path: Path) -> str:
    """``<genre>-<doc>`` for ``.../<genre>/00/<doc>.xml.gold_skel``."""
    name = path.name
    for suffix in PROPBANK_SUFFIXES:
        name = name.removesuffix(suffix)
    return f"{path.parent.parent.name}-{name.removesuffix('.xml')}"


def conll_doc_key(doc_id: str) -> str:
    """``<genre>-<doc>`` for a CoNLL-2012 document column such as
    ``google/ewt/answers/00/<doc>.xml``; other ids are returned unchanged."""
    parts = doc_id.split("/")
    if len(parts) >= 3:
        return f"{parts[-3]}-{parts[-1].removesuffix('.xml')}"
    return doc_id


def propbank_index(propbank_dir: PathLike) -> Dict[str, Path]:
    """The PropBank files under ``propbank_dir`` by UD document id (``.gold_skel``
    preferred where a document has both kinds)."""
    root = Path(propbank_dir)
    index: Dict[str, Path] = {}
    for suffix in PROPBANK_SUFFIXES:
        for path in sorted(root.rglob(f"*{suffix}")):
            index.setdefault(propbank_doc_key(path), path)
    if not index:
        raise CorpusFormatError(
            Errors.E119.format(path=root), path=root, line=None, reason="no_propbank_files"
        )
    return index


def read_ud_documents(path: PathLike, *, on_invalid: OnInvalid = None) -> Dict[str, Slots]:
    """The UD sentences of ``path`` grouped by document (in file order), each document
    a dict of sentence position -> record (``None`` for an invalid sentence, which
    ``on_invalid`` has already counted). Documents come from ``# newdoc id``, or else
    from the ``# sent_id`` without its final ``-NNNN``."""
    documents: Dict[str, Slots] = {}
    positions: Counter = Counter()

    def collect(err: CorpusFormatError) -> None:
        if on_invalid is None:
            raise err
        on_invalid(err)
        documents.setdefault(err.doc_id or "", {})[err.sent_index or 0] = None

    for record in read_conllu(path, on_invalid=collect):
        if record.doc_id is not None:
            key, index = record.doc_id, record.sent_index
        else:
            key = _SENT_NUMBER.sub("", record.sent_id or "")
            index = positions[key]
            positions[key] += 1
        documents.setdefault(key, {})[index] = record
    return documents


def read_srl_documents(
    paths: Iterable[PathLike], *, on_invalid: OnInvalid = None, key: bool = True
) -> Dict[str, Slots]:
    """CoNLL-2012 sentences grouped by document (``conll_doc_key`` of column 0 when
    ``key``), as :func:`read_ud_documents`. A document met again in a later file
    continues after its sentences so far."""
    documents: Dict[str, Slots] = {}
    for path in paths:
        _read_srl_file(path, documents, key=key, on_invalid=on_invalid)
    return documents


def _read_srl_file(
    path: PathLike, documents: Dict[str, Slots], *, key: bool, on_invalid: OnInvalid
) -> None:
    offsets: Dict[str, int] = {}  # where this file's sentences of a document start

    def place(doc_id: Optional[str], index: int, record: Optional[SentenceRecord]) -> None:
        doc = conll_doc_key(doc_id) if key and doc_id else (doc_id or "")
        if doc not in offsets:
            offsets[doc] = max(documents[doc]) + 1 if documents.get(doc) else 0
        documents.setdefault(doc, {})[offsets[doc] + index] = record

    def collect(err: CorpusFormatError) -> None:
        if on_invalid is None:
            raise err
        on_invalid(err)
        place(err.doc_id, err.sent_index or 0, None)

    try:
        for record in read_conll2012(path, on_invalid=collect):
            place(record.doc_id, record.sent_index, record)
    except CorpusFormatError as err:
        # with on_invalid set, sentence errors never get here: this is a whole-file
        # error (empty, not UTF-8), which read_lines raises before any sentence
        if on_invalid is None:
            raise
        on_invalid(err)


def _n_valid(slots: Slots) -> int:
    return sum(1 for r in slots.values() if r is not None)


def align_sentences(
    ud: Slots, srl: Slots, *, doc: str, stats: CorpusStats
) -> Iterator[SentenceRecord]:
    """Join the sentences of one document position by position (see the module
    docstring); yields the UD records with the PropBank predicates attached."""
    n_ud, n_srl = max(ud, default=-1) + 1, max(srl, default=-1) + 1
    if n_ud != n_srl:
        stats.skip(
            "sentence_count_mismatch",
            doc,
            f"{n_ud} UD sentences but {n_srl} PropBank sentences",
            count=_n_valid(ud),
        )
        return
    for i in range(n_ud):
        tree, props = ud.get(i), srl.get(i)
        if tree is None:
            continue  # invalid UD sentence: counted when it was read
        if props is None:
            if i in srl:  # invalid PropBank sentence: counted when it was read
                continue
            stats.skip("missing_propbank_sentence", tree.where, f"{doc} sentence {i}")
            continue
        if len(tree) != len(props):
            stats.skip(
                "token_count_mismatch",
                tree.where,
                f"{tree.sent_id or doc}: {len(tree)} UD words, {len(props)} PropBank tokens "
                f"({props.where})",
            )
            continue
        if props.xpos is not None and tree.xpos is not None:
            stats.note(
                "tokens_pos_differs",
                sum(a != b for a, b in zip(tree.xpos, props.xpos, strict=True)),
            )
        if props.has_words:
            stats.note(
                "tokens_word_differs",
                sum(a != b for a, b in zip(tree.words, props.words, strict=True)),
            )
        tree.predicates = props.predicates
        yield tree


def join_ewt(
    ud_path: PathLike,
    propbank_dir: PathLike,
    *,
    stats: Optional[CorpusStats] = None,
    on_invalid: OnInvalid = None,
) -> Iterator[SentenceRecord]:
    """Join a UD CoNLL-U file with the PropBank folder (``<genre>/00/<doc>.xml.gold_skel``).
    Yields UD sentence records with ``predicates`` set (``None`` for documents without
    PropBank); skips and notes go to ``stats``. Format errors raise
    :class:`CorpusFormatError` unless ``on_invalid`` takes them."""
    stats = stats if stats is not None else CorpusStats()
    index = propbank_index(propbank_dir)
    used = set()
    for doc, ud in read_ud_documents(ud_path, on_invalid=on_invalid).items():
        path = index.get(doc)
        if path is None:
            stats.note("ud_documents_without_propbank")
            yield from (r for _, r in sorted(ud.items()) if r is not None)
            continue
        used.add(doc)
        srl = read_srl_documents([path], on_invalid=on_invalid, key=False)
        if not srl:  # the file was unreadable and on_invalid counted it
            stats.skip("propbank_file_invalid", str(path), doc, count=_n_valid(ud))
            continue
        # one PropBank file is one document, whatever its column 0 says
        merged: Slots = {}
        for slots in srl.values():
            merged.update(slots)
        yield from align_sentences(ud, merged, doc=doc, stats=stats)
    stats.note("propbank_documents_not_in_ud", len(set(index) - used))


def join_trees(
    trees_path: PathLike,
    srl_paths: List[PathLike],
    *,
    stats: Optional[CorpusStats] = None,
    on_invalid: OnInvalid = None,
) -> Iterator[SentenceRecord]:
    """Join CoNLL-2012 files with a CoNLL-U file of their trees. When every CoNLL-2012
    document (column 0, EWT paths mapped to ``<genre>-<doc>``) is a ``# newdoc id`` of
    the trees, documents are joined as in :func:`join_ewt`; otherwise the two are
    joined sentence by sentence in file order, which needs equal sentence counts.
    Only the CoNLL-2012 documents are converted; unused tree documents are noted."""
    stats = stats if stats is not None else CorpusStats()
    ud_docs = read_ud_documents(trees_path, on_invalid=on_invalid)
    srl_docs = read_srl_documents(srl_paths, on_invalid=on_invalid)
    if set(srl_docs) <= set(ud_docs):
        for doc, srl in srl_docs.items():
            yield from align_sentences(ud_docs[doc], srl, doc=doc, stats=stats)
        stats.note("tree_documents_unused", len(set(ud_docs) - set(srl_docs)))
        return
    ud_all: List[Optional[SentenceRecord]] = [
        r for slots in ud_docs.values() for _, r in sorted(slots.items())
    ]
    srl_all: List[Optional[SentenceRecord]] = [
        r for slots in srl_docs.values() for _, r in sorted(slots.items())
    ]
    if len(ud_all) != len(srl_all):
        err = CorpusFormatError(
            Errors.E120.format(path=trees_path, n_trees=len(ud_all), n_srl=len(srl_all)),
            path=trees_path,
            line=None,
            reason="sentence_count_mismatch",
        )
        if on_invalid is None:
            raise err
        stats.skip(err.reason, err.where, str(err), count=sum(r is not None for r in srl_all))
        return
    yield from align_sentences(
        dict(enumerate(ud_all)), dict(enumerate(srl_all)), doc=str(trees_path), stats=stats
    )
