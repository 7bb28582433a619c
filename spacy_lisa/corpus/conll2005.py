"""CoNLL-2005 shared-task format: a words file and a props file, reader and writer.

Both files hold one line per token and a blank line after each sentence. The words
file has the word in its first column. The props file has the predicate lemma (``-``
for non-predicates) in its first column, then one bracket column per predicate in
sentence order (see :mod:`spacy_lisa.corpus.brackets`): the format ``srl-eval.pl``
scores. The shared task's short role labels are read as PropBank's (:func:`propbank_label`:
``A0`` is ``ARG0``, ``AM-TMP`` ``ARGM-TMP``, ``R-A1`` ``R-ARG1``), the labels the other
corpora and the decoder's one-span-per-core-role rule use.

Writing Docs (:func:`doc_to_conll2005`, :func:`write_conll2005`): sentences come from
``doc.sents`` when the doc has sentence boundaries, else the whole doc is one sentence;
a frame belongs to the sentence holding its predicate's first token. The lemma goes on
the predicate's first token. Two frames can share that token (EWT has a few duplicated
predicates over hyphen-split words); since a row holds only one lemma, the later frame's
lemma moves to the next token of its predicate, else the nearest free token: the
frame itself (its ``V`` span) is unchanged, and the reader takes the predicate from the
``V`` span, so nothing is lost. Words and lemmas cannot contain whitespace in these
files: runs of whitespace are written as ``_``.
"""

from __future__ import annotations

import re
from itertools import zip_longest
from pathlib import Path
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

from spacy.tokens import Doc, Span

from ..errors import Errors
from ..frames import SRLFrame, doc_sentences
from ._io import (
    CorpusFormatError,
    OnInvalid,
    PathLike,
    Rows,
    column_count_error,
    handle_invalid,
    iter_blocks,
    props_count_error,
    read_lines,
)
from .brackets import LabelledSpan, bracket_predicates, spans_to_bracket_column
from .records import Predicate, SentenceRecord

NOT_A_PREDICATE = "-"
# CoNLL-2005's short labels, after an optional C- / R- prefix: A0-A5 and AA (numbered
# arguments) and AM-* (modifiers)
_SHORT_LABEL = re.compile(r"^((?:[CR]-)?)A(?=[0-5A](?:-|$)|M-)")


def propbank_label(label: str) -> str:
    """A CoNLL-2005 role label in PropBank's spelling: ``A0`` -> ``ARG0``, ``AA`` ->
    ``ARGA``, ``AM-TMP`` -> ``ARGM-TMP``, ``C-A1`` -> ``C-ARG1``, ``R-AM-LOC`` ->
    ``R-ARGM-LOC``; ``V``, ``C-V`` and labels already spelled so are kept."""
    return _SHORT_LABEL.sub(r"\1ARG", label, count=1)


# --- reading ---------------------------------------------------------------------------


def parse_props_block(rows: Rows, *, path: str) -> List[Predicate]:
    """The predicates of one props sentence (rows of whitespace-split columns with
    their line numbers)."""
    n_columns = len(rows[0][1])
    for number, cols in rows:
        if len(cols) != n_columns:
            raise column_count_error(path=path, line=number, found=len(cols), expected=n_columns)
    predicate_rows = [i for i, (_, cols) in enumerate(rows) if cols[0] != NOT_A_PREDICATE]
    if n_columns != 1 + len(predicate_rows):
        raise props_count_error(
            path=path,
            line=rows[0][0],
            n_pred=len(predicate_rows),
            n_cols=n_columns,
            expected=f"{1 + len(predicate_rows)} (the lemma column and one per predicate)",
        )
    predicates = bracket_predicates(
        rows, predicate_rows, 1, lemma_column=0, roleset_column=None, path=path
    )
    for predicate in predicates:
        for argument in predicate.arguments:
            argument.label = propbank_label(argument.label)
    return predicates


def read_conll2005(
    words_path: PathLike, props_path: PathLike, *, on_invalid: OnInvalid = None
) -> Iterator[SentenceRecord]:
    """Read a words file and its props file as sentence records (no rolesets: the
    format has only lemmas; role labels in PropBank's spelling, :func:`propbank_label`).
    The two files must line up sentence by sentence and token by token; where they do
    not, a :class:`CorpusFormatError` names the props line (or goes to ``on_invalid``,
    skipping that sentence)."""
    words_path, props_path = str(words_path), str(props_path)
    word_blocks = iter_blocks(read_lines(words_path))
    props_blocks = iter_blocks(read_lines(props_path))
    for index, (words_block, props_block) in enumerate(zip_longest(word_blocks, props_blocks)):
        try:
            record = _read_sentence(words_block, props_block, index, words_path, props_path)
        except CorpusFormatError as err:
            handle_invalid(err, on_invalid, doc_id=None, sent_index=index)
            continue
        yield record


