"""Sentence records: what every corpus reader yields and what the DocBin writer reads.

Conventions (the same for all readers):

- Token offsets are 0-based within the sentence; spans are ``[start, end)``.
- ``heads`` are absolute 0-based indices within the sentence and the root points to
  *itself* (as in spaCy, whose conllu converter does the same, and as in
  ``doc._.srl_parse``). ``deprels`` use ``ROOT`` for UD ``root``.
- ``predicates`` is ``None`` when the sentence carries no SRL annotation at all and
  ``[]`` when it is annotated and has no predicate.
- A predicate's ``span`` is its ``V`` span (usually the token at ``index``; phrasal
  verbs such as "lighten up" span two tokens). The ``V`` span is never among the
  ``arguments``; ``C-`` (continuation) and ``R-`` (reference) arguments are separate
  spans with their own label, and nested or overlapping spans are kept as in the file.
- ``predicates_complete`` is False where only some predicates of the sentence are
  annotated (the PropBank frame-file examples annotate one): the other words are not
  known to be non-predicates, so predicate identification has no gold there. The DocBin
  writer stores it on the Doc (:func:`spacy_lisa.frames.predicates_complete`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

# gold_skel files replace every word with this placeholder
WORD_PLACEHOLDER = "[WORD]"


@dataclass
class Argument:
    """One argument span of a predicate, ``[start, end)`` within the sentence."""

    start: int
    end: int
    label: str

    def as_tuple(self) -> Tuple[int, int, str]:
        return (self.start, self.end, self.label)


@dataclass
class Predicate:
    """One predicate: the row carrying its roleset (``index``), its ``V`` span, lemma,
    roleset (``None`` where the format has none) and arguments."""

    index: int
    span: Tuple[int, int]
    lemma: Optional[str] = None
    roleset: Optional[str] = None
    arguments: List[Argument] = field(default_factory=list)

    def to_frame(self, offset: int = 0) -> Dict[str, Any]:
        """The stored frame form of :mod:`spacy_lisa.frames`, shifted by ``offset``."""
        return {
            "predicate": [self.span[0] + offset, self.span[1] + offset],
            "roleset": self.roleset,
            "lemma": self.lemma,
            "roles": [[a.start + offset, a.end + offset, a.label] for a in self.arguments],
        }


@dataclass
class SentenceRecord:
    """One sentence as read from a corpus file. Token-level lists are ``None`` when the
    format does not carry them (e.g. no trees in CoNLL-2005)."""

    words: List[str]
    spaces: List[bool]
    lemmas: Optional[List[str]] = None
    upos: Optional[List[str]] = None
    xpos: Optional[List[str]] = None
    morphs: Optional[List[str]] = None
    heads: Optional[List[int]] = None
    deprels: Optional[List[str]] = None
    predicates: Optional[List[Predicate]] = None
    doc_id: Optional[str] = None
    sent_id: Optional[str] = None
    # position of the sentence in its document (or file), counting skipped sentences,
    # so a join can line up the sentences around a skipped one
    sent_index: int = 0
    path: Optional[str] = None
    line: Optional[int] = None
    # False: only the predicates listed are annotated, not every predicate of the sentence
    predicates_complete: bool = True

    def __len__(self) -> int:
        return len(self.words)

    @property
    def has_srl(self) -> bool:
        return self.predicates is not None

    @property
    def has_words(self) -> bool:
        """False for gold_skel sentences, whose words are ``[WORD]`` placeholders."""
        return any(w != WORD_PLACEHOLDER for w in self.words)

    @property
    def where(self) -> str:
        if self.path is None:
            return self.sent_id or f"sentence {self.sent_index}"
        return self.path if self.line is None else f"{self.path}:{self.line}"

    def frames(self, offset: int = 0) -> Optional[List[Dict[str, Any]]]:
        """The stored frame dicts of the predicates (``None`` without SRL annotation)."""
        if self.predicates is None:
            return None
        return [p.to_frame(offset) for p in self.predicates]
