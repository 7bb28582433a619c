"""Geometry, as pure functions of words, labels and heads: the pixel columns every row
of a sentence shares, and the dependency arcs drawn over them. No markup here.

Column widths are computed rather than left to the browser, so that the SVG arcs
(absolute coordinates) and the HTML rows (CSS grid) share the same columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, List, Sequence, Tuple

TOKEN_CHAR_PX = 9  # ~15px sans-serif, generous so most words fit unclipped
LABEL_CHAR_PX = 7  # ~11px labels
CELL_PAD_PX = 18
MIN_COL_PX = 34
HEAD_CHAR_PX = 7
MIN_HEAD_PX = 96
MAX_HEAD_PX = 220
ARC_LEVEL_PX = 24
ARC_TOP_PX = 26  # room above the highest arc for its label and the root marker
ARC_NUDGE_PX = 4  # arcs leave and enter a word this far off its centre
ROOT_TOP_PX = 14


def shown(text: str) -> str:
    """Visible stand-in for whitespace tokens (a newline token would break the row)."""
    if text.isspace():
        return text.replace("\n", "⏎").replace("\t", "⇥").replace(" ", "␣")
    return text


def column_widths(words: Sequence[str], labels: Iterable[Tuple[int, str]] = ()) -> List[int]:
    """The pixel width of each token column: wide enough for the word (as shown) and for
    the label of every one-token span in it (``labels``: (column, label) pairs)."""
    widths = [max(MIN_COL_PX, CELL_PAD_PX + TOKEN_CHAR_PX * len(shown(w))) for w in words]
    for k, label in labels:
        widths[k] = max(widths[k], CELL_PAD_PX + LABEL_CHAR_PX * len(label))
    return widths


def head_width(labels: Iterable[str]) -> int:
    """The width of the row-head column, which names each row: fits the longest name,
    between MIN_HEAD_PX and MAX_HEAD_PX (longer names are ellipsed)."""
    width = max([len(h) * HEAD_CHAR_PX + 14 for h in labels] + [MIN_HEAD_PX])
    return min(width, MAX_HEAD_PX)


def grid_columns(head: int, widths: Sequence[int]) -> str:
    """The value of ``grid-template-columns`` for the row head and the token columns."""
    return " ".join(f"{w}px" for w in [head, *widths])


def column_centers(widths: Sequence[int]) -> List[float]:
    """The x of each column's centre, from the left edge of the first column."""
    centers: List[float] = []
    x = 0
    for w in widths:
        centers.append(x + w / 2)
        x += w
    return centers


def arc_levels(arcs: Sequence[Tuple[int, int]]) -> List[int]:
    """displaCy's level assignment for (left, right) arcs: shorter arcs first, each one
    level above the highest arc it spans, so nested arcs never cross their labels."""
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


@dataclass
class Arc:
    """One arc of the parse drawing; ``child`` and ``head`` are doc token indices.
    ``path``/``arrow`` are SVG path data; the label sits at (label_x, label_y)."""

    child: int
    head: int
    dep: str
    path: str
    arrow: str
    label_x: str
    label_y: str
    root: bool = False


@dataclass
class ArcLayout:
    """The parse drawing of one sentence: its size, its arcs (then its roots) and the
    number of tokens whose head lies outside the sentence (not drawn)."""

    width: int
    height: int
    arcs: List[Arc] = field(default_factory=list)
    outside: int = 0


def _arrow(x: float, base: int) -> str:
    return f"M{x - 4:.1f},{base - 7} L{x + 4:.1f},{base - 7} L{x:.1f},{base} Z"


def layout_arcs(
    heads: Sequence[int],
    deps: Sequence[str],
    start: int,
    end: int,
    widths: Sequence[int],
    *,
    rtl: bool = False,
) -> ArcLayout:
    """Lay out the arcs of the sentence of doc tokens [start, end): ``heads`` and
    ``deps`` cover the whole doc (a head equal to its token marks a root), ``widths``
    are the sentence's column widths. Right-to-left mirrors the drawing."""
    pairs, roots, outside = _sentence_arcs(heads, start, end)
    levels = arc_levels([(min(child, head), max(child, head)) for child, head in pairs])
    width = sum(widths)
    height = ARC_TOP_PX + max(levels, default=0) * ARC_LEVEL_PX + 6
    base = height - 4
    xs = [width - x if rtl else x for x in column_centers(widths)]
    layout = ArcLayout(width, height, outside=outside)
    for (child, head), level in zip(pairs, levels, strict=True):
        # endpoints nudged off the centre, so arcs leaving and entering a word stay apart
        nudge = ARC_NUDGE_PX if (head > child) != rtl else -ARC_NUDGE_PX
        x_child, x_head = xs[child] + nudge, xs[head] - nudge
        apex = base - level * ARC_LEVEL_PX
        dep = deps[start + child]
        layout.arcs.append(
            _dependency_arc(start + child, start + head, dep, x_child, x_head, apex, base)
        )
    for root in roots:
        layout.arcs.append(_root_arc(start + root, deps[start + root] or "root", xs[root], base))
    return layout


def _sentence_arcs(
    heads: Sequence[int], start: int, end: int
) -> Tuple[List[Tuple[int, int]], List[int], int]:
    """The (child, head) pairs and the roots of the sentence of doc tokens [start, end),
    sentence-relative, and the number of its tokens whose head lies outside it."""
    pairs: List[Tuple[int, int]] = []
    roots: List[int] = []
    outside = 0
    for i in range(start, end):
        head = heads[i]
        if head == i:
            roots.append(i - start)
        elif start <= head < end:
            pairs.append((i - start, head - start))
        else:  # a head in another sentence (the model's window was not the sentence)
            outside += 1
    return pairs, roots, outside


def _dependency_arc(
    child: int, head: int, dep: str, x_child: float, x_head: float, apex: float, base: int
) -> Arc:
    """The arc from ``x_head`` to ``x_child`` on the ``base`` line, peaking at ``apex``,
    its arrow at the child and its label above the middle."""
    ctrl = (apex - 0.25 * base) / 0.75  # a cubic with equal control heights peaks at 3/4
    path = (
        f"M{x_child:.1f},{base} C{x_child:.1f},{ctrl:.1f} "
        f"{x_head:.1f},{ctrl:.1f} {x_head:.1f},{base}"
    )
    return Arc(
        child=child,
        head=head,
        dep=dep,
        path=path,
        arrow=_arrow(x_child, base),
        label_x=f"{(x_child + x_head) / 2:.1f}",
        label_y=f"{apex - 3:.1f}",
    )


def _root_arc(root: int, dep: str, x: float, base: int) -> Arc:
    """The root marker of token ``root``: a vertical line from the top down to ``base``
    at ``x``, labelled at the top."""
    return Arc(
        child=root,
        head=root,
        dep=dep,
        path=f"M{x:.1f},{ROOT_TOP_PX} L{x:.1f},{base}",
        arrow=_arrow(x, base),
        label_x=f"{x:.1f}",
        label_y="11",
        root=True,
    )


__all__ = [
    "Arc",
    "ArcLayout",
    "arc_levels",
    "column_centers",
    "column_widths",
    "grid_columns",
    "head_width",
    "layout_arcs",
    "shown",
]
