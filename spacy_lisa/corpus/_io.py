"""Shared plumbing of the corpus readers: the format error (and the errors of one line
that several formats raise), strict UTF-8 reading and blank-line separated blocks with
their line numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union

from ..errors import Errors

PathLike = Union[str, Path]
# one sentence of a column format: (line number, whitespace-split columns) per row
Rows = Sequence[Tuple[int, List[str]]]


class CorpusFormatError(ValueError):
    """A corpus file is malformed. ``path`` and ``line`` (1-based, ``None`` for a
    whole-file problem such as an empty file) say where, ``reason`` is a short key
    (``"column_count"``, ``"unbalanced_bracket"``, ...) under which ``--skip-invalid``
    counts the skip. ``doc_id``/``sent_index`` locate the sentence for the readers that
    know it, so joins can line up the sentences around a skipped one."""

    def __init__(
        self,
        message: str,
        *,
        path: PathLike,
        line: Optional[int],
        reason: str,
        doc_id: Optional[str] = None,
        sent_index: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.path = str(path)
        self.line = line
        self.reason = reason
        self.doc_id = doc_id
        self.sent_index = sent_index

    @property
    def where(self) -> str:
        return self.path if self.line is None else f"{self.path}:{self.line}"


# Called with each error the reader skipped; ``None`` means: raise instead.
OnInvalid = Optional[Callable[[CorpusFormatError], None]]


def handle_invalid(
    err: CorpusFormatError, on_invalid: OnInvalid, *, doc_id: Optional[str], sent_index: int
) -> None:
    """Locate ``err`` at sentence ``sent_index`` of document ``doc_id``, then raise it or
    hand it to ``on_invalid`` (which counts it as a skip)."""
    err.doc_id, err.sent_index = doc_id, sent_index
    if on_invalid is None:
        raise err
    on_invalid(err)


def line_error(
    template: str, *, path: str, line: int, reason: str, **fields: Any
) -> CorpusFormatError:
    """The error of ``line`` of ``path`` under ``reason``: ``template`` (a numbered
    message taking ``path`` and ``line``) filled with ``fields``."""
    return CorpusFormatError(
        template.format(path=path, line=line, **fields), path=path, line=line, reason=reason
    )


def column_count_error(*, path: str, line: int, found: int, expected: Any) -> CorpusFormatError:
    """A row with ``found`` columns where the format (or the sentence) has ``expected``."""
    return line_error(
        Errors.E100, path=path, line=line, reason="column_count", found=found, expected=expected
    )


def props_count_error(
    *, path: str, line: int, n_pred: int, n_cols: int, expected: str
) -> CorpusFormatError:
    """A sentence whose ``n_cols`` columns do not hold one props column for each of its
    ``n_pred`` predicates (``expected``: the count it should have, and why)."""
    return line_error(
        Errors.E107,
        path=path,
        line=line,
        reason="props_column_count",
        n_pred=n_pred,
        n_cols=n_cols,
        expected=expected,
    )


def read_lines(path: PathLike) -> List[str]:
    """The lines of a UTF-8 text file (no line ends). An empty file or one that is not
    UTF-8 raises :class:`CorpusFormatError`."""
    data = Path(path).read_bytes()
    if not data.strip():
        raise CorpusFormatError(
            Errors.E002.format(path=path), path=path, line=None, reason="empty_file"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise CorpusFormatError(
            Errors.E108.format(path=path, line=line, detail=f"byte {data[err.start]:#04x}"),
            path=path,
            line=line,
            reason="invalid_utf8",
        ) from None
    text = text.removeprefix("\ufeff")
    # not str.splitlines(): it also splits on U+2028, U+0085 and friends, which may occur
    # inside tokens
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def iter_blocks(
    lines: List[str], *, skip_comments: bool = False
) -> Iterator[Tuple[int, List[Tuple[int, str]]]]:
    """Blank-line separated blocks as ``(first line number, [(line number, line), ...])``
    with 1-based line numbers. ``skip_comments`` drops lines starting with ``#``."""
    block: List[Tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            if block:
                yield block[0][0], block
                block = []
            continue
        if skip_comments and line.startswith("#"):
            continue
        block.append((number, line))
    if block:
        yield block[0][0], block
