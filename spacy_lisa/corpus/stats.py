"""Counts of a corpus conversion: what was written, what was skipped and why.

One :class:`CorpusStats` follows a conversion: :meth:`add_sentence` for every sentence
written, :meth:`skip` (or :meth:`skip_error` for a :class:`CorpusFormatError` under
``--skip-invalid``) for every sentence or file left out, :meth:`note` for things worth
knowing that lose nothing (documents without PropBank, POS disagreements).

Argument convention (the one the EWT reference counts use): ``arguments`` counts every
argument span of every predicate, ``C-`` and ``R-`` spans each on their own and the
predicate's ``V`` span not at all. ``arguments_not_bio`` counts those of them that
overlap the predicate or an earlier argument and so cannot be BIO tagged
(:func:`spacy_lisa.decoding.bio.spans_to_bio`); ``bio_tags`` is the BIO tag set (``O`` and
``B-V``/``I-V`` included) the training data needs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple

from ..decoding.bio import spans_to_bio
from ._io import CorpusFormatError
from .records import SentenceRecord

# the skip list kept in full in the stats JSON; the console shows the first few
MAX_SKIPS_SHOWN = 20


@dataclass
class CorpusStats:
    """Running counts of a conversion (see the module docstring for the conventions)."""

    sentences: int = 0
    sentences_with_srl: int = 0
    tokens: int = 0
    predicates: int = 0
    arguments: int = 0
    arguments_not_bio: int = 0
    docs_written: int = 0
    role_label_counts: Counter = field(default_factory=Counter)
    bio_tags: Set[str] = field(default_factory=set)
    skipped_by_reason: Counter = field(default_factory=Counter)
    skipped_items: List[Dict[str, Any]] = field(default_factory=list)
    notes: Counter = field(default_factory=Counter)
    _documents: Set[Tuple[Optional[str], Optional[str]]] = field(default_factory=set)

    @property
    def documents(self) -> int:
        """Source documents with at least one sentence written."""
        return len(self._documents)

    @property
    def skipped(self) -> int:
        return sum(self.skipped_by_reason.values())

    def add_sentence(self, record: SentenceRecord) -> None:
        """Count one written sentence."""
        self.sentences += 1
        self.tokens += len(record)
        self._documents.add((record.path if record.doc_id is None else None, record.doc_id))
        if record.predicates is None:
            return
        self.sentences_with_srl += 1
        self.bio_tags.add("O")
        for predicate in record.predicates:
            self.predicates += 1
            self.arguments += len(predicate.arguments)
            self.role_label_counts.update(a.label for a in predicate.arguments)
            tags, rejected = spans_to_bio(
                len(record),
                [a.as_tuple() for a in predicate.arguments],
                predicate=predicate.span,
            )
            self.arguments_not_bio += sum(1 for span in rejected if span[2] != "V")
            self.bio_tags.update(tags)

    def skip(self, reason: str, where: str, detail: str = "", *, count: int = 1) -> None:
        """Count ``count`` sentences (or a file) left out for ``reason``."""
        self.skipped_by_reason[reason] += count
        self.skipped_items.append(
            {"reason": reason, "where": where, "detail": detail, "count": count}
        )

    def skip_error(self, err: CorpusFormatError) -> None:
        """Count the sentence (or file, for a whole-file error) a format error skipped;
        usable as the readers' ``on_invalid``."""
        self.skip(err.reason, err.where, str(err))

    def note(self, key: str, count: int = 1) -> None:
        """Count something worth reporting that drops nothing."""
        self.notes[key] += count

    def to_dict(self) -> Dict[str, Any]:
        """The numbers for ``--stats-json``."""
        return {
            "documents": self.documents,
            "sentences": self.sentences,
            "sentences_with_srl": self.sentences_with_srl,
            "sentences_without_srl": self.sentences - self.sentences_with_srl,
            "tokens": self.tokens,
            "predicates": self.predicates,
            "arguments": self.arguments,
            "arguments_not_bio": self.arguments_not_bio,
            "role_labels": len(self.role_label_counts),
            "role_label_counts": dict(self.role_label_counts.most_common()),
            "bio_tags": len(self.bio_tags),
            "docs_written": self.docs_written,
            "skipped": self.skipped,
            "skipped_by_reason": dict(self.skipped_by_reason.most_common()),
            "skipped_items": list(self.skipped_items),
            "notes": dict(self.notes),
        }

    def table_rows(self) -> List[Tuple[str, Any]]:
        """``(name, value)`` rows for the console summary."""
        rows: List[Tuple[str, Any]] = [
            ("documents", self.documents),
            ("sentences", self.sentences),
            ("  with SRL annotation", self.sentences_with_srl),
            ("  without SRL annotation", self.sentences - self.sentences_with_srl),
            ("tokens", self.tokens),
            ("predicates", self.predicates),
            ("argument spans (V excluded)", self.arguments),
            ("  not BIO-taggable (overlapping)", self.arguments_not_bio),
            ("role labels (V excluded)", len(self.role_label_counts)),
            ("BIO tags (O and V included)", len(self.bio_tags)),
            ("spaCy Docs written", self.docs_written),
            ("skipped", self.skipped),
        ]
        rows.extend(
            (f"  skipped: {reason}", n) for reason, n in self.skipped_by_reason.most_common()
        )
        rows.extend((f"note: {key}", n) for key, n in sorted(self.notes.items()))
        return rows
