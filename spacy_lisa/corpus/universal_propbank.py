"""Universal PropBank reader (CoNLL-U Plus): UD columns 1-10, column 11 the roleset of
the predicate on that row (``_`` elsewhere), then one column per predicate in sentence
order with the role label on each argument's *head word* (``_`` elsewhere); ``V`` marks
the predicate itself.

Argument spans: Universal PropBank annotates heads, not spans, so the reader has to
choose. By default (``argument_spans="head"``) an argument is its head word alone,
``[h, h + 1)``: exactly what the file says, never overlapping the predicate, and what
dependency-based SRL scoring (CoNLL-2009) compares. ``argument_spans="subtree"`` widens
each argument to the contiguous run of words around its head that lie in the head's
subtree, stopping at the predicate: closer to PropBank constituent spans. Either way
the choice applies to every argument of the file.

The predicate span is the row marked ``V`` in its column; a column without ``V`` (older
releases do not mark it) uses the row carrying the roleset. The predicate lemma is the
UD lemma of that row (the roleset's lemma part where the lemma column is empty).
"""

from __future__ import annotations

from typing import Iterator, List, Literal, Optional, Set, Tuple

from ..errors import Errors
from ._io import (
    CorpusFormatError,
    OnInvalid,
    PathLike,
    column_count_error,
    handle_invalid,
    line_error,
    props_count_error,
)
from .conllu import N_CONLLU_COLUMNS, ParsedSentence, iter_conllu_sentences, sentence_to_record
from .records import Argument, Predicate, SentenceRecord

ArgumentSpans = Literal["head", "subtree"]
NO_LABEL = "_"
VERB = "V"


def _subtree_span(
    head: int, heads: List[int], children: List[List[int]], predicate: Tuple[int, int]
) -> Tuple[int, int]:
    """The contiguous words around ``head`` that lie in its subtree, without crossing
    the predicate span."""
    subtree: Set[int] = set()
    stack = [head]
    while stack:
        node = stack.pop()
        subtree.add(node)
        stack.extend(children[node])
    start, end = head, head + 1
    blocked = set(range(*predicate))
    while start - 1 in subtree and start - 1 not in blocked:
        start -= 1
    while end in subtree and end not in blocked:
        end += 1
    return start, end


# a tree as the subtree spans read it: the heads and each word's children
Tree = Tuple[List[int], List[List[int]]]


def sentence_predicates(
    sentence: ParsedSentence,
    heads: Optional[List[int]],
    lemmas: List[str],
    *,
    path: str,
    argument_spans: ArgumentSpans = "head",
) -> List[Predicate]:
    """The predicates of a parsed CoNLL-U Plus sentence (``extra`` holds columns 11..)."""
    extra, line = sentence.extra, sentence.lines[0]
    predicate_rows = _predicate_rows(extra, path=path, line=line)
    tree = _tree(heads, path=path, line=line) if argument_spans == "subtree" else None
    return [
        _predicate(sentence, k, row, lemmas, tree, path=path)
        for k, row in enumerate(predicate_rows)
    ]


def _predicate_rows(extra: List[List[str]], *, path: str, line: int) -> List[int]:
    """The rows carrying a roleset, checked to have one predicate column each."""
    n_extra = len(extra[0])
    if n_extra == 0:
        expected = f"at least {N_CONLLU_COLUMNS + 1} (UD columns and the roleset)"
        raise column_count_error(path=path, line=line, found=N_CONLLU_COLUMNS, expected=expected)
    predicate_rows = [i for i, cols in enumerate(extra) if cols[0] != NO_LABEL]
    if n_extra - 1 != len(predicate_rows):
        raise props_count_error(
            path=path,
            line=line,
            n_pred=len(predicate_rows),
            n_cols=N_CONLLU_COLUMNS + n_extra,
            expected=(
                f"{N_CONLLU_COLUMNS + 1 + len(predicate_rows)} (10 UD columns, the "
                "roleset and one per predicate)"
            ),
        )
    return predicate_rows


def _tree(heads: Optional[List[int]], *, path: str, line: int) -> Tree:
    """The sentence's heads and children, which subtree spans need (E118 without)."""
    if heads is None:
        raise line_error(Errors.E118, path=path, line=line, reason="no_tree")
    children: List[List[int]] = [[] for _ in heads]
    for i, head in enumerate(heads):
        if head != i:
            children[head].append(i)
    return heads, children


def _predicate(
    sentence: ParsedSentence,
    k: int,
    row: int,
    lemmas: List[str],
    tree: Optional[Tree],
    *,
    path: str,
) -> Predicate:
    """The predicate of the ``k``-th predicate column, whose roleset is on ``row``."""
    labels = [cols[k + 1] for cols in sentence.extra]
    verbs = [i for i, label in enumerate(labels) if label == VERB]
    if len(verbs) > 1:
        raise line_error(
            Errors.E110,
            path=path,
            line=sentence.lines[verbs[1]],
            reason="predicate_span",
            column=N_CONLLU_COLUMNS + k + 2,
            n=len(verbs),
        )
    v = verbs[0] if verbs else row
    span = (v, v + 1)
    arguments = []
    for i, label in enumerate(labels):
        if label in (NO_LABEL, VERB):
            continue
        start, end = (i, i + 1) if tree is None else _subtree_span(i, *tree, span)
        arguments.append(Argument(start, end, label))
    roleset = sentence.extra[row][0]
    lemma = lemmas[row] or roleset.rsplit(".", 1)[0]
    return Predicate(index=row, span=span, lemma=lemma, roleset=roleset, arguments=arguments)


def read_universal_propbank(
    path: PathLike,
    *,
    argument_spans: ArgumentSpans = "head",
    on_invalid: OnInvalid = None,
) -> Iterator[SentenceRecord]:
    """Read a Universal PropBank CoNLL-U Plus file as sentence records with trees and
    SRL. Validates like :func:`spacy_lisa.corpus.conllu.read_conllu` plus the
    predicate columns."""
    if argument_spans not in ("head", "subtree"):
        raise ValueError(
            Errors.E024.format(
                value=argument_spans, option="argument_spans", choices="head, subtree"
            )
        )
    path = str(path)
    for sentence, doc_id, sent_index, start_line in iter_conllu_sentences(
        path, n_columns=None, on_invalid=on_invalid
    ):
        record = sentence_to_record(
            sentence, path=path, doc_id=doc_id, sent_index=sent_index, start_line=start_line
        )
        try:
            record.predicates = sentence_predicates(
                sentence,
                record.heads,
                record.lemmas or [""] * len(record),
                path=path,
                argument_spans=argument_spans,
            )
        except CorpusFormatError as err:
            handle_invalid(err, on_invalid, doc_id=doc_id, sent_index=sent_index)
            continue
        yield record
