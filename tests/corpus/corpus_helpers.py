"""Helpers for writing corpus fixtures inline."""

import re
import textwrap

from spacy_lisa.corpus.records import SentenceRecord


def tabs(text: str) -> str:
    """Dedent ``text`` and turn the runs of spaces of non-comment lines into tabs, so
    CoNLL-U fixtures can be written aligned."""
    lines = textwrap.dedent(text).strip("\n").split("\n")
    out = [line if line.startswith("#") else re.sub(r" +", "\t", line.strip()) for line in lines]
    return "\n".join(out) + "\n"


def block(text: str) -> str:
    """Dedent a whitespace-separated fixture (CoNLL-2005/2012)."""
    return textwrap.dedent(text).strip("\n") + "\n"


def frames_of(record: SentenceRecord) -> list:
    """A record's predicates as comparable tuples."""
    assert record.predicates is not None
    return [
        (p.span, p.lemma, p.roleset, sorted(a.as_tuple() for a in p.arguments))
        for p in record.predicates
    ]
