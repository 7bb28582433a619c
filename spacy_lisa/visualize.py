"""Render SRL frames as standalone HTML, in the manner of spaCy's displaCy.

One figure per Doc and one grid per sentence. Every row of a grid shares the same
pixel column widths, so the rows line up token by token:

- **parse**: the dependency arcs the model used, as inline SVG: ``doc._.srl_parse`` when
  the component stored it (``doc._.srl_parse_source`` names where it came from), else the
  Doc's own parse; a note on the figure says which;
- **tokens**: the sentence, with token indices;
- one row per **frame**: the predicate highlighted (``V``), each role span coloured with
  its label; a page-level legend maps labels to colours;
- **label attention** (when ``doc._.srl_label_attention`` is set): one heatmap row per
  label head, shaded by how much that head attended to each word.

The markup loads nothing from the network: CSS is inline, there is no script, and the
page carries a Content-Security-Policy that forbids any external resource. All text is
escaped. Stable attributes for tests and scripts: ``data-doc``, ``data-sentence``,
``data-frame``, ``data-predicate``, ``data-role-label``, ``data-start``/``data-end``
(doc token offsets), ``data-parse-source``, ``data-head`` and ``data-weight``.
"""

from __future__ import annotations

import hashlib
import html
import math
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from spacy.tokens import Doc, Span

from .errors import Errors
from .formats import IndexedFrame, frames_by_sentence
from .frames import SRLFrame, doc_sentences, has_srl_annotation

# ----------------------------------------------------------------------- colours ---------
# Pastels dark text stays readable on; PropBank's core and common modifier labels.
DEFAULT_LABEL_COLORS: Dict[str, str] = {
    "ARG0": "#ffb3a7",
    "ARG1": "#9fd3f5",
    "ARG2": "#b4e7a8",
    "ARG3": "#ffe08a",
    "ARG4": "#d9b8f5",
    "ARG5": "#f6b8d8",
    "ARGA": "#cfd8dc",
    "ARGM-TMP": "#a8e6dc",
    "ARGM-LOC": "#ffcc99",
    "ARGM-MNR": "#e3e8b5",
    "ARGM-ADV": "#d6ccc2",
    "ARGM-DIS": "#e0e0e0",
    "ARGM-NEG": "#ff9aa8",
    "ARGM-MOD": "#c7d2fe",
    "ARGM-DIR": "#fbd3a5",
    "ARGM-EXT": "#d4edc9",
    "ARGM-PRP": "#f3c4fb",
    "ARGM-PNC": "#f3c4fb",
    "ARGM-CAU": "#fcb69f",
    "ARGM-PRD": "#bde0fe",
    "ARGM-REC": "#e9d5ff",
    "ARGM-ADJ": "#fde68a",
    "ARGM-GOL": "#bbf7d0",
    "ARGM-COM": "#fecdd3",
    "ARGM-LVB": "#e5e7eb",
}
_COLOR_RE = re.compile(r"^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,20}|(rgb|hsl)a?\([0-9.,%\s/]+\))$")

# --------------------------------------------------------------------- geometry ---------
# Column widths are computed here rather than left to the browser, so that the SVG arcs
# (absolute coordinates) and the HTML rows (CSS grid) share the same columns.
_TOKEN_CHAR_PX = 9  # ~15px sans-serif, generous so most words fit unclipped
_LABEL_CHAR_PX = 7  # ~11px labels
_CELL_PAD_PX = 18
_MIN_COL_PX = 34
_HEAD_CHAR_PX = 7
_MIN_HEAD_PX = 96
_MAX_HEAD_PX = 220
_ARC_LEVEL_PX = 24
_ARC_TOP_PX = 26  # room above the highest arc for its label and the root marker

