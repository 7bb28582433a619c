"""What the renderer reads from a Doc, checked: the Docs themselves, the parse to draw
(``doc._.srl_parse`` or the Doc's own) and the label attention weights."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, List, Mapping, Optional, Sequence, Union

from spacy.tokens import Doc, Span

from ..errors import Errors


@dataclass
class DocParse:
    """The parse drawn over a Doc: a head (itself for a root) and a label per token."""

    heads: List[int]
    deps: List[str]
    source: str  # "model" | "doc" | "gold" | "unknown" (from srl_parse) or "doc-parse"
    note: str


@dataclass
class LabelAttention:
    """One row of weights over the Doc's tokens per label head."""

    heads: List[str]
    weights: List[List[float]]


def as_docs(docs: Union[Doc, Iterable[Doc]]) -> List[Doc]:
    """A Doc or an iterable of Docs as a list; anything else (a Span too) is an error."""
    if isinstance(docs, Doc):
        return [docs]
    if isinstance(docs, Span):
        raise ValueError(Errors.E300.format(kind=type(docs).__name__))
    try:
        doc_list = list(docs)
    except TypeError:
        raise ValueError(Errors.E300.format(kind=type(docs).__name__)) from None
    for doc in doc_list:
        if not isinstance(doc, Doc):
            raise ValueError(Errors.E300.format(kind=f"an iterable holding {type(doc).__name__}"))
    return doc_list


def doc_name(doc: Doc) -> str:
    """The start of the Doc's text, to name it in error messages."""
    text = doc.text
    return text[:40] + ("..." if len(text) > 40 else "")


def parse_to_draw(doc: Doc) -> Optional[DocParse]:
    """The parse to draw: ``doc._.srl_parse`` (validated), else the Doc's own."""
    n = len(doc)
    parse = doc._.srl_parse
    if parse is not None:
        heads = parse.get("heads") if isinstance(parse, Mapping) else None
        deps = parse.get("deps") if isinstance(parse, Mapping) else None
        if deps is None:
            deps = [""] * n
        if (
            not isinstance(heads, Sequence)
            or not isinstance(deps, Sequence)
            or len(heads) != n
            or len(deps) != n
            or not all(isinstance(h, int) and 0 <= h < n for h in heads)
        ):
            raise ValueError(Errors.E301.format(doc=doc_name(doc), n=n))
        source = str(doc._.srl_parse_source) if doc._.srl_parse_source else None
        what = {
            "model": "the parse the model predicted and used",
            "doc": "the Doc's own parse, which the model was given",
            "gold": "the gold parse, which the model was given",
        }.get(source or "", "the parse the model used (its source was not recorded)")
        note = f"Dependency arcs: {what} (doc._.srl_parse, source: {source or 'unknown'})."
        return DocParse(
            [int(h) for h in heads], [str(d or "") for d in deps], source or "unknown", note
        )
    if doc.has_annotation("DEP"):
        note = (
            "Dependency arcs: the Doc's own parse (doc._.srl_parse is not set, so the parse "
            "the model used is unknown)."
        )
        return DocParse([t.head.i for t in doc], [t.dep_ for t in doc], "doc-parse", note)
    return None


def label_attention(doc: Doc) -> Optional[LabelAttention]:
    """``doc._.srl_label_attention``, validated: a name and a finite weight per token
    for each head."""
    value = doc._.srl_label_attention
    if value is None:
        return None
    n = len(doc)

    def bad(message: str) -> ValueError:
        return ValueError(Errors.E302.format(doc=doc_name(doc), message=message))

    if not isinstance(value, Mapping):
        raise bad(f"expected a dict, got {type(value).__name__}")
    heads, weights = value.get("heads"), value.get("weights")
    if not isinstance(heads, Sequence) or not isinstance(weights, Sequence):
        raise bad("'heads' and 'weights' must both be lists")
    if len(heads) != len(weights):
        raise bad(f"{len(heads)} head names but {len(weights)} weight rows")
    rows: List[List[float]] = []
    for name, row in zip(heads, weights, strict=True):
        if not isinstance(row, Sequence) or len(row) != n:
            size = len(row) if isinstance(row, Sequence) else type(row).__name__
            raise bad(f"head {name!r} has {size} weights for {n} tokens")
        try:
            floats = [float(w) for w in row]
        except (TypeError, ValueError):
            raise bad(f"head {name!r} has a weight that is not a number") from None
        if not all(math.isfinite(w) for w in floats):
            raise bad(f"head {name!r} has a NaN or infinite weight")
        rows.append(floats)
    return LabelAttention([str(h) for h in heads], rows)


__all__ = ["DocParse", "LabelAttention", "as_docs", "doc_name", "parse_to_draw", "label_attention"]
