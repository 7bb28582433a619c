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
escaped (Jinja2 autoescape). Stable attributes for tests and scripts: ``data-doc``,
``data-sentence``, ``data-frame``, ``data-predicate``, ``data-role-label``,
``data-start``/``data-end`` (doc token offsets), ``data-parse-source``, ``data-head``
and ``data-weight``.

Modules: :mod:`.api` (``render()``), :mod:`.doc_parts` (what is read from a Doc, checked),
:mod:`.layout` (column and arc geometry), :mod:`.colors` (role palette, heatmap scale),
:mod:`.view` (Docs to template values), :mod:`.templates` (the Jinja2 environment and
CSS); the templates and ``style.css`` are package data.
"""

from .api import HTMLMarkup, render
from .colors import DEFAULT_LABEL_COLORS

__all__ = ["DEFAULT_LABEL_COLORS", "HTMLMarkup", "render"]