_CSS = """
.lisa-srl { font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", Helvetica, Arial,
  sans-serif; color: #1f2328; line-height: 1.3; }
.lisa-srl * { box-sizing: border-box; }
.lisa-srl .lisa-legend { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: center;
  margin: 0 0 1.2rem; font-size: 12px; }
.lisa-srl .lisa-legend-title { font-weight: 700; }
.lisa-srl .lisa-legend-item { display: inline-flex; align-items: center; gap: 4px; }
.lisa-srl .lisa-swatch { display: inline-block; width: 14px; height: 14px; border-radius: 3px;
  border: 1px solid rgba(0, 0, 0, .25); }
.lisa-srl .lisa-legend-note { color: #57606a; }
.lisa-srl .lisa-doc { margin: 0 0 2.5rem; }
.lisa-srl .lisa-doc-title { font-size: 16px; margin: 0 0 .3rem; }
.lisa-srl .lisa-note { font-size: 12px; color: #57606a; margin: 0 0 .5rem; }
.lisa-srl .lisa-sentence { overflow-x: auto; margin: 0 0 1.2rem; padding: 6px 0 8px;
  border-top: 1px solid #d0d7de; }
.lisa-srl .lisa-row { display: grid; grid-template-columns: var(--lisa-cols);
  grid-auto-flow: row dense; width: max-content; }
.lisa-srl .lisa-rowhead { grid-column: 1; grid-row: 1; font-size: 12px; color: #57606a;
  padding: 6px 10px 0 0; text-align: right; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; }
.lisa-srl .lisa-cell { margin: 2px 1px; padding: 3px 2px; text-align: center;
  white-space: pre; overflow: hidden; text-overflow: ellipsis; font-size: 15px;
  border-radius: 4px; }
.lisa-srl .lisa-token { font-weight: 600; }
.lisa-srl .lisa-token-i { display: block; font-size: 10px; font-weight: 400; color: #8c959f; }
.lisa-srl .lisa-frame { border-top: 1px dashed #eaeef2; }
.lisa-srl .lisa-o { color: #8c959f; }
.lisa-srl .lisa-span-label { display: block; font-size: 11px; font-weight: 700;
  letter-spacing: .02em; color: rgba(0, 0, 0, .62); }
.lisa-srl .lisa-predicate { background: #24292f; color: #ffffff; font-weight: 700; }
.lisa-srl .lisa-predicate .lisa-span-label { color: #ffd33d; }
.lisa-srl .lisa-role-c { outline: 2px dashed rgba(0, 0, 0, .45); outline-offset: -2px; }
.lisa-srl .lisa-role-r { outline: 2px dotted rgba(0, 0, 0, .55); outline-offset: -2px; }
.lisa-srl .lisa-outside { grid-column: 2 / -1; font-size: 12px; color: #57606a;
  text-align: left; }
.lisa-srl .lisa-outside .lisa-role { display: inline-block; padding: 0 4px; margin: 0 2px;
  border-radius: 3px; }
.lisa-srl .lisa-parse-svg { grid-column: 2 / -1; display: block; overflow: visible; }
.lisa-srl .lisa-arc { fill: none; stroke: #57606a; stroke-width: 1.5px; }
.lisa-srl .lisa-arrowhead { fill: #57606a; }
.lisa-srl .lisa-dep { font-size: 10px; fill: #24292f; paint-order: stroke;
  stroke: #ffffff; stroke-width: 3px; }
.lisa-srl .lisa-attention { margin-top: 4px; }
.lisa-srl .lisa-attention-cell { margin: 1px; height: 20px; border-radius: 2px;
  border: 1px solid #eaeef2; }
"""

