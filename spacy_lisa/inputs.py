"""Documents to label: one per line of a text file, one per JSON line (``{"text": ...,
"id": ...}``) or one per Parquet row, with the rules every reader follows (``spacy-lisa
predict``, ``render``, the Ray engine), so that each counts the same input the same way:

- a blank line (text or JSONL) is skipped and counted as ``blank``;
- a document whose text is empty or only white space (a JSONL ``"text": ""``, a
  Parquet row with an empty ``text``) is skipped and counted as ``empty_text``;
- a line that is not a document (not UTF-8, bad JSON, no string ``"text"``) is a
  problem that stops the run with its file and line, or, with ``--skip-invalid``, is
  skipped and counted by its reason.

Line endings and a UTF-8 byte order mark on the first line are removed here, once.
"""

from __future__ import annotations

import io
import json
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import Errors

STDIN = "-"
JSONL_SUFFIXES = (".jsonl", ".ndjson")
TEXT_SUFFIXES = (".txt",)
BOM = b"\xef\xbb\xbf"

BLANK = "blank"
EMPTY_TEXT = "empty_text"
NOT_UTF8 = "not_utf8"
INVALID_JSON = "invalid_json"
BAD_OBJECT = "bad_object"
# the reasons a line is skipped, in the order they are reported; the last three are
# invalid lines (skipped only with --skip-invalid)
SKIP_REASONS = (BLANK, EMPTY_TEXT, NOT_UTF8, INVALID_JSON, BAD_OBJECT)
INVALID_REASONS = (NOT_UTF8, INVALID_JSON, BAD_OBJECT)
REASON_NAMES = {NOT_UTF8: "not UTF-8", INVALID_JSON: "invalid JSON", BAD_OBJECT: 'no string "text"'}


class UserError(Exception):
    """A user-facing error: its message says what is wrong and what to do (the command
    line prints it and exits with status 1)."""


class InputFormat(StrEnum):
    auto = "auto"
    text = "text"
    jsonl = "jsonl"


@dataclass(frozen=True)
class InputDoc:
    """One document to label: its 1-based line (Parquet: row) in the input, its text
    and the input's ``"id"`` if it had one (picklable, for ``n_process > 1``)."""

    line: int
    text: str
    id: Any = None


@dataclass(frozen=True)
class InputSkip:
    """A line that holds no document and is no error: ``blank`` or ``empty_text``."""

    line: int
    reason: str


@dataclass(frozen=True)
class InputProblem:
    """A line that is not a valid document: the message to show and its skip reason."""

    line: int
    message: str
    reason: str = BAD_OBJECT


InputItem = Union[InputDoc, InputSkip, InputProblem]


@dataclass
class InputSummary:
    """What a pass over an input found: documents, skips by reason, problems."""

    format: InputFormat
    n_docs: int = 0
    skipped: Dict[str, int] = field(default_factory=lambda: dict.fromkeys(SKIP_REASONS, 0))
    problems: List[InputProblem] = field(default_factory=list)

    def add(self, item: InputItem) -> None:
        if isinstance(item, InputDoc):
            self.n_docs += 1
            return
        self.skipped[item.reason] += 1
        if isinstance(item, InputProblem):
            self.problems.append(item)

    @property
    def blank_lines(self) -> int:
        return self.skipped[BLANK]


def output_keys(line: int, id_: Any) -> Dict[str, Any]:
    """The keys that tie an output record to its input: ``line``, and ``id`` when the
    input gave one."""
    return {"line": line} if id_ is None else {"line": line, "id": id_}


# ------------------------------------------------------------------- reading --------
def strip_line(raw: bytes, line: int) -> bytes:
    """A raw line without its line ending (and, on line 1, without a byte order mark)."""
    raw = raw.rstrip(b"\r\n")
    return raw[len(BOM) :] if line == 1 and raw.startswith(BOM) else raw


class InputSource:
    """A file or stdin, readable as lines (bytes, line endings removed) any number of
    times: files are re-read from disk, stdin is held in memory."""

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
            yield from _lines(io.BytesIO(self._stdin_data))
        else:
            with open(self.path, "rb") as f:
                yield from _lines(f)


def _lines(stream: Any) -> Iterator[bytes]:
    for i, raw in enumerate(stream, start=1):
        yield strip_line(raw, i)


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


# ------------------------------------------------------------------- parsing --------
def text_document(line: int, text: str, id_: Any = None) -> Union[InputDoc, InputSkip]:
    """A document, or an ``empty_text`` skip when its text is empty or white space (the
    model would find no sentence in it, so it could have no record)."""
    return InputDoc(line, text, id_) if text.strip() else InputSkip(line, EMPTY_TEXT)


