"""The Jinja2 environment of the renderer (autoescaping every value) and its CSS, both
package data read with importlib.resources.

``minify`` minifies the *template sources*, never the values put into them: each line
of a template is stripped and the lines joined, so that doc text (which may hold runs
of spaces or a newline) comes out exactly as it went in.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any, Callable, Tuple

from jinja2 import BaseLoader, Environment, StrictUndefined, Template, TemplateNotFound
from markupsafe import Markup

PACKAGE = __package__ or "spacy_lisa.render"
CSS_FILE = "style.css"


def strip_lines(text: str) -> str:
    """Minify our own template or CSS (never doc text) by joining stripped lines."""
    return "".join(line.strip() for line in text.splitlines())


def _read(name: str) -> str:
    return resources.files(PACKAGE).joinpath(name).read_text(encoding="utf8")


class PackageLoader(BaseLoader):
    """The package's ``*.html`` templates, as they are or minified."""

    def __init__(self, minify: bool) -> None:
        self.minify = minify

    def get_source(
        self, environment: Environment, template: str
    ) -> Tuple[str, None, Callable[[], bool]]:
        try:
            source = _read(template)
        except (FileNotFoundError, IsADirectoryError):
            raise TemplateNotFound(template) from None
        return (strip_lines(source) if self.minify else source), None, lambda: True


@lru_cache(maxsize=2)
def environment(minify: bool) -> Environment:
    return Environment(
        loader=PackageLoader(minify),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


@lru_cache(maxsize=2)
def css(minify: bool) -> Markup:
    """The stylesheet (every rule scoped to ``.lisa-srl``), ending with a newline unless
    minified. Markup: our own file, not to be escaped."""
    text = _read(CSS_FILE)
    return Markup(strip_lines(text) if minify else text)


def template(name: str, *, minify: bool) -> Template:
    return environment(minify).get_template(name)


def render_template(name: str, *, minify: bool, **context: Any) -> str:
    return template(name, minify=minify).render(css=css(minify), **context)


__all__ = ["css", "environment", "render_template", "strip_lines", "template"]
