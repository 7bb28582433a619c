"""Input, output and pipeline loading for ``spacy-lisa predict`` and ``render``.

Documents come as plain text (one document per line) or JSON lines (one object with a
string ``"text"`` per line), from a file or stdin, with problems reported by line number.

Inputs are read twice (a validation pass that counts, then the pass that feeds
``nlp.pipe``): a bad line stops the run *before* the model loads and before any output
is written, and the progress bar knows its total. Files are re-read from disk; stdin is
held in memory.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Callable, Iterator, List, NoReturn, Optional, TextIO, Union, cast

import spacy
import typer
from spacy.language import Language

from ..errors import Errors

STDIN = "-"
JSONL_SUFFIXES = (".jsonl", ".ndjson")
TEXT_SUFFIXES = (".txt",)


class InputFormat(StrEnum):
    auto = "auto"
    text = "text"
    jsonl = "jsonl"


@dataclass(frozen=True)
class InputDoc:
    """One document to label: its 1-based line in the input, its text and, for JSONL
    input, the line's ``"id"`` if it had one (picklable, for ``n_process > 1``)."""

    line: int
    text: str
    id: Any = None


@dataclass(frozen=True)
class InputProblem:
    """A line that is not a valid document, with the message to show."""

    line: int
    message: str


@dataclass
class InputSummary:
    """What the validation pass found."""

    format: InputFormat
    n_docs: int = 0
    blank_lines: int = 0
    problems: List[InputProblem] = field(default_factory=list)