def unpaired_surrogate(text: str) -> Optional[Tuple[str, int]]:
    """``("\\ud800", position)`` of the first unpaired UTF-16 surrogate in ``text`` (JSON
    can carry one alone: it is not a character, and no UTF-8 output can hold it), or
    None."""
    try:
        text.encode("utf8")
    except UnicodeEncodeError as err:
        return f"\\u{ord(text[err.start]):04x}", err.start
    return None


def parse_line(raw: bytes, line: int, fmt: InputFormat, name: str) -> InputItem:
    """One input line (endings removed) as a document, a skip or a problem."""
    try:
        text = raw.decode("utf8")
    except UnicodeDecodeError as err:
        message = Errors.E312.format(path=name, line=line, detail=err.reason)
        return InputProblem(line, message, NOT_UTF8)
    if not text.strip():
        return InputSkip(line, BLANK)
    if fmt == InputFormat.text:
        return InputDoc(line, text)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        detail = f"{err.msg} at column {err.colno}"
        return InputProblem(
            line, Errors.E310.format(path=name, line=line, detail=detail), INVALID_JSON
        )
    problem = None
    if not isinstance(obj, dict):
        problem = f"expected a JSON object, got {type(obj).__name__}"
    elif "text" not in obj:
        problem = 'the object has no "text" field'
    elif not isinstance(obj["text"], str):
        problem = f'"text" is {type(obj["text"]).__name__}, not a string'
    elif (surrogate := unpaired_surrogate(obj["text"])) is not None:
        code, pos = surrogate
        problem = f'"text" holds an unpaired UTF-16 surrogate ({code} at character {pos})'
    if problem is not None:
        return InputProblem(line, Errors.E311.format(path=name, line=line, problem=problem))
    return text_document(line, obj["text"], obj.get("id"))


def parse_row(text: Any, id_: Any, row: int, name: str) -> InputItem:
    """One row of a table (Parquet) with a ``text`` column, as :func:`parse_line` takes
    a JSONL line."""
    if not isinstance(text, str):
        kind = "null" if text is None else type(text).__name__
        return InputProblem(row, Errors.E342.format(path=name, row=row, kind=kind))
    return text_document(row, text, id_)


def iter_input(source: InputSource, fmt: InputFormat) -> Iterator[InputItem]:
    """Every line of the input parsed with :func:`parse_line`."""
    for i, raw in enumerate(source.lines(), start=1):
        yield parse_line(raw, i, fmt, source.name)


def scan_input(
    source: InputSource, requested: InputFormat, *, skip_invalid: bool = True
) -> InputSummary:
    """The validation pass: the format, the number of documents, the skips and problems.
    Without ``skip_invalid``, invalid lines raise :func:`input_error`'s UserError."""
    fmt = detect_format(source, requested)
    summary = InputSummary(fmt)
    for item in iter_input(source, fmt):
        summary.add(item)
    if summary.problems and not skip_invalid:
        raise UserError(input_error(summary))
    return summary


def iter_docs(source: InputSource, fmt: InputFormat) -> Iterator[InputDoc]:
    """The documents of the input, in order."""
    for item in iter_input(source, fmt):
        if isinstance(item, InputDoc):
            yield item


# ------------------------------------------------------------------ reporting -------
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


def skip_report(
    skipped: Mapping[str, int], problems: Sequence[InputProblem] = (), *, limit: int = 5
) -> List[str]:
    """The end-of-run lines on skipped lines: blank lines, empty texts, then the invalid
    lines by reason with the first few ``problems`` in full."""
    lines = []
    if skipped.get(BLANK):
        lines.append(f"ℹ Skipped {skipped[BLANK]} blank line(s)")
    if skipped.get(EMPTY_TEXT):
        lines.append(f"ℹ Skipped {skipped[EMPTY_TEXT]} document(s) with empty text")
    invalid = {r: skipped[r] for r in INVALID_REASONS if skipped.get(r)}
    if invalid:
        detail = ", ".join(f"{REASON_NAMES[r]}: {n}" for r, n in invalid.items())
        lines.append(
            f"⚠ Skipped {sum(invalid.values())} invalid line(s) (--skip-invalid): {detail}"
        )
        lines.extend(f"  {p.message}" for p in problems[:limit])
        if len(problems) > limit:
            lines.append(f"  ... and {len(problems) - limit} more")
    return lines


__all__ = [
    "BLANK",
    "EMPTY_TEXT",
    "SKIP_REASONS",
    "InputDoc",
    "InputFormat",
    "InputItem",
    "InputProblem",
    "InputSkip",
    "InputSource",
    "InputSummary",
    "UserError",
    "detect_format",
    "input_error",
    "iter_docs",
    "iter_input",
    "output_keys",
    "parse_line",
    "parse_row",
    "scan_input",
    "skip_report",
    "strip_line",
    "text_document",
]
