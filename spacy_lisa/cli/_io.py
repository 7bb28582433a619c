"""Messages and user-facing errors of the commands: messages on stderr (stdout carries
the output), the exit on an error. Writing the output is
:func:`spacy_lisa.predict.open_output`, reading the inputs :mod:`spacy_lisa.inputs`,
loading the pipeline :mod:`spacy_lisa.loading` (none of them needs typer)."""

from __future__ import annotations

from typing import NoReturn

import typer


def stderr(message: str) -> None:
    """Messages go to stderr: stdout carries the output."""
    typer.echo(message, err=True)


def fail(error: object) -> NoReturn:
    """How every command stops on bad input: "✘ <message>" on stderr, exit status 1."""
    stderr(f"✘ {error}")
    raise typer.Exit(1)


__all__ = ["fail", "stderr"]
