"""CoNLL-2012 bracket-column reader: PropBank ``.gold_skel`` / ``.gold_conll`` files and
the OntoNotes CoNLL-2012 shared-task ``.gold_conll`` files.

Columns (whitespace separated, 0-based): 0 document, 1 sentence index (PropBank
release) or part number (OntoNotes), 2 token index, 3 word (``[WORD]`` in
``.gold_skel``), 4 PTB POS, 5 parse bit, 6 predicate (frame-file) lemma, 7 roleset (``-``
for non-predicates), then the props: one bracket column per predicate in sentence order.

Two layouts, told apart per sentence by the column count, since the number of
predicates ``n`` (rows whose roleset is not ``-``) is known from column 7:

- ``8 + n`` columns: the PropBank release layout (the EWT ``.gold_skel`` files and the
  ``.gold_conll`` files made from them): the props are columns 8.. to the end.
- ``12 + n`` columns: the OntoNotes CoNLL-2012 layout, with word sense (8), speaker (9)
  and named entities (10) before the props and the coreference column after them:
  the props are columns 11 .. -2.

Any other count is an error (:class:`CorpusFormatError`), as are rows of one sentence
with different column counts. ``#begin document`` / ``#end document`` lines are skipped.
Sentences are numbered by their position within their document (column 0), which is
what a join with UD trees lines up.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterator, List, Optional, Sequence, Tuple

from ..errors import Errors
from ._io import CorpusFormatError, OnInvalid, PathLike, handle_invalid, iter_blocks, read_lines
from .brackets import parse_bracket_column, predicate_from_column
from .records import Predicate, SentenceRecord

N_FIXED_PROPBANK = 8  # doc, sentence, token, word, POS, parse, lemma, roleset
N_FIXED_ONTONOTES = 11  # ... + sense, speaker, named entities (and coreference last)

Rows = Sequence[Tuple[int, List[str]]]


def props_columns(n_columns: int, n_predicates: int, *, path: str, line: int) -> Tuple[int, int]:
    """``(first, end)`` of the props columns for a sentence with ``n_columns`` columns
    and ``n_predicates`` predicates (see the module docstring for the two layouts)."""
    if n_columns == N_FIXED_PROPBANK + n_predicates:
        return N_FIXED_PROPBANK, n_columns
    if n_columns == N_FIXED_ONTONOTES + n_predicates + 1:
        return N_FIXED_ONTONOTES, n_columns - 1
    raise CorpusFormatError(
        Errors.E107.format(
            path=path,
            line=line,
            n_pred=n_predicates,
            n_cols=n_columns,
            expected=(
                f"{N_FIXED_PROPBANK + n_predicates} (PropBank layout: 8 columns and one per "
                f"predicate) or {N_FIXED_ONTONOTES + n_predicates + 1} (CoNLL-2012 layout: "
                "11 columns, one per predicate, then coreference)"
            ),
        ),
        path=path,
        line=line,
        reason="props_column_count",
    )


def parse_conll2012_block(
    rows: Rows, *, path: str, doc_id: Optional[str], sent_index: int
) -> SentenceRecord:
    """Validate one sentence (rows of whitespace-split columns with their line
    numbers) and return its record."""
    first_line = rows[0][0]
    n_columns = len(rows[0][1])
    for number, cols in rows:
        if len(cols) != n_columns or len(cols) < N_FIXED_PROPBANK:
            raise CorpusFormatError(
                Errors.E100.format(
                    path=path,
                    line=number,
                    found=len(cols),
                    expected=n_columns
                    if n_columns >= N_FIXED_PROPBANK
                    else f"at least {N_FIXED_PROPBANK}",
                ),
                path=path,
                line=number,
                reason="column_count",
            )
    for position, (number, cols) in enumerate(rows):
        if cols[2] != str(position):
            raise CorpusFormatError(
                Errors.E109.format(path=path, line=number, value=cols[2], expected=position),
                path=path,
                line=number,
                reason="token_id",
            )
    predicate_rows = [i for i, (_, cols) in enumerate(rows) if cols[7] != "-"]
    first, end = props_columns(n_columns, len(predicate_rows), path=path, line=first_line)
    lines = [number for number, _ in rows]
    predicates: List[Predicate] = []
    for k, column in enumerate(range(first, end)):
        row = predicate_rows[k]
        spans = parse_bracket_column(
            [cols[column] for _, cols in rows], lines, path=path, column=column + 1
        )
        lemma = rows[row][1][6]
        predicates.append(
            predicate_from_column(
                spans,
                index=row,
                lemma=None if lemma == "-" else lemma,
                roleset=rows[row][1][7],
                path=path,
                line=lines[row],
                column=column + 1,
            )
        )
    return SentenceRecord(
        words=[cols[3] for _, cols in rows],
        spaces=[True] * len(rows),
        xpos=[cols[4] for _, cols in rows],
        predicates=predicates,
        doc_id=doc_id,
        sent_index=sent_index,
        path=path,
        line=first_line,
    )


def read_conll2012(path: PathLike, *, on_invalid: OnInvalid = None) -> Iterator[SentenceRecord]:
    """Read a CoNLL-2012 bracket-column file (either layout) as sentence records with
    SRL (``predicates`` is a list, possibly empty). The frame-file lemma (column 6) is
    the predicate lemma, column 7 its roleset. Words of ``.gold_skel`` files are the
    ``[WORD]`` placeholder (``record.has_words`` is False): join them with UD trees."""
    path = str(path)
    positions: Counter = Counter()
    for _, block in iter_blocks(read_lines(path), skip_comments=True):
        rows = [(number, line.split()) for number, line in block]
        doc_id = rows[0][1][0]  # blocks hold no blank lines, so there is a column 0
        sent_index = positions[doc_id]
        positions[doc_id] += 1
        try:
            record = parse_conll2012_block(rows, path=path, doc_id=doc_id, sent_index=sent_index)
        except CorpusFormatError as err:
            err.doc_id, err.sent_index = doc_id, sent_index
            handle_invalid(err, on_invalid)
            continue
        yield record
