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
from ._io import CorpusFormatError, OnInvalid, PathLike, handle_invalid
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


def sentence_predicates(
    sentence: ParsedSentence,
    heads: Optional[List[int]],
    lemmas: List[str],
    *,
    path: str,
    argument_spans: ArgumentSpans = "head",
) -> List[Predicate]:
    """The predicates of a parsed CoNLL-U Plus sentence (``extra`` holds columns 11..)."""
    extra, lines = sentence.extra, sentence.lines
    n_extra = len(extra[0])
    if n_extra == 0:
        raise CorpusFormatError(
            Errors.E100.format(
                path=path,
                line=lines[0],
                found=N_CONLLU_COLUMNS,
                expected=f"at least {N_CONLLU_COLUMNS + 1} (UD columns and the roleset)",
            ),
            path=path,
            line=lines[0],
            reason="column_count",
        )
    predicate_rows = [i for i, cols in enumerate(extra) if cols[0] != NO_LABEL]
    if n_extra - 1 != len(predicate_rows):
        raise CorpusFormatError(
            Errors.E107.format(
                path=path,
                line=lines[0],
                n_pred=len(predicate_rows),
                n_cols=N_CONLLU_COLUMNS + n_extra,
                expected=(
                    f"{N_CONLLU_COLUMNS + 1 + len(predicate_rows)} (10 UD columns, the "
                    "roleset and one per predicate)"
                ),
            ),
            path=path,
            line=lines[0],
            reason="props_column_count",
        )
    children: List[List[int]] = [[] for _ in extra]
    if argument_spans == "subtree":
        if heads is None:
            raise CorpusFormatError(
                Errors.E118.format(path=path, line=lines[0]),
                path=path,
                line=lines[0],
                reason="no_tree",
            )
        for i, head in enumerate(heads):
            if head != i:
                children[head].append(i)
    predicates = []
    for k, row in enumerate(predicate_rows):
        labels = [cols[k + 1] for cols in extra]
        verbs = [i for i, label in enumerate(labels) if label == VERB]
        if len(verbs) > 1:
            raise CorpusFormatError(
                Errors.E110.format(
                    path=path, line=lines[verbs[1]], column=N_CONLLU_COLUMNS + k + 2, n=len(verbs)
                ),
                path=path,
                line=lines[verbs[1]],
                reason="predicate_span",
            )
        v = verbs[0] if verbs else row
        span = (v, v + 1)
        arguments = []
        for i, label in enumerate(labels):
            if label in (NO_LABEL, VERB):
                continue
            if argument_spans == "subtree" and heads is not None:
                start, end = _subtree_span(i, heads, children, span)
            else:
                start, end = i, i + 1
            arguments.append(Argument(start, end, label))
        roleset = extra[row][0]
        predicates.append(
            Predicate(
                index=row,
                span=span,
                lemma=lemmas[row] or roleset.rsplit(".", 1)[0],
                roleset=roleset,
                arguments=arguments,
            )
        )
    return predicates


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
            err.doc_id, err.sent_index = doc_id, sent_index
            handle_invalid(err, on_invalid)
            continue
        yield record
