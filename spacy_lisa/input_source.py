"""Reading an input file, a pipe or stdin a line at a time with bounded memory: line
endings and a UTF-8 byte order mark on line 1 removed, a line longer than
:data:`MAX_LINE_BYTES` skipped unread, an input that starts with a UTF-16 or UTF-32 byte
order mark counted in its own lines (none of them text), and stdin or a pipe (a FIFO,
``<(...)``) copied to a temporary file once so it can be read again. What a line means
(a document, a skip, a problem) is :mod:`spacy_lisa.input_docs`' concern.
"""

from __future__ import annotations

import codecs
import itertools
import os
import shutil
import stat
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator, Optional, Union

from .errors import Errors, UserError

STDIN = "-"
BOM = b"\xef\xbb\xbf"
# a longer line is never held in memory: skipped unread (E352). Far above what a pipeline
# takes (nlp.max_length, 1,000,000 characters by default, is checked once it is loaded)
MAX_LINE_BYTES = 64 * 2**20
# the first bytes of an unread long line kept for its message
HEAD_BYTES = 240
_CHUNK = 1 << 20
# encodings that are not UTF-8, told by their byte order mark (UTF-32 LE's starts with
# UTF-16 LE's, so it comes first); the names are iconv's and Python's
WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32LE"),
    (codecs.BOM_UTF32_BE, "UTF-32BE"),
    (codecs.BOM_UTF16_LE, "UTF-16LE"),
    (codecs.BOM_UTF16_BE, "UTF-16BE"),
)


@dataclass(frozen=True)
class UnreadLine:
    """A line the reader hands over without its content: a line of a UTF-16/UTF-32
    input (``encoding``), or one longer than :data:`MAX_LINE_BYTES` (its length and
    first bytes)."""

    encoding: Optional[str] = None
    n_bytes: int = 0
    head: bytes = b""


# a line as the reader gives it: bytes (line ending removed), or a line it did not read
RawLine = Union[bytes, UnreadLine]


def strip_line(raw: bytes, line: int) -> bytes:
    """A raw line without its line ending (and, on line 1, without a byte order mark)."""
    raw = raw.rstrip(b"\r\n")
    return raw[len(BOM) :] if line == 1 and raw.startswith(BOM) else raw


class InputSource:
    """A file, a pipe or stdin, readable as lines any number of times: a regular file
    is re-read from disk; stdin and pipes (a FIFO, ``<(...)``), which can be read only
    once, are copied to a temporary file on the first read."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.path = str(path)
        self._spool: Optional[IO[bytes]] = None
        self.once = self.path == STDIN
        if self.path == STDIN:
            self.name = "<stdin>"
            return
        try:
            mode = os.stat(self.path).st_mode
        except (OSError, ValueError):  # missing, a dangling link, a loop, a NUL in the name
            raise FileNotFoundError(Errors.E313.format(path=self.path)) from None
        if stat.S_ISDIR(mode):
            raise UserError(Errors.E316.format(path=self.path))
        self.once = not stat.S_ISREG(mode)
        self.name = self.path

    def lines(self) -> Iterator[RawLine]:
        """The input's lines (see :func:`read_lines`); decoding is left to the caller so
        that a bad byte is reported with its line number rather than as one
        UnicodeDecodeError."""
        with self._open() as stream:
            yield from read_lines(stream)

    @contextmanager
    def _open(self) -> Iterator[IO[bytes]]:
        if not self.once:
            with open(self.path, "rb") as f:
                yield f
            return
        if self._spool is None:
            spool = tempfile.TemporaryFile()
            if self.path == STDIN:
                shutil.copyfileobj(sys.stdin.buffer, spool, _CHUNK)
            else:
                with open(self.path, "rb") as f:
                    shutil.copyfileobj(f, spool, _CHUNK)
            self._spool = spool
        self._spool.seek(0)
        yield self._spool


def wide_encoding(start: bytes) -> Optional[str]:
    """The UTF-16/UTF-32 encoding whose byte order mark ``start`` begins with, or None."""
    for bom, name in WIDE_BOMS:
        if start.startswith(bom):
            return name
    return None


def read_lines(stream: IO[bytes]) -> Iterator[RawLine]:
    """The lines of a seekable binary stream: bytes without their line ending, except
    for lines longer than :data:`MAX_LINE_BYTES` (skipped unread) and, in an input that
    starts with a UTF-16/UTF-32 byte order mark, every line (counted in that encoding's
    own lines, none of them text), from the stream's current position."""
    start = stream.tell()
    encoding = wide_encoding(stream.read(4))
    stream.seek(start)
    if encoding is not None:
        yield from _wide_lines(stream, encoding)
        return
    limit = MAX_LINE_BYTES
    for i in itertools.count(1):
        raw = stream.readline(limit + 1)
        if not raw:
            return
        if len(raw) > limit and not raw.endswith(b"\n"):
            yield _skip_long_line(stream, raw)
        else:
            yield strip_line(raw, i)


def _skip_long_line(stream: IO[bytes], first: bytes) -> UnreadLine:
    """Read past the rest of a line too long to hold, keeping its length and start."""
    n_bytes, raw = len(first), first
    while not raw.endswith(b"\n"):
        raw = stream.readline(_CHUNK)
        if not raw:
            break
        n_bytes += len(raw)
    ending = 1 if raw.endswith(b"\n") else 0
    return UnreadLine(n_bytes=n_bytes - ending, head=first[:HEAD_BYTES])


def _wide_lines(stream: IO[bytes], encoding: str) -> Iterator[UnreadLine]:
    """One :class:`UnreadLine` per line of a UTF-16/UTF-32 input, the lines counted in
    its own encoding (a byte-wise split would cut its characters and add a phantom line
    after the last newline), reading a chunk at a time."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    pending, done = False, False
    while not done:
        chunk = stream.read(_CHUNK)
        done = not chunk
        text = decoder.decode(chunk, final=done)
        for _ in range(text.count("\n")):
            yield UnreadLine(encoding=encoding)
        if "\n" in text:
            pending = not text.endswith("\n")
        elif text:
            pending = True
    if pending:
        yield UnreadLine(encoding=encoding)