TPL_PAGE = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style>
</head>
<body style="margin: 24px; background: #ffffff">
{content}
</body>
</html>
"""


class HTMLMarkup(str):
    """The rendered markup: a plain ``str`` that Jupyter displays as HTML when it is
    the last expression of a cell."""

    def _repr_html_(self) -> str:
        return str(self)


def render(
    docs: Union[Doc, Iterable[Doc]],
    *,
    page: bool = True,
    minify: bool = False,
    jupyter: Optional[bool] = None,
    title: Optional[str] = None,
    colors: Optional[Mapping[str, str]] = None,
    show_parse: bool = True,
    show_attention: bool = True,
) -> str:
    """Render the SRL frames of a Doc or Docs as HTML.

    page: a standalone HTML page (with ``<head>``, the CSS and a CSP forbidding any
        network resource); ``False`` gives a ``<div>`` fragment with its own scoped
        ``<style>``, to embed in another page.
    minify: drop the indentation and newlines between tags (text is never touched).
    jupyter: display the fragment in a notebook and return ``""`` (displaCy returns
        ``None`` there); ``None`` detects whether we run in Jupyter.
    title: the page title (default: "spacy-lisa: semantic roles"); a Doc's own
        ``doc.user_data["title"]`` heads its figure, as in displaCy.
    colors: label -> CSS colour, overriding :data:`DEFAULT_LABEL_COLORS`.
    show_parse, show_attention: draw the dependency arcs / the label attention heatmap.
    """
    doc_list = _as_docs(docs)
    palette = _Palette(colors)
    in_jupyter = jupyter if jupyter is not None else _is_in_jupyter()
    writer = _Writer()
    writer.open('<div class="lisa-srl">')
    if not page or in_jupyter:
        # a fragment carries its CSS (scoped to .lisa-srl); in a notebook even page=True
        # gives the fragment, as a whole <html> page in a cell would restyle the notebook
        writer.add(f"<style>{_css(minify)}</style>")
    _legend(writer, doc_list, palette)
    for d, doc in enumerate(doc_list):
        _render_doc(writer, doc, d, palette, show_parse=show_parse, show_attention=show_attention)
    writer.close("</div>")
    if in_jupyter:
        from IPython.display import HTML, display

        display(HTML(writer.text(minify=minify)))
        return HTMLMarkup("")
    lang = doc_list[0].lang_ if doc_list and doc_list[0].lang_ else "en"
    content = writer.text(minify=minify)
    if not page:
        return HTMLMarkup(content)
    template = _strip_lines(TPL_PAGE) if minify else TPL_PAGE
    markup = template.format(
        lang=_esc(lang),
        title=_esc(title if title is not None else "spacy-lisa: semantic roles"),
        css=_css(minify),
        content=content,
    )
    return HTMLMarkup(markup)


def _strip_lines(text: str) -> str:
    """Minify our own template or CSS (never doc text) by joining stripped lines."""
    return "".join(line.strip() for line in text.splitlines())


def _css(minify: bool) -> str:
    return _strip_lines(_CSS) if minify else _CSS


def _is_in_jupyter() -> bool:
    from spacy.util import is_in_jupyter

    return bool(is_in_jupyter())


def _as_docs(docs: Union[Doc, Iterable[Doc]]) -> List[Doc]:
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


# ---------------------------------------------------------------------- markup ----------
class _Writer:
    """Collects markup one tag per line with its nesting depth, so that ``minify`` can
    join lines without touching any text (displaCy's minify strips runs of spaces,
    which would alter whitespace tokens)."""

    def __init__(self) -> None:
        self.lines: List[Tuple[int, str]] = []
        self.depth = 0

    def add(self, line: str) -> None:
        self.lines.append((self.depth, line))

    def open(self, line: str) -> None:
        self.add(line)
        self.depth += 1

    def close(self, line: str) -> None:
        self.depth -= 1
        self.add(line)

    def text(self, *, minify: bool) -> str:
        if minify:
            return "".join(line for _, line in self.lines)
        return "\n".join("  " * depth + line for depth, line in self.lines)


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _attrs(attrs: Mapping[str, Any]) -> str:
    """``key="value"`` pairs, escaped; ``None`` values are left out."""
    return "".join(f' {key}="{_esc(value)}"' for key, value in attrs.items() if value is not None)


def _shown(text: str) -> str:
    """Visible stand-in for whitespace tokens (a newline token would break the row)."""
    if text.isspace():
        return text.replace("\n", "⏎").replace("\t", "⇥").replace(" ", "␣")
    return text


def _doc_name(doc: Doc) -> str:
    text = doc.text
    return text[:40] + ("..." if len(text) > 40 else "")


# ---------------------------------------------------------------------- colours ---------
class _Palette:
    """Label -> colour: user colours, then the defaults, then a stable hashed hue.
    ``C-X`` / ``R-X`` share the colour of ``X`` (drawn with a dashed / dotted outline);
    CoNLL-2005 short forms (``A0``, ``AM-TMP``) share the colour of the long ones."""

    def __init__(self, colors: Optional[Mapping[str, str]]) -> None:
        self.colors = dict(DEFAULT_LABEL_COLORS)
        for label, color in (colors or {}).items():
            # colours go into a style attribute: refuse anything that is not a plain colour
            # (url(...) would load a resource, ';' would inject other properties)
            if not isinstance(color, str) or not _COLOR_RE.match(color.strip()):
                raise ValueError(Errors.E303.format(color=color, label=label))
            self.colors[label.upper()] = color.strip()

    @staticmethod
    def base(label: str) -> str:
        base = label.upper()
        if base[:2] in ("C-", "R-"):
            base = base[2:]
        base = re.sub(r"^A(\d|A)$", r"ARG\1", base)
        return re.sub(r"^AM-", "ARGM-", base)

    def __call__(self, label: str) -> str:
        if label.upper() in self.colors:
            return self.colors[label.upper()]
        base = self.base(label)
        if base in self.colors:
            return self.colors[base]
        # md5, not hash(): the same label gets the same colour in every process
        hue = int(hashlib.md5(base.encode("utf8")).hexdigest()[:6], 16) % 360
        return f"hsl({hue}, 75%, 82%)"


def _role_classes(label: str) -> str:
    prefix = label[:2].upper()
    if prefix == "C-":
        return "lisa-cell lisa-role lisa-role-c"
    if prefix == "R-":
        return "lisa-cell lisa-role lisa-role-r"
    return "lisa-cell lisa-role"


def _label_order(label: str) -> Tuple[int, str]:
    base = _Palette.base(label)
    if base.startswith("ARGM-"):
        group = 1
    elif base.startswith("ARG"):
        group = 0
    else:
        group = 2
    return (group, base + "~" + label)  # the base label before its C-/R- variants


def _legend(writer: _Writer, docs: Sequence[Doc], palette: _Palette) -> None:
    labels = sorted(
        {r.label_ for doc in docs for f in doc._.srl_frames for r in f.roles}, key=_label_order
    )
    writer.open('<div class="lisa-legend">')
    writer.add('<span class="lisa-legend-title">Roles</span>')
    writer.add(
        '<span class="lisa-legend-item" data-role-label="V"><span class="lisa-swatch" '
        'style="background: #24292f"></span>V (predicate)</span>'
    )
    for label in labels:
        writer.add(
            f'<span class="lisa-legend-item"{_attrs({"data-role-label": label})}>'
            f'<span class="lisa-swatch" style="background: {_esc(palette(label))}"></span>'
            f"{_esc(label)}</span>"
        )
    if any(label[:2].upper() in ("C-", "R-") for label in labels):
        writer.add(
            '<span class="lisa-legend-note">C-X: continuation of X (dashed), '
            "R-X: reference to X (dotted)</span>"
        )
    writer.close("</div>")


# ------------------------------------------------------------------------ parse ---------
@dataclass
class _Parse:
    heads: List[int]
    deps: List[str]
    source: str  # "model" | "doc" | "gold" | "unknown" (from srl_parse) or "doc-parse"
    note: str


def _doc_parse(doc: Doc) -> Optional[_Parse]:
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
            raise ValueError(Errors.E301.format(doc=_doc_name(doc), n=n))
        source = doc._.srl_parse_source
        what = {
            "model": "the parse the model predicted and used",
            "doc": "the Doc's own parse, which the model was given",
            "gold": "the gold parse, which the model was given",
        }.get(source or "", "the parse the model used (its source was not recorded)")
        note = f"Dependency arcs: {what} (doc._.srl_parse, source: {source or 'unknown'})."
        return _Parse(
            [int(h) for h in heads], [str(d or "") for d in deps], source or "unknown", note
        )
    if doc.has_annotation("DEP"):
        note = (
            "Dependency arcs: the Doc's own parse (doc._.srl_parse is not set, so the parse "
            "the model used is unknown)."
        )
        return _Parse([t.head.i for t in doc], [t.dep_ for t in doc], "doc-parse", note)
    return None


def _arc_levels(arcs: Sequence[Tuple[int, int]]) -> List[int]:
    """displaCy's level assignment: shorter arcs first, each one level above the
    highest arc it spans, so nested arcs never cross their labels."""
    levels = [0] * len(arcs)
    if not arcs:
        return levels
    max_level = [0] * (max(e for _, e in arcs) + 1)
    for k in sorted(range(len(arcs)), key=lambda k: arcs[k][1] - arcs[k][0]):
        start, end = arcs[k]
        level = max(max_level[start:end]) + 1
        for i in range(start, end):
            max_level[i] = level
        levels[k] = level
    return levels


def _parse_svg(
    writer: _Writer, sent: Span, parse: _Parse, centers: List[float], width: int, rtl: bool
) -> None:
    arcs: List[Tuple[int, int]] = []
    pairs: List[Tuple[int, int]] = []  # (child, head), sentence-relative
    roots: List[int] = []
    outside = 0
    for i in range(sent.start, sent.end):
        head = parse.heads[i]
        if head == i:
            roots.append(i - sent.start)
        elif sent.start <= head < sent.end:
            child, h = i - sent.start, head - sent.start
            pairs.append((child, h))
            arcs.append((min(child, h), max(child, h)))
        else:  # a head in another sentence (the model's window was not the sentence)
            outside += 1
    levels = _arc_levels(arcs)
    top = max(levels, default=0)
    height = _ARC_TOP_PX + top * _ARC_LEVEL_PX + 6
    base = height - 4

    def x(i: int) -> float:
        return width - centers[i] if rtl else centers[i]

    svg_attrs = {
        "class": "lisa-parse-svg",
        "xmlns": "http://www.w3.org/2000/svg",
        "width": width,
        "height": height,
        "viewBox": f"0 0 {width} {height}",
        "data-parse-source": parse.source,
        "data-arcs-outside": outside,
        "role": "img",
        "aria-label": "dependency parse",
    }
    writer.open(f"<svg{_attrs(svg_attrs)}>")
    for (child, head), level in zip(pairs, levels, strict=True):
        # endpoints nudged off the centre, so arcs leaving and entering a word stay apart
        nudge = 4 if head > child else -4
        x_child = x(child) + (nudge if not rtl else -nudge)
        x_head = x(head) - (nudge if not rtl else -nudge)
        apex = base - level * _ARC_LEVEL_PX
        ctrl = (apex - 0.25 * base) / 0.75  # a cubic with equal control heights peaks at 3/4
        d = (
            f"M{x_child:.1f},{base} C{x_child:.1f},{ctrl:.1f} "
            f"{x_head:.1f},{ctrl:.1f} {x_head:.1f},{base}"
        )
        arrow = (
            f"M{x_child - 4:.1f},{base - 7} L{x_child + 4:.1f},{base - 7} L{x_child:.1f},{base} Z"
        )
        label = parse.deps[sent.start + child]
        g_attrs = {
            "class": "lisa-arc-group",
            "data-child": sent.start + child,
            "data-head": sent.start + head,
            "data-dep": label,
        }
        writer.open(f"<g{_attrs(g_attrs)}>")
        writer.add(f'<path class="lisa-arc" d="{d}"/>')
        writer.add(f'<path class="lisa-arrowhead" d="{arrow}"/>')
        if label:
            mid = (x_child + x_head) / 2
            writer.add(
                f'<text class="lisa-dep" x="{mid:.1f}" y="{apex - 3:.1f}" '
                f'text-anchor="middle">{_esc(label)}</text>'
            )
        writer.close("</g>")
    for root in roots:
        label = parse.deps[sent.start + root] or "root"
        xr = x(root)
        root_attrs = {
            "class": "lisa-arc-group lisa-root",
            "data-child": sent.start + root,
            "data-head": sent.start + root,
            "data-dep": label,
        }
        writer.open(f"<g{_attrs(root_attrs)}>")
        writer.add(f'<path class="lisa-arc" d="M{xr:.1f},14 L{xr:.1f},{base}"/>')
        writer.add(
            f'<path class="lisa-arrowhead" d="M{xr - 4:.1f},{base - 7} L{xr + 4:.1f},{base - 7} '
            f'L{xr:.1f},{base} Z"/>'
        )
        writer.add(
            f'<text class="lisa-dep" x="{xr:.1f}" y="11" text-anchor="middle">{_esc(label)}</text>'
        )
        writer.close("</g>")
    writer.close("</svg>")


# --------------------------------------------------------------- label attention --------
def _label_attention(doc: Doc) -> Optional[Tuple[List[str], List[List[float]]]]:
    value = doc._.srl_label_attention
    if value is None:
        return None
    n = len(doc)

    def bad(message: str) -> ValueError:
        return ValueError(Errors.E302.format(doc=_doc_name(doc), message=message))

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
    return [str(h) for h in heads], rows


def _attention_rows(
    writer: _Writer, sent: Span, attention: Tuple[List[str], List[List[float]]]
) -> None:
    names, rows = attention
    # one colour scale for the sentence's whole heatmap: a head spreading its weight
    # thinly looks pale next to one that focuses (a per-row scale would paint both dark)
    peak = max((w for row in rows for w in row[sent.start : sent.end]), default=0.0)
    writer.open('<div class="lisa-attention">')
    writer.open('<div class="lisa-row">')
    writer.add('<div class="lisa-rowhead"><b>label attention</b></div>')
    writer.close("</div>")
    for name, row in zip(names, rows, strict=True):
        weights = row[sent.start : sent.end]
        writer.open(f'<div class="lisa-row lisa-attention-row"{_attrs({"data-head": name})}>')
        writer.add(f'<div class="lisa-rowhead"{_attrs({"title": name})}>{_esc(name)}</div>')
        for k, weight in enumerate(weights):
            i = sent.start + k
            alpha = weight / peak if peak > 0 else 0.0
            cell = {
                "class": "lisa-cell lisa-attention-cell",
                "data-i": i,
                "data-weight": f"{weight:.4g}",
                "title": f"{name} → {sent.doc[i].text}: {weight:.3f}",
                "style": f"grid-column: {k + 2} / {k + 3}; "
                f"background: rgba(207, 34, 46, {alpha:.3f})",
            }
            writer.add(f"<div{_attrs(cell)}></div>")
        writer.close("</div>")
    writer.close("</div>")


# ------------------------------------------------------------------------ frames --------
def _frame_label(frame: SRLFrame) -> str:
    return frame.roleset or frame.lemma or frame.predicate.text


def _column_widths(sent: Span, frames: Sequence[IndexedFrame]) -> List[int]:
    widths = [max(_MIN_COL_PX, _CELL_PAD_PX + _TOKEN_CHAR_PX * len(_shown(t.text))) for t in sent]
    # a one-token span must also fit its label under the word
    for _, frame in frames:
        for span, label in [(frame.predicate, "V")] + [(r, r.label_) for r in frame.roles]:
            if len(span) == 1 and sent.start <= span.start < sent.end:
                k = span.start - sent.start
                widths[k] = max(widths[k], _CELL_PAD_PX + _LABEL_CHAR_PX * len(label))
    return widths


def _span_cell(
    writer: _Writer,
    sent: Span,
    start: int,
    end: int,
    *,
    classes: str,
    label: str,
    attrs: Mapping[str, Any],
    style: str = "",
) -> None:
    """One cell covering doc tokens [start, end) clipped to the sentence."""
    a, b = max(start, sent.start), min(end, sent.end)
    text = " ".join(_shown(t.text) for t in sent.doc[a:b])
    cell = {"class": classes, **attrs}
    cell["style"] = f"grid-column: {a - sent.start + 2} / {b - sent.start + 2}" + (
        f"; {style}" if style else ""
    )
    if (a, b) != (start, end):
        cell["data-clipped"] = "true"
    cell["title"] = f"{label}: {sent.doc[start:end].text}"
    writer.add(
        f'<div{_attrs(cell)}>{_esc(text)}<span class="lisa-span-label">{_esc(label)}</span></div>'
    )


def _frame_row(writer: _Writer, sent: Span, index: int, frame: SRLFrame, palette: _Palette) -> None:
    pred = frame.predicate
    row = {
        "class": "lisa-row lisa-frame",
        "data-frame": index,
        "data-predicate": pred.text,
        "data-predicate-start": pred.start,
        "data-predicate-end": pred.end,
        "data-roleset": frame.roleset,
        "data-lemma": frame.lemma,
    }
    writer.open(f"<div{_attrs(row)}>")
    head = _frame_label(frame)
    writer.add(f'<div class="lisa-rowhead"{_attrs({"title": head})}>{_esc(head)}</div>')
    covered = set(range(pred.start, pred.end))
    _span_cell(
        writer,
        sent,
        pred.start,
        pred.end,
        classes="lisa-cell lisa-predicate",
        label="V",  # the roleset heads the row
        attrs={"data-predicate": pred.text, "data-start": pred.start, "data-end": pred.end},
    )
    outside: List[Tuple[int, Span]] = []
    for r, role in enumerate(frame.roles):
        if role.end <= sent.start or role.start >= sent.end:
            outside.append((r, role))
            continue
        covered.update(range(role.start, role.end))
        _span_cell(
            writer,
            sent,
            role.start,
            role.end,
            classes=_role_classes(role.label_),
            label=role.label_,
            attrs={
                "data-role": r,
                "data-role-label": role.label_,
                "data-start": role.start,
                "data-end": role.end,
            },
            style=f"background: {palette(role.label_)}",
        )
    for i in range(sent.start, sent.end):
        if i not in covered:
            cell = {
                "class": "lisa-cell lisa-o",
                "data-i": i,
                "style": f"grid-column: {i - sent.start + 2} / {i - sent.start + 3}",
            }
            writer.add(f"<div{_attrs(cell)}>{_esc(_shown(sent.doc[i].text))}</div>")
    if outside:
        # roles beyond the sentence (a model window that was not the sentence): listed,
        # so that no role of a frame is missing from the page
        writer.open('<div class="lisa-cell lisa-outside">')
        writer.add("outside this sentence:")
        for r, role in outside:
            attrs = {
                "class": "lisa-role lisa-role-outside",
                "data-role": r,
                "data-role-label": role.label_,
                "data-start": role.start,
                "data-end": role.end,
                "style": f"background: {palette(role.label_)}",
            }
            writer.add(f"<span{_attrs(attrs)}>{_esc(role.label_)}: {_esc(role.text)}</span>")
        writer.close("</div>")
    writer.close("</div>")


# ------------------------------------------------------------------------- docs ---------
def _render_doc(
    writer: _Writer, doc: Doc, d: int, palette: _Palette, *, show_parse: bool, show_attention: bool
) -> None:
    parse = _doc_parse(doc) if show_parse else None
    attention = _label_attention(doc) if show_attention else None
    rtl = doc.vocab.writing_system.get("direction") == "rtl"
    fig = {
        "class": "lisa-doc",
        "data-doc": d,
        "data-parse-source": parse.source if parse else None,
        "data-frames": len(doc._.srl_frames),
        "dir": "rtl" if rtl else None,
    }
    writer.open(f"<figure{_attrs(fig)}>")
    title = doc.user_data.get("title")
    if title:
        writer.add(f'<h2 class="lisa-doc-title">{_esc(title)}</h2>')
    if show_parse:
        note = (
            parse.note
            if parse
            else ("No dependency arcs: the doc has no doc._.srl_parse and no parse of its own.")
        )
        # dir="ltr": the note is English even in a right-to-left doc
        writer.add(f'<p class="lisa-note lisa-parse-note" dir="ltr">{_esc(note)}</p>')
    if not has_srl_annotation(doc):
        writer.add(
            '<p class="lisa-note">This doc carries no SRL annotation '
            "(doc._.srl_frames was never set).</p>"
        )
    sentences = frames_by_sentence(doc)
    if not sentences:
        writer.add('<p class="lisa-note">Empty document.</p>')
    for s, (sent, frames) in enumerate(sentences):
        widths = _column_widths(sent, frames)
        parse_head = f"parse · {parse.source}" if parse is not None else ""
        head_labels = [_frame_label(f) for _, f in frames] + (attention[0] if attention else [])
        head_labels.append(parse_head)
        head_px = max([len(h) * _HEAD_CHAR_PX + 14 for h in head_labels] + [_MIN_HEAD_PX])
        head_px = min(head_px, _MAX_HEAD_PX)
        cols = " ".join(f"{w}px" for w in [head_px] + widths)
        attrs = {
            "class": "lisa-sentence",
            "data-doc": d,
            "data-sentence": s,
            "data-start": sent.start,
            "data-end": sent.end,
            "style": f"--lisa-cols: {cols}",
        }
        writer.open(f"<section{_attrs(attrs)}>")
        if parse is not None:
            centers, x = [], 0
            for w in widths:
                centers.append(x + w / 2)
                x += w
            writer.open('<div class="lisa-row lisa-parse">')
            writer.add(f'<div class="lisa-rowhead">{_esc(parse_head)}</div>')
            _parse_svg(writer, sent, parse, centers, sum(widths), rtl)
            writer.close("</div>")
        writer.open('<div class="lisa-row lisa-tokens">')
        writer.add(f'<div class="lisa-rowhead">sentence {s + 1}</div>')
        for k, token in enumerate(sent):
            cell = {
                "class": "lisa-cell lisa-token",
                "data-i": token.i,
                "style": f"grid-column: {k + 2} / {k + 3}",
            }
            writer.add(
                f"<div{_attrs(cell)}>{_esc(_shown(token.text))}"
                f'<span class="lisa-token-i">{token.i}</span></div>'
            )
        writer.close("</div>")
        for index, frame in frames:
            _frame_row(writer, sent, index, frame, palette)
        if not frames and has_srl_annotation(doc):
            writer.add('<p class="lisa-note">No predicates in this sentence.</p>')
        if attention is not None:
            _attention_rows(writer, sent, attention)
        writer.close("</section>")
    writer.close("</figure>")


__all__ = ["DEFAULT_LABEL_COLORS", "HTMLMarkup", "render", "doc_sentences"]
