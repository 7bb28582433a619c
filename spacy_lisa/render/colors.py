"""Colours, as pure functions of labels and weights: the role palette (with the order
of the legend) and the label attention heatmap scale. No markup here."""

from __future__ import annotations

import hashlib
import re
from typing import Dict, Mapping, Optional, Sequence, Tuple

from ..errors import Errors

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
COLOR_RE = re.compile(r"^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,20}|(rgb|hsl)a?\([0-9.,%\s/]+\))$")
HEATMAP_RGB = (207, 34, 46)


def base_label(label: str) -> str:
    """The label whose colour ``label`` shares: ``C-X`` / ``R-X`` -> ``X`` and the
    CoNLL-2005 short forms (``A0``, ``AM-TMP``) -> the long ones, upper-cased."""
    base = label.upper()
    if base[:2] in ("C-", "R-"):
        base = base[2:]
    base = re.sub(r"^A(\d|A)$", r"ARG\1", base)
    return re.sub(r"^AM-", "ARGM-", base)


def hashed_color(label: str) -> str:
    """A stable pastel for a label without a colour of its own (md5, not hash(): the
    same label gets the same colour in every process)."""
    hue = int(hashlib.md5(label.encode("utf8")).hexdigest()[:6], 16) % 360
    return f"hsl({hue}, 75%, 82%)"


class Palette:
    """Label -> colour: user colours, then the defaults, then a stable hashed hue.
    ``C-X`` / ``R-X`` share the colour of ``X`` (drawn with a dashed / dotted outline);
    CoNLL-2005 short forms (``A0``, ``AM-TMP``) share the colour of the long ones."""

    def __init__(self, colors: Optional[Mapping[str, str]] = None) -> None:
        self.colors = dict(DEFAULT_LABEL_COLORS)
        for label, color in (colors or {}).items():
            # colours go into a style attribute: refuse anything that is not a plain colour
            # (url(...) would load a resource, ';' would inject other properties)
            if not isinstance(color, str) or not COLOR_RE.match(color.strip()):
                raise ValueError(Errors.E303.format(color=color, label=label))
            self.colors[label.upper()] = color.strip()

    def __call__(self, label: str) -> str:
        if label.upper() in self.colors:
            return self.colors[label.upper()]
        base = base_label(label)
        if base in self.colors:
            return self.colors[base]
        return hashed_color(base)


def role_classes(label: str) -> str:
    """The CSS classes of a role cell: continuation and reference roles get an outline."""
    prefix = label[:2].upper()
    if prefix == "C-":
        return "lisa-cell lisa-role lisa-role-c"
    if prefix == "R-":
        return "lisa-cell lisa-role lisa-role-r"
    return "lisa-cell lisa-role"


def label_order(label: str) -> Tuple[int, str]:
    """Sort key of the legend: core arguments, then modifiers, then anything else; a base
    label before its C-/R- variants."""
    base = base_label(label)
    if base.startswith("ARGM-"):
        group = 1
    elif base.startswith("ARG"):
        group = 0
    else:
        group = 2
    return (group, base + "~" + label)


# ----------------------------------------------------------------------- heatmap ---------
def heatmap_peak(rows: Sequence[Sequence[float]], start: int, end: int) -> float:
    """The top of the colour scale of one sentence's heatmap: the largest weight of any
    head on tokens [start, end). One scale for the whole heatmap: a head spreading its
    weight thinly looks pale next to one that focuses (a per-row scale would paint both
    dark)."""
    return max((w for row in rows for w in row[start:end]), default=0.0)


def heatmap_alpha(weight: float, peak: float) -> float:
    """The opacity of a cell: its weight relative to the peak (0 when all weights are 0)."""
    return weight / peak if peak > 0 else 0.0


def heatmap_color(weight: float, peak: float) -> str:
    """The CSS background of a heatmap cell."""
    r, g, b = HEATMAP_RGB
    return f"rgba({r}, {g}, {b}, {heatmap_alpha(weight, peak):.3f})"


__all__ = [
    "DEFAULT_LABEL_COLORS",
    "Palette",
    "base_label",
    "hashed_color",
    "heatmap_color",
    "heatmap_alpha",
    "heatmap_peak",
    "label_order",
    "role_classes",
]
