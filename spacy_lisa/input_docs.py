"""Documents to label: one per line of a text file, one per JSON line (``{"text": ...,
"id": ...}``) or one per Parquet row, with the rules every reader follows (``spacy-lisa
predict``, ``render``, the Ray engine), so that each counts the same input the same way:

- a blank line (text or JSONL) is skipped and counted as ``blank``;
- a document whose text is empty or only white space (a JSONL ``"text": ""``, a
  Parquet row with an empty ``text``) is skipped and counted as ``empty_text``;
- a line that is not a document (not UTF-8, bad JSON, no string ``"text"``, an
  ``"id"`` JSON output cannot hold, a text longer than the pipeline takes) is a problem
  that stops the run with its file and line, or, with ``--skip-invalid``, is skipped and
  counted by its reason.

Line endings and a UTF-8 byte order mark on the first line are removed here, once. The
input is read a line at a time with bounded memory: a line longer than
:data:`MAX_LINE_BYTES` is skipped unread, an input that starts with a UTF-16 or UTF-32
byte order mark is counted in its own lines, each one reported as not UTF-8, and stdin or
a pipe (a FIFO, ``<(...)``) is copied to a temporary file once so it can be read again.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import Errors, UserError
from .input_source import (
    MAX_LINE_BYTES,
    STDIN,
    InputSource,
    RawLine,
    UnreadLine,
    read_lines,
    strip_line,
    wide_encoding,
)

JSONL_SUFFIXES = (".jsonl", ".ndjson")
TEXT_SUFFIXES = (".txt",)

BLANK = "blank"
EMPTY_TEXT = "empty_text"
NOT_UTF8 = "not_utf8"
INVALID_JSON = "invalid_json"
BAD_OBJECT = "bad_object"
BAD_ID = "bad_id"
TOO_LONG = "too_long"
# the reasons a line is skipped, in the order they are reported; all but the first two
# are invalid lines (skipped only with --skip-invalid)
SKIP_REASONS = (BLANK, EMPTY_TEXT, NOT_UTF8, INVALID_JSON, BAD_OBJECT, BAD_ID, TOO_LONG)
INVALID_REASONS = (NOT_UTF8, INVALID_JSON, BAD_OBJECT, BAD_ID, TOO_LONG)
REASON_NAMES = {
    NOT_UTF8: "not UTF-8",
    INVALID_JSON: "invalid JSON",
    BAD_OBJECT: 'no string "text"',
    BAD_ID: 'unusable "id"',
    TOO_LONG: "too long",
}
SKIP_INVALID_HINT = "Pass --skip-invalid to skip invalid lines (counted and reported at the end)."

# an "id" is copied into every record of its line, so it is kept small: a long id on a
# line of many sentences would make the output grow with their product
MAX_ID_CHARS = 1024
MAX_ID_DEPTH = 32
# how much of a line a message quotes, and how many problems are kept for the messages
# (all are counted)
EXCERPT_CHARS = 60
KEPT_PROBLEMS = 100


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


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The start of ``text`` for a message, quoted: never more than ``limit`` characters
    of it, whatever its length."""
    return repr(text[:limit]) + ("..." if len(text) > limit else "")


@dataclass
class InputSummary:
    """What a pass over an input found: documents, skips by reason, the first
    :data:`KEPT_PROBLEMS` problems (all are counted in ``skipped``) and the length of
    the longest document text (characters)."""

    format: InputFormat
    n_docs: int = 0
    skipped: Dict[str, int] = field(default_factory=lambda: dict.fromkeys(SKIP_REASONS, 0))
    problems: List[InputProblem] = field(default_factory=list)
    longest: int = 0

    def add(self, item: InputItem) -> None:
        if isinstance(item, InputDoc):
            self.n_docs += 1
            self.longest = max(self.longest, len(item.text))
            return
        self.skipped[item.reason] += 1
        if isinstance(item, InputProblem) and len(self.problems) < KEPT_PROBLEMS:
            self.problems.append(item)

    @property
    def blank_lines(self) -> int:
        return self.skipped[BLANK]

    @property
    def n_invalid(self) -> int:
        """Invalid lines, all reasons together."""
        return sum(self.skipped[r] for r in INVALID_REASONS)