def _read_sentence(
    words_block: Optional[Tuple[int, List[Tuple[int, str]]]],
    props_block: Optional[Tuple[int, List[Tuple[int, str]]]],
    index: int,
    words_path: str,
    props_path: str,
) -> SentenceRecord:
    if words_block is None or props_block is None:
        path = props_path if words_block is None else words_path
        line = props_block[0] if props_block is not None else words_block[0]  # type: ignore[index]
        raise CorpusFormatError(
            Errors.E112.format(
                path=path,
                line=line,
                message=f"sentence {index + 1} here has no counterpart in the other file",
            ),
            path=path,
            line=line,
            reason="words_props_mismatch",
        )
    (words_line, words), (props_line, props) = words_block, props_block
    if len(words) != len(props):
        raise CorpusFormatError(
            Errors.E112.format(
                path=props_path,
                line=props_line,
                message=(
                    f"sentence {index + 1} has {len(props)} rows here but {len(words)} words "
                    f"in {words_path} (line {words_line})"
                ),
            ),
            path=props_path,
            line=props_line,
            reason="words_props_mismatch",
        )
    predicates = parse_props_block(
        [(number, line.split()) for number, line in props], path=props_path
    )
    return SentenceRecord(
        words=[line.split()[0] for _, line in words],
        spaces=[True] * len(words),
        predicates=predicates,
        sent_index=index,
        path=props_path,
        line=props_line,
    )


# --- writing ---------------------------------------------------------------------------


def _clean(text: str) -> str:
    """One whitespace-free cell: whitespace runs become ``_`` (never empty)."""
    return "_".join(text.split()) or "_"


def _sentence_frames(doc: Doc, sentences: List[Span]) -> List[List[SRLFrame]]:
    """Frames grouped by the sentence holding their predicate's first token."""
    grouped: List[List[SRLFrame]] = [[] for _ in sentences]
    s = 0
    for frame in doc._.srl_frames:  # sorted by predicate
        while s + 1 < len(sentences) and frame.predicate.start >= sentences[s].end:
            s += 1
        grouped[s].append(frame)
    return grouped


def _lemma_rows(frames: List[SRLFrame], offset: int, length: int) -> List[int]:
    """The row carrying each frame's lemma: its predicate's first free token, else the
    nearest free token after it, else before it."""
    used: set = set()
    rows = []
    for frame in frames:
        start, end = frame.predicate.start - offset, frame.predicate.end - offset
        candidates = [*range(start, end), *range(end, length), *range(start - 1, -1, -1)]
        row = next((i for i in candidates if i not in used), None)
        if row is None:
            raise ValueError(Errors.E117.format(n=len(frames), length=length))
        used.add(row)
        rows.append(row)
    return rows


def _frame_spans(frame: SRLFrame, sent: Span) -> List[LabelledSpan]:
    offset = sent.start
    spans: List[LabelledSpan] = [
        (frame.predicate.start - offset, frame.predicate.end - offset, "V")
    ]
    for role in frame.roles:
        spans.append((role.start - offset, role.end - offset, role.label_))
    for start, end, label in spans:
        if start < 0 or end > len(sent):
            raise ValueError(
                Errors.E116.format(
                    predicate=frame.predicate.text,
                    label=label,
                    start=start + offset,
                    end=end + offset,
                    sent_start=sent.start,
                    sent_end=sent.end,
                )
            )
    return spans


def doc_to_conll2005(doc: Doc) -> List[List[List[str]]]:
    """The doc in CoNLL-2005 columns: per sentence, per token ``[word, lemma or "-",
    col_1, ..., col_k]`` with one bracket column per frame (``doc._.srl_frames``) of
    the sentence, in the order of their lemma rows. Raises ``ValueError`` for frames
    that cannot be written (a role outside its sentence, crossing spans)."""
    sentences = doc_sentences(doc)
    out: List[List[List[str]]] = []
    for sent, frames in zip(sentences, _sentence_frames(doc, sentences), strict=True):
        length = len(sent)
        rows = _lemma_rows(frames, sent.start, length)
        lemmas = [NOT_A_PREDICATE] * length
        columns: List[List[str]] = []
        for row, frame in sorted(zip(rows, frames, strict=True), key=lambda item: item[0]):
            token = sent[row]
            lemma = _clean(frame.lemma or token.lemma_ or token.text.lower())
            # a "-" lemma would read back as "not a predicate"
            lemmas[row] = lemma if lemma != NOT_A_PREDICATE else "_"
            columns.append(spans_to_bracket_column(length, _frame_spans(frame, sent)))
        out.append(
            [
                [_clean(token.text), lemmas[i], *(column[i] for column in columns)]
                for i, token in enumerate(sent)
            ]
        )
    return out


def padded_lines(rows: Sequence[Sequence[str]]) -> List[str]:
    """One sentence's rows as lines, each column padded to a common width and the
    columns joined by a space, as in the shared-task files (``srl-eval.pl`` and the
    reader split on any whitespace; cells never hold any)."""
    if not rows:
        return []
    widths = [max(len(row[j]) for row in rows) for j in range(len(rows[0]))]
    return [
        " ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def write_conll2005(docs: Iterable[Doc], words_path: PathLike, props_path: PathLike) -> None:
    """Write the docs as a CoNLL-2005 words file and props file (one sentence per
    block, see :func:`doc_to_conll2005`)."""
    words_path, props_path = Path(words_path), Path(props_path)
    for path in (words_path, props_path):
        path.parent.mkdir(parents=True, exist_ok=True)
    with (
        words_path.open("w", encoding="utf-8") as words_file,
        props_path.open("w", encoding="utf-8") as props_file,
    ):
        for doc in docs:
            for sentence in doc_to_conll2005(doc):
                for row in sentence:
                    words_file.write(row[0] + "\n")
                for line in padded_lines([row[1:] for row in sentence]):
                    props_file.write(line + "\n")
                words_file.write("\n")
                props_file.write("\n")
