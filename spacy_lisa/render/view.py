"""From Docs to what the templates show: plain values (text, numbers, colours), no
markup and no escaping (the templates autoescape). Grid columns are 1-based CSS grid
lines: column 1 is the row head, token k of a sentence spans lines k + 2 to k + 3."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from spacy.tokens import Doc, Span

from ..formats import IndexedFrame, frames_by_sentence
from ..frames import SRLFrame, has_srl_annotation
from .colors import Palette, heatmap_color, heatmap_peak, label_order, role_classes
from .doc_parts import DocParse, LabelAttention, label_attention, parse_to_draw
from .layout import ArcLayout, column_widths, grid_columns, head_width, layout_arcs, shown

NO_PARSE_NOTE = "No dependency arcs: the doc has no doc._.srl_parse and no parse of its own."


@dataclass
class LegendItem:
    label: str
    color: str


@dataclass
class Legend:
    items: List[LegendItem]
    has_c_or_r: bool  # explain the C-/R- outlines


@dataclass
class TokenCell:
    i: int  # doc token index
    first: int  # grid lines
    last: int
    text: str


@dataclass
class SpanCell:
    """The predicate or a role, over its tokens clipped to the sentence."""

    classes: str
    data: Dict[str, Any]  # data-* attributes, in order
    first: int
    last: int
    background: str  # "" for the predicate (its colour is in the CSS)
    clipped: bool
    title: str
    text: str
    label: str


@dataclass
class OutsideRole:
    index: int
    label: str
    start: int
    end: int
    background: str
    text: str


@dataclass
class FrameRow:
    index: int
    predicate: str
    start: int
    end: int
    roleset: Optional[str]
    lemma: Optional[str]
    head: str
    spans: List[SpanCell] = field(default_factory=list)
    others: List[TokenCell] = field(default_factory=list)
    outside: List[OutsideRole] = field(default_factory=list)


@dataclass
class HeatmapCell:
    i: int
    first: int
    last: int
    weight: str
    title: str
    color: str


@dataclass
class HeatmapRow:
    head: str
    cells: List[HeatmapCell]


@dataclass
class Section:
    """One sentence: a grid whose rows share its columns."""

    index: int
    start: int
    end: int
    columns: str
    parse_head: str
    parse_source: Optional[str]
    arcs: Optional[ArcLayout]
    tokens: List[TokenCell]
    frames: List[FrameRow]
    no_predicates: bool
    attention: Optional[List[HeatmapRow]]


@dataclass
class Figure:
    """One doc."""

    index: int
    parse_source: Optional[str]
    n_frames: int
    rtl: bool
    title: Optional[str]
    parse_note: Optional[str]
    annotated: bool
    sections: List[Section]


def frame_label(frame: SRLFrame) -> str:
    """What heads a frame's row: its roleset, else its lemma, else the predicate."""
    return frame.roleset or frame.lemma or frame.predicate.text


def legend(docs: Sequence[Doc], palette: Palette) -> Legend:
    labels = sorted(
        {r.label_ for doc in docs for f in doc._.srl_frames for r in f.roles}, key=label_order
    )
    return Legend(
        [LegendItem(label, palette(label)) for label in labels],
        any(label[:2].upper() in ("C-", "R-") for label in labels),
    )


def _span_cell(
    sent: Span,
    span: Span,
    *,
    classes: str,
    label: str,
    data: Dict[str, Any],
    background: str = "",
) -> SpanCell:
    """One cell covering the doc tokens of ``span`` clipped to the sentence."""
    a, b = max(span.start, sent.start), min(span.end, sent.end)
    return SpanCell(
        classes=classes,
        data=data,
        first=a - sent.start + 2,
        last=b - sent.start + 2,
        background=background,
        clipped=(a, b) != (span.start, span.end),
        title=f"{label}: {span.text}",
        text=" ".join(shown(t.text) for t in sent.doc[a:b]),
        label=label,
    )


