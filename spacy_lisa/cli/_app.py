"""The typer application behind the ``spacy-lisa`` console script. Command modules
register themselves on :data:`app` (or :data:`convert_app`) when imported."""

from enum import StrEnum

import typer

app = typer.Typer(
    name="spacy-lisa",
    help="Syntax-aware semantic role labelling for spaCy: convert data, evaluate, predict, render.",
    no_args_is_help=True,
    add_completion=False,
)
convert_app = typer.Typer(
    help="Convert SRL corpora (EWT, CoNLL-2012, CoNLL-2005, Universal PropBank, PropBank "
    "frame-file examples) to DocBin.",
    no_args_is_help=True,
)
app.add_typer(convert_app, name="convert")


class Engine(StrEnum):
    """``--engine`` of ``predict`` and ``serve``: this process, or Ray."""

    local = "local"
    ray = "ray"
