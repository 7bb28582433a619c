"""CoNLL-2012 bracket-column reader: PropBank ``.gold_skel`` / ``.gold_conll`` files and
the OntoNotes CoNLL-2012 shared-task ``.gold_conll`` files.

Columns (whitespace separated, 0-based): 0 document, 1 sentence index (PropBank
release) or part number (OntoNotes), 2 token index, 3 word (``[WORD]`` in
``.gold_skel``), 4 PTB POS, 5 parse bit, 6 predicate (frame-file) lemma, 7 roleset or
frameset number (``-`` for non-predicates), then the props: one bracket column per
predicate in sentence order. The PropBank release writes the whole roleset in column 7
(``say.01``); OntoNotes only its number (``01``), beside the lemma ``say`` in column 6:
the roleset is then the two joined (:func:`roleset_of`). The parse bit is a constituency
tree: these files carry no dependency tree (``convert conll2012`` takes one from
``--trees`` or ``--parser``).

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

import re
from collections import Counter
from typing import Iterator, Optional

from ..errors import Errors
from ._io import (
    CorpusFormatError,
    OnInvalid,
    PathLike,
    Rows,
    column_count_error,
    handle_invalid,
    iter_blocks,
    line_error,
    props_count_error,
    read_lines,
)
from .brackets import bracket_predicates
from .records import SentenceRecord

N_FIXED_PROPBANK = 8  # doc, sentence, token, word, POS, parse, lemma, roleset
N_FIXED_ONTONOTES = 11  # ... + sense, speaker, named entities (and coreference last)
# an OntoNotes column 7: the frameset number alone
FRAMESET_NUMBER = re.compile(r"[0-9]+")


def roleset_of(lemma: Optional[str], roleset: Optional[str]) -> Optional[str]:
    """The roleset of a predicate row from its columns 6 (``lemma``, ``None`` for ``-``)
    and 7: a frameset number joined to the lemma (``say`` / ``01`` -> ``say.01``), a
    whole roleset (``be.01``) as it is."""
    if lemma is not None and roleset is not None and FRAMESET_NUMBER.fullmatch(roleset):
        return f"{lemma}.{roleset}"
    return roleset


def first_props_column(n_columns: int, n_predicates: int, *, path: str, line: int) -> int:
    """The first of the ``n_predicates`` props columns of a sentence with ``n_columns``
    columns (see the module docstring for the two layouts)."""
    if n_columns == N_FIXED_PROPBANK + n_predicates:
        return N_FIXED_PROPBANK
    if n_columns == N_FIXED_ONTONOTES + n_predicates + 1:
        return N_FIXED_ONTONOTES
    raise props_count_error(
        path=path,
        line=line,
        n_pred=n_predicates,
        n_cols=n_columns,
        expected=(
            f"{N_FIXED_PROPBANK + n_predicates} (PropBank layout: 8 columns and one per "
            f"predicate) or {N_FIXED_ONTONOTES + n_predicates + 1} (CoNLL-2012 layout: "
            "11 columns, one per predicate, then coreference)"
        ),
    )


def parse_conll2012_block(
    rows: Rows, *, path: str, doc_id: Optional[str], sent_index: int
) -> SentenceRecord:
    """Validate one sentence (rows of whitespace-split columns with their line
    numbers) and return its record."""
    first_line = rows[0][0]
    n_columns = len(rows[0][1])
    _check_rows(rows, n_columns, path=path)
    predicate_rows = [i for i, (_, cols) in enumerate(rows) if cols[7] != "-"]
    first = first_props_column(n_columns, len(predicate_rows), path=path, line=first_line)
    predicates = bracket_predicates(
        rows, predicate_rows, first, lemma_column=6, roleset_column=7, path=path
    )
    for predicate in predicates:
        predicate.roleset = roleset_of(predicate.lemma, predicate.roleset)
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


def _check_rows(rows: Rows, n_columns: int, *, path: str) -> None:
    """Every row has the sentence's ``n_columns`` columns (at least the fixed ones) and
    the token index of its position."""
    for number, cols in rows:
        if len(cols) != n_columns or len(cols) < N_FIXED_PROPBANK:
            raise column_count_error(
                path=path,
                line=number,
                found=len(cols),
                expected=n_columns
                if n_columns >= N_FIXED_PROPBANK
                else f"at least {N_FIXED_PROPBANK}",
            )
    for position, (number, cols) in enumerate(rows):
        if cols[2] != str(position):
            raise line_error(
                Errors.E109,
                path=path,
                line=number,
                reason="token_id",
                value=cols[2],
                expected=position,
            )


def read_conll2012(path: PathLike, *, on_invalid: OnInvalid = None) -> Iterator[SentenceRecord]:
    """Read a CoNLL-2012 bracket-column file (either layout) as sentence records with
    SRL (``predicates`` is a list, possibly empty). The frame-file lemma (column 6) is
    the predicate lemma, column 7 its roleset (an OntoNotes frameset number joined to
    the lemma: :func:`roleset_of`). Words of ``.gold_skel`` files are the
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
            handle_invalid(err, on_invalid, doc_id=doc_id, sent_index=sent_index)
            continue
        yield record