class InputSource:
    """A file or stdin, readable as raw lines (bytes, line endings removed) any number
    of times."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.path = str(path)
        self._stdin_data: Optional[bytes] = None
        if self.path == STDIN:
            self.name = "<stdin>"
        else:
            if not Path(self.path).is_file():
                raise FileNotFoundError(Errors.E313.format(path=self.path))
            self.name = self.path

    def lines(self) -> Iterator[bytes]:
        """The input's lines; decoding is left to the caller so that a bad byte is
        reported with its line number rather than as one UnicodeDecodeError."""
        if self.path == STDIN:
            if self._stdin_data is None:
                self._stdin_data = sys.stdin.buffer.read()
            yield from _split(io.BytesIO(self._stdin_data))
        else:
            with open(self.path, "rb") as f:
                yield from _split(f)


def _split(stream: Any) -> Iterator[bytes]:
    for i, raw in enumerate(stream):
        line = raw.rstrip(b"\r\n")
        if i == 0 and line.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark
            line = line[3:]
        yield line


def detect_format(source: InputSource, requested: InputFormat) -> InputFormat:
    """``requested`` unless ``auto``: then ``.jsonl``/``.ndjson`` files are JSONL,
    ``.txt`` files text, and anything else (stdin included) is JSONL when its first
    non-blank line starts with ``{``."""
    if requested != InputFormat.auto:
        return requested
    suffix = Path(source.path).suffix.lower() if source.path != STDIN else ""
    if suffix in JSONL_SUFFIXES:
        return InputFormat.jsonl
    if suffix in TEXT_SUFFIXES:
        return InputFormat.text
    for line in source.lines():
        if line.strip():
            # "{" rather than "parses as JSON": a JSONL file with a broken first line
            # must fail on that line, not be labelled as text
            return InputFormat.jsonl if line.lstrip().startswith(b"{") else InputFormat.text
    return InputFormat.text


def parse_line(
    raw: bytes, line: int, fmt: InputFormat, name: str
) -> Union[InputDoc, InputProblem, None]:
    """One input line as a document, a problem, or ``None`` for a blank line."""
    try:
        text = raw.decode("utf8")
    except UnicodeDecodeError as err:
        return InputProblem(line, Errors.E312.format(path=name, line=line, detail=err.reason))
    if not text.strip():
        return None
    if fmt == InputFormat.text:
        return InputDoc(line, text)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        detail = f"{err.msg} at column {err.colno}"
        return InputProblem(line, Errors.E310.format(path=name, line=line, detail=detail))
    if not isinstance(obj, dict):
        problem = f"expected a JSON object, got {type(obj).__name__}"
        return InputProblem(line, Errors.E311.format(path=name, line=line, problem=problem))
    if "text" not in obj:
        problem = 'the object has no "text" field'
        return InputProblem(line, Errors.E311.format(path=name, line=line, problem=problem))
    if not isinstance(obj["text"], str):
        problem = f'"text" is {type(obj["text"]).__name__}, not a string'
        return InputProblem(line, Errors.E311.format(path=name, line=line, problem=problem))
    return InputDoc(line, obj["text"], obj.get("id"))


def iter_input(
    source: InputSource, fmt: InputFormat
) -> Iterator[Union[InputDoc, InputProblem, None]]:
    """Every line of the input parsed with :func:`parse_line`."""
    for i, raw in enumerate(source.lines(), start=1):
        yield parse_line(raw, i, fmt, source.name)


def scan_input(source: InputSource, requested: InputFormat) -> InputSummary:
    """The validation pass: the format, the number of documents, blank lines and
    problems."""
    fmt = detect_format(source, requested)
    summary = InputSummary(fmt)
    for item in iter_input(source, fmt):
        if item is None:
            summary.blank_lines += 1
        elif isinstance(item, InputProblem):
            summary.problems.append(item)
        else:
            summary.n_docs += 1
    return summary


def iter_docs(source: InputSource, fmt: InputFormat) -> Iterator[InputDoc]:
    """The valid documents of the input, in order."""
    for item in iter_input(source, fmt):
        if isinstance(item, InputDoc):
            yield item


def input_error(summary: InputSummary, *, limit: int = 5) -> str:
    """The message that stops a run on invalid lines: the first problem in full, the
    line numbers of the next few."""
    problems = summary.problems
    message = problems[0].message
    if len(problems) > 1:
        others = ", ".join(str(p.line) for p in problems[1 : limit + 1])
        more = ", ..." if len(problems) > limit + 1 else ""
        message += f"\n  {len(problems) - 1} more invalid line(s): {others}{more}"
    return message


def report_skipped(summary: InputSummary, *, echo: Callable[[str], None], limit: int = 5) -> None:
    """The end-of-run note on skipped blank and invalid lines."""
    if summary.blank_lines:
        echo(f"ℹ Skipped {summary.blank_lines} blank line(s)")
    if summary.problems:
        echo(f"⚠ Skipped {len(summary.problems)} invalid line(s) (--skip-invalid):")
        for problem in summary.problems[:limit]:
            echo(f"  {problem.message}")
        if len(summary.problems) > limit:
            echo(f"  ... and {len(summary.problems) - limit} more")


# ----------------------------------------------------------------------- output ---------
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
        raise CLIError(Errors.E318.format(path=path, detail=err.strerror or err)) from None
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


# --------------------------------------------------------------------- pipeline ---------
class CLIError(Exception):
    """A user-facing error: the command prints its message and exits with status 1."""


def load_model(model: str, gpu_id: int) -> Language:
    """Load ``model`` (on GPU ``gpu_id`` when >= 0); CLIError E316 / E317 if it cannot be."""
    if gpu_id >= 0:
        try:
            spacy.require_gpu(gpu_id)
        except Exception as err:  # thinc raises ValueError, cupy ImportError or CUDA errors
            raise CLIError(Errors.E316.format(gpu_id=gpu_id, detail=err)) from None
    try:
        return spacy.load(model)
    except (OSError, ValueError) as err:
        raise CLIError(Errors.E317.format(model=model, detail=str(err).splitlines()[0])) from None


def load_pipeline(model: str, gpu_id: int) -> Language:
    """:func:`load_model`, then check the pipeline has a ``lisa_srl`` (E314)."""
    nlp = load_model(model, gpu_id)
    if not any(nlp.get_pipe_meta(name).factory == "lisa_srl" for name in nlp.pipe_names):
        raise CLIError(Errors.E314.format(model=model, pipes=", ".join(nlp.pipe_names) or "none"))
    return nlp


def stderr(message: str) -> None:
    """Messages go to stderr: stdout carries the output."""
    typer.echo(message, err=True)


def fail(error: object) -> NoReturn:
    """How every command stops on bad input: "✘ <message>" on stderr, exit status 1."""
    stderr(f"✘ {error}")
    raise typer.Exit(1)
