"""Output and user-facing errors of the commands (``predict``, ``render``,
``evaluate``, ...): writing a file atomically or UTF-8 to stdout, messages on stderr,
the exit on an error. Reading the inputs is :mod:`spacy_lisa.inputs`, loading the
pipeline :mod:`spacy_lisa.loading` (neither needs typer).
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Iterator, NoReturn, Optional, TextIO, cast

import typer

from ..errors import Errors
from ..inputs import STDIN, InputDoc, UserError
from ..loading import load_model, load_pipeline

# the commands' name for a user-facing error (the library's UserError)
CLIError = UserError


@contextmanager
def open_output(path: Optional[Path]) -> Iterator[TextIO]:
    """A UTF-8 text stream to ``path``, or stdout when ``path`` is ``None`` or ``-``.
    A file is written next to its destination and moved into place only when the
    block succeeds, so a failed or interrupted run never leaves half an output."""
    if path is None or str(path) == STDIN:
        yield from _stdout_utf8()
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = tempfile.NamedTemporaryFile(
            "w",
            encoding="utf8",
            newline="\n",
            dir=path.parent,
            prefix=f".{path.name}.",
            delete=False,
        )
    except OSError as err:
        raise UserError(Errors.E318.format(path=path, detail=err.strerror or err)) from None
    try:
        with tmp:
            yield cast(TextIO, tmp)
        os.replace(tmp.name, path)
    except BaseException:
        Path(tmp.name).unlink(missing_ok=True)
        raise


def _stdout_utf8() -> Iterator[TextIO]:
    """stdout as UTF-8 whatever the locale (JSON and CoNLL output are UTF-8 files)."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stdout (some embedding shells): use it as it is
        yield sys.stdout
        return
    stream = io.TextIOWrapper(buffer, encoding="utf8", newline="\n")
    try:
        yield stream
    finally:
        # detach, not close: closing the wrapper would close the process's stdout
        with suppress(BrokenPipeError):
            stream.detach()


def stderr(message: str) -> None:
    """Messages go to stderr: stdout carries the output."""
    typer.echo(message, err=True)


def fail(error: object) -> NoReturn:
    """How every command stops on bad input: "✘ <message>" on stderr, exit status 1."""
    stderr(f"✘ {error}")
    raise typer.Exit(1)


# InputDoc, load_model and load_pipeline live in spacy_lisa.inputs / spacy_lisa.loading;
# they are importable from here too for the commands that took them from here
__all__ = [
    "CLIError",
    "InputDoc",
    "fail",
    "load_model",
    "load_pipeline",
    "open_output",
    "stderr",
]