def frame_row(sent: Span, index: int, frame: SRLFrame, palette: Palette) -> FrameRow:
    pred = frame.predicate
    row = FrameRow(
        index, pred.text, pred.start, pred.end, frame.roleset, frame.lemma, frame_label(frame)
    )
    row.spans.append(
        _span_cell(
            sent,
            pred,
            classes="lisa-cell lisa-predicate",
            label="V",  # the roleset heads the row
            data={"data-predicate": pred.text, "data-start": pred.start, "data-end": pred.end},
        )
    )
    covered: Set[int] = set(range(pred.start, pred.end))
    for r, role in enumerate(frame.roles):
        if role.end <= sent.start or role.start >= sent.end:
            # beyond the sentence (a model window that was not the sentence): listed, so
            # that no role of a frame is missing from the page
            row.outside.append(
                OutsideRole(r, role.label_, role.start, role.end, palette(role.label_), role.text)
            )
            continue
        covered.update(range(role.start, role.end))
        data = {
            "data-role": r,
            "data-role-label": role.label_,
            "data-start": role.start,
            "data-end": role.end,
        }
        row.spans.append(
            _span_cell(
                sent,
                role,
                classes=role_classes(role.label_),
                label=role.label_,
                data=data,
                background=palette(role.label_),
            )
        )
    for i in range(sent.start, sent.end):
        if i not in covered:
            k = i - sent.start
            row.others.append(TokenCell(i, k + 2, k + 3, shown(sent.doc[i].text)))
    return row


def heatmap_rows(sent: Span, attention: LabelAttention) -> List[HeatmapRow]:
    peak = heatmap_peak(attention.weights, sent.start, sent.end)
    rows = []
    for name, weights in zip(attention.heads, attention.weights, strict=True):
        cells = []
        for k, weight in enumerate(weights[sent.start : sent.end]):
            i = sent.start + k
            title = f"{name} → {sent.doc[i].text}: {weight:.3f}"
            cells.append(
                HeatmapCell(i, k + 2, k + 3, f"{weight:.4g}", title, heatmap_color(weight, peak))
            )
        rows.append(HeatmapRow(name, cells))
    return rows


def _one_token_labels(sent: Span, frames: Sequence[IndexedFrame]) -> List[Tuple[int, str]]:
    """(column, label) of every one-token span: its column must fit the label too."""
    labels = []
    for _, frame in frames:
        for span, label in [(frame.predicate, "V")] + [(r, r.label_) for r in frame.roles]:
            if len(span) == 1 and sent.start <= span.start < sent.end:
                labels.append((span.start - sent.start, label))
    return labels


def section(
    sent: Span,
    s: int,
    frames: Sequence[IndexedFrame],
    palette: Palette,
    *,
    parse: Optional[DocParse],
    attention: Optional[LabelAttention],
    annotated: bool,
    rtl: bool,
) -> Section:
    widths = column_widths([t.text for t in sent], _one_token_labels(sent, frames))
    parse_head = f"parse · {parse.source}" if parse is not None else ""
    head_labels = [frame_label(f) for _, f in frames] + (attention.heads if attention else [])
    columns = grid_columns(head_width([*head_labels, parse_head]), widths)
    arcs = None
    if parse is not None:
        arcs = layout_arcs(parse.heads, parse.deps, sent.start, sent.end, widths, rtl=rtl)
    return Section(
        index=s,
        start=sent.start,
        end=sent.end,
        columns=columns,
        parse_head=parse_head,
        parse_source=parse.source if parse is not None else None,
        arcs=arcs,
        tokens=[TokenCell(t.i, k + 2, k + 3, shown(t.text)) for k, t in enumerate(sent)],
        frames=[frame_row(sent, index, frame, palette) for index, frame in frames],
        no_predicates=not frames and annotated,
        attention=heatmap_rows(sent, attention) if attention is not None else None,
    )


def figure(doc: Doc, d: int, palette: Palette, *, show_parse: bool, show_attention: bool) -> Figure:
    parse = parse_to_draw(doc) if show_parse else None
    attention = label_attention(doc) if show_attention else None
    rtl = doc.vocab.writing_system.get("direction") == "rtl"
    annotated = has_srl_annotation(doc)
    note = None
    if show_parse:
        note = parse.note if parse is not None else NO_PARSE_NOTE
    sections = [
        section(
            sent, s, frames, palette, parse=parse, attention=attention, annotated=annotated, rtl=rtl
        )
        for s, (sent, frames) in enumerate(frames_by_sentence(doc))
    ]
    return Figure(
        index=d,
        parse_source=parse.source if parse is not None else None,
        n_frames=len(doc._.srl_frames),
        rtl=rtl,
        # str(): a Markup (or any object with __html__) would pass autoescape unescaped
        title=str(doc.user_data["title"]) if doc.user_data.get("title") else None,
        parse_note=note,
        annotated=annotated,
        sections=sections,
    )


__all__ = ["Figure", "Legend", "Section", "FrameRow", "figure", "frame_label", "legend"]