def output_keys(line: int, id_: Any) -> Dict[str, Any]:
    """The keys that tie an output record to its input: ``line``, and ``id`` when the
    input gave one."""
    return {"line": line} if id_ is None else {"line": line, "id": id_}


def unread_problem(unread: UnreadLine, line: int, name: str) -> InputProblem:
    """A line the reader did not read (:class:`UnreadLine`) as the problem it is."""
    if unread.encoding is not None:
        # iconv's UTF-16/UTF-32 read the byte order mark and drop it
        family = unread.encoding[:6]
        message = Errors.E353.format(path=name, line=line, encoding=unread.encoding, family=family)
        return InputProblem(line, message, NOT_UTF8)
    start = excerpt(unread.head.decode("utf8", "replace"))
    message = Errors.E352.format(
        path=name, line=line, n=unread.n_bytes, limit=MAX_LINE_BYTES, excerpt=start
    )
    return InputProblem(line, message, TOO_LONG)


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
        head = line if isinstance(line, bytes) else line.head
        if head.strip():
            # "{" rather than "parses as JSON": a JSONL file with a broken first line
            # must fail on that line, not be labelled as text
            return InputFormat.jsonl if head.lstrip().startswith(b"{") else InputFormat.text
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


def id_problem(id_: Any) -> Optional[str]:
    """Why an input ``"id"`` cannot be written into the output records, or None: JSON
    cannot hold NaN, Infinity or an unpaired surrogate, and the id is repeated in every
    record of its line, so it is bounded (:data:`MAX_ID_CHARS`, :data:`MAX_ID_DEPTH`)."""
    stack = [(id_, 1)]
    while stack:  # a loop, not recursion: the id may be nested deep
        value, depth = stack.pop()
        if isinstance(value, (list, dict)):
            if depth > MAX_ID_DEPTH:
                return f'"id" is nested more than {MAX_ID_DEPTH} deep'
            items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
            for key, item in items:
                if key is not None and unpaired_surrogate(key) is not None:
                    return '"id" holds an unpaired UTF-16 surrogate'
                stack.append((item, depth + 1))
        elif isinstance(value, float) and not math.isfinite(value):
            return f'"id" holds {value!r}, which JSON cannot hold'
        elif isinstance(value, str) and unpaired_surrogate(value) is not None:
            return '"id" holds an unpaired UTF-16 surrogate'
    size = len(json.dumps(id_, ensure_ascii=False))
    if size > MAX_ID_CHARS:
        return f'"id" is {size:,} characters of JSON'
    return None


def parse_line(
    raw: bytes, line: int, fmt: InputFormat, name: str, *, max_length: Optional[int] = None
) -> InputItem:
    """One input line (endings removed) as a document, a skip or a problem; a document
    longer than ``max_length`` characters (the pipeline's ``nlp.max_length``) is a
    ``too_long`` problem."""
    try:
        text = raw.decode("utf8")
    except UnicodeDecodeError as err:
        message = Errors.E312.format(path=name, line=line, detail=err.reason)
        return InputProblem(line, message, NOT_UTF8)
    if "\x00" in text:
        # valid UTF-8, but no text: UTF-16/UTF-32 without a byte order mark, or binary
        detail = f"a NUL byte at byte {raw.index(0)}, as in UTF-16 or UTF-32 text or binary data"
        return InputProblem(line, Errors.E312.format(path=name, line=line, detail=detail), NOT_UTF8)
    if not text.strip():
        return InputSkip(line, BLANK)
    if fmt == InputFormat.text:
        return _sized(InputDoc(line, text), name, max_length)
    return _parse_json(text, line, name, max_length)


def _sized(item: InputItem, name: str, max_length: Optional[int]) -> InputItem:
    """``item``, or a ``too_long`` problem for a document longer than ``max_length``
    (spaCy would refuse it with E088 and end the run)."""
    if isinstance(item, InputDoc) and max_length is not None and len(item.text) > max_length:
        message = Errors.E351.format(
            path=name,
            line=item.line,
            n=len(item.text),
            max_length=max_length,
            excerpt=excerpt(item.text),
        )
        return InputProblem(item.line, message, TOO_LONG)
    return item


