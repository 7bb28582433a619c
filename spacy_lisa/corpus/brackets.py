"""Bracket columns of CoNLL-2005/CoNLL-2012 props: one column per predicate, ``(ARG0*``
opens a span, ``*)`` closes the innermost open one, ``(V*)`` is a one-token span, ``*``
is nothing. Spans of one column nest (an argument inside another) but never cross.

Hand-written because no maintained library reads these columns with line-accurate
errors (conllu reads CoNLL-U only; the shared task's own readers are Perl).
"""

from __future__ import annotations

import re
from typing import Iterable, List, Optional, Sequence, Tuple

from ..errors import Errors
from ._io import CorpusFormatError, Rows, line_error
from .records import Argument, Predicate

LabelledSpan = Tuple[int, int, str]

# opens, the star, closes; a closer may repeat its label as in CoNLL-2004 ("*A0)")
_TAG = re.compile(r"((?:\([^()*\s]+)*)\*((?:[^()*\s]*\))*)")
_OPEN = re.compile(r"\(([^()*\s]+)")
_CLOSE = re.compile(r"([^()*\s]*)\)")


def parse_bracket_column(
    tags: Sequence[str], lines: Sequence[int], *, path: str, column: int
) -> List[LabelledSpan]:
    """Spans ``(start, end, label)`` of one bracket column (``V`` included), in the order
    they open (outer first). ``lines`` are the file line numbers of the rows, for errors;
    ``column`` is the 1-based column number reported in them."""

    def unbalanced(line: int, message: str) -> CorpusFormatError:
        return line_error(
            Errors.E105,
            path=path,
            line=line,
            reason="unbalanced_bracket",
            column=column,
            message=message,
        )

    spans: List[LabelledSpan] = []
    # label, start row, line it opened on, index of its entry in `spans`
    stack: List[Tuple[str, int, int, int]] = []
    for i, tag in enumerate(tags):
        if tag == "*":  # by far the most common cell
            continue
        match = _TAG.fullmatch(tag)
        if match is None:
            raise line_error(
                Errors.E106,
                path=path,
                line=lines[i],
                reason="malformed_bracket",
                tag=tag,
                column=column,
            )
        opens, closes = match.groups()
        for label in _OPEN.findall(opens):
            stack.append((label, i, lines[i], len(spans)))
            spans.append((i, -1, label))  # end filled in when it closes
        for closing_label in _CLOSE.findall(closes):
            if not stack:
                raise unbalanced(lines[i], f"'{tag}' closes a span that was never opened")
            label, start, _, index = stack.pop()
            if closing_label and closing_label != label:
                raise unbalanced(
                    lines[i], f"'{tag}' closes '{closing_label}' but '{label}' is open"
                )
            spans[index] = (start, i + 1, label)
    if stack:
        label, start, line, _ = stack[-1]
        raise unbalanced(line, f"'({label}*' opened here is never closed before the sentence ends")
    return spans


def spans_to_bracket_column(length: int, spans: Iterable[LabelledSpan]) -> List[str]:
    """Write spans (``V`` included) as one bracket column of ``length`` rows. Spans may
    nest or repeat; crossing spans cannot be written and raise ``ValueError``."""
    ordered = sorted(spans, key=lambda s: (s[0], -s[1]))
    opens: List[List[str]] = [[] for _ in range(length)]
    closes = [0] * length
    open_ends: List[int] = []
    for start, end, label in ordered:
        if not 0 <= start < end <= length:
            raise ValueError(Errors.E113.format(span=(start, end, label), length=length))
        if not label or _OPEN.fullmatch(f"({label}") is None:
            raise ValueError(Errors.E114.format(label=label))
        while open_ends and open_ends[-1] <= start:
            open_ends.pop()
        if open_ends and end > open_ends[-1]:
            raise ValueError(Errors.E115.format(span=(start, end, label)))
        open_ends.append(end)
        opens[start].append(f"({label}")
        closes[end - 1] += 1
    return ["".join(opens[i]) + "*" + ")" * closes[i] for i in range(length)]


def predicate_from_column(
    spans: Sequence[LabelledSpan],
    *,
    index: int,
    lemma: Optional[str],
    roleset: Optional[str],
    path: str,
    line: int,
    column: int,
) -> Predicate:
    """The predicate of one parsed column: its single ``V`` span and the other spans as
    arguments (outer first, as they open). ``line`` is the predicate row's line."""
    verbs = [s for s in spans if s[2] == "V"]
    if len(verbs) != 1:
        raise line_error(
            Errors.E110, path=path, line=line, reason="predicate_span", column=column, n=len(verbs)
        )
    return Predicate(
        index=index,
        span=(verbs[0][0], verbs[0][1]),
        lemma=lemma,
        roleset=roleset,
        arguments=[Argument(s, e, label) for s, e, label in spans if label != "V"],
    )


def bracket_predicates(
    rows: Rows,
    predicate_rows: Sequence[int],
    first: int,
    *,
    lemma_column: int,
    roleset_column: Optional[int],
    path: str,
) -> List[Predicate]:
    """The predicates of a sentence's props, one bracket column each from column
    ``first`` on (the ``k``-th that of ``predicate_rows[k]``), their lemma (``-``: none)
    and roleset read from their row's columns."""
    lines = [number for number, _ in rows]
    predicates = []
    for k, row in enumerate(predicate_rows):
        column = first + k
        spans = parse_bracket_column(
            [cols[column] for _, cols in rows], lines, path=path, column=column + 1
        )
        cols = rows[row][1]
        predicates.append(
            predicate_from_column(
                spans,
                index=row,
                lemma=None if cols[lemma_column] == "-" else cols[lemma_column],
                roleset=None if roleset_column is None else cols[roleset_column],
                path=path,
                line=lines[row],
                column=column + 1,
            )
        )
    return predicates
