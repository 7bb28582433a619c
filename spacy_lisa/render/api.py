"""``render()``: the SRL frames of Docs as standalone HTML or a fragment to embed."""

from __future__ import annotations

from typing import Iterable, Mapping, Optional, Union

from spacy.tokens import Doc

from .colors import Palette
from .doc_parts import as_docs
from .templates import render_template
from .view import figure, legend

DEFAULT_TITLE = "spacy-lisa: semantic roles"


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
    doc_list = as_docs(docs)
    palette = Palette(colors)
    in_jupyter = jupyter if jupyter is not None else _is_in_jupyter()
    context = {
        "legend": legend(doc_list, palette),
        "figures": [
            figure(doc, d, palette, show_parse=show_parse, show_attention=show_attention)
            for d, doc in enumerate(doc_list)
        ],
    }
    if not page or in_jupyter:
        # a fragment carries its CSS (scoped to .lisa-srl); in a notebook even page=True
        # gives the fragment, as a whole <html> page in a cell would restyle the notebook
        fragment = render_template("fragment.html", minify=minify, inline_css=True, **context)
        fragment = fragment.removesuffix("\n")  # the template's own last newline
        if in_jupyter:
            from IPython.display import HTML, display

            display(HTML(fragment))
            return HTMLMarkup("")
        return HTMLMarkup(fragment)
    lang = doc_list[0].lang_ if doc_list and doc_list[0].lang_ else "en"
    markup = render_template(
        "page.html",
        minify=minify,
        inline_css=False,
        lang=lang,
        # str(): a Markup title (with __html__) would pass autoescape unescaped
        title=str(title) if title is not None else DEFAULT_TITLE,
        **context,
    )
    return HTMLMarkup(markup)


def _is_in_jupyter() -> bool:
    from spacy.util import is_in_jupyter

    return bool(is_in_jupyter())


__all__ = ["DEFAULT_TITLE", "HTMLMarkup", "render"]