def _parse_json(text: str, line: int, name: str, max_length: Optional[int]) -> InputItem:
    """A JSONL line (decoded, not blank) as a document or a problem."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        detail = f"{err.msg} at column {err.colno}"
        return InputProblem(
            line, Errors.E310.format(path=name, line=line, detail=detail), INVALID_JSON
        )
    except RecursionError:
        return InputProblem(line, Errors.E350.format(path=name, line=line), INVALID_JSON)
    except ValueError as err:  # e.g. an integer of more digits than Python converts
        detail = excerpt(str(err), 120)
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
    item = _sized(text_document(line, obj["text"], obj.get("id")), name, max_length)
    if isinstance(item, InputDoc) and (problem := id_problem(item.id)) is not None:
        message = Errors.E354.format(
            path=name, line=line, problem=problem, max_chars=MAX_ID_CHARS, max_depth=MAX_ID_DEPTH
        )
        return InputProblem(line, message, BAD_ID)
    return item


def parse_row(text: Any, id_: Any, row: int, name: str) -> InputItem:
    """One row of a table (Parquet) with a ``text`` column, as :func:`parse_line` takes
    a JSONL line."""
    if not isinstance(text, str):
        kind = "null" if text is None else type(text).__name__
        return InputProblem(row, Errors.E342.format(path=name, row=row, kind=kind))
    return text_document(row, text, id_)


def iter_input(
    source: InputSource, fmt: InputFormat, *, max_length: Optional[int] = None
) -> Iterator[InputItem]:
    """Every line of the input parsed with :func:`parse_line`: one item per line."""
    for i, raw in enumerate(source.lines(), start=1):
        if isinstance(raw, UnreadLine):
            yield unread_problem(raw, i, source.name)
        else:
            yield parse_line(raw, i, fmt, source.name, max_length=max_length)


def scan_input(
    source: InputSource,
    requested: InputFormat,
    *,
    skip_invalid: bool = True,
    max_length: Optional[int] = None,
) -> InputSummary:
    """The validation pass: the format, the number of documents, the skips and problems.
    Without ``skip_invalid``, invalid lines raise :func:`input_error`'s UserError."""
    fmt = detect_format(source, requested)
    summary = InputSummary(fmt)
    for item in iter_input(source, fmt, max_length=max_length):
        summary.add(item)
    if summary.problems and not skip_invalid:
        raise UserError(input_error(summary))
    return summary


def iter_docs(
    source: InputSource, fmt: InputFormat, *, max_length: Optional[int] = None
) -> Iterator[InputDoc]:
    """The documents of the input, in order."""
    for item in iter_input(source, fmt, max_length=max_length):
        if isinstance(item, InputDoc):
            yield item


# ------------------------------------------------------------------ reporting -------
def input_error(summary: InputSummary, *, limit: int = 5) -> str:
    """The message that stops a run on invalid lines: the first problem in full, the
    line numbers of the next few, and how to skip them instead."""
    problems = summary.problems
    n_invalid = max(summary.n_invalid, len(problems))
    message = problems[0].message
    if n_invalid > 1:
        others = ", ".join(str(p.line) for p in problems[1 : limit + 1])
        more = ", ..." if n_invalid > limit + 1 else ""
        message += f"\n  {n_invalid - 1} more invalid line(s): {others}{more}"
    return f"{message}\n  {SKIP_INVALID_HINT}"


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
    "BAD_ID",
    "BLANK",
    "EMPTY_TEXT",
    "INVALID_REASONS",
    "MAX_LINE_BYTES",
    "SKIP_REASONS",
    "TOO_LONG",
    "InputDoc",
    "InputFormat",
    "InputItem",
    "InputProblem",
    "InputSkip",
    "InputSource",
    "InputSummary",
    "RawLine",
    "UnreadLine",
    "detect_format",
    "excerpt",
    "id_problem",
    "input_error",
    "iter_docs",
    "iter_input",
    "output_keys",
    "parse_line",
    "parse_row",
    "read_lines",
    "scan_input",
    "skip_report",
    "strip_line",
    "text_document",
    "unread_problem",
    "wide_encoding",
]
