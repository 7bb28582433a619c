"""CoNLL-U reader: UD trees as :class:`SentenceRecord`s, validated line by line.

Field values are parsed with the ``conllu`` library (IDs, heads, MISC, comments into a
``TokenList``); the file is split into sentences here so that every error can name its
line, which ``conllu.parse_incr`` does not track. Columns are split on tabs only, as
the CoNLL-U spec says (``conllu.parse_line`` also splits on double spaces, which would
break word forms that contain them).

Multiword-token lines (``1-2``) and empty nodes (``3.1``) are skipped; the records hold
the syntactic words. Checked: the column count, integer IDs numbered 1..n, heads in
range and free of cycles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from conllu.exceptions import ParseException
from conllu.models import Metadata, Token, TokenList
from conllu.parser import parse_comment_line, parse_dict_value, parse_id_value, parse_int_value

from ..errors import Errors
from ._io import (
    CorpusFormatError,
    OnInvalid,
    PathLike,
    column_count_error,
    handle_invalid,
    iter_blocks,
    line_error,
    read_lines,
)
from .records import SentenceRecord

CONLLU_FIELDS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")
N_CONLLU_COLUMNS = len(CONLLU_FIELDS)

Block = Sequence[Tuple[int, str]]


@dataclass
class ParsedSentence:
    """One validated CoNLL-U sentence: the syntactic words as a ``conllu`` TokenList,
    the file line of each word and the columns after the tenth (CoNLL-U Plus)."""

    tokens: TokenList
    lines: List[int]
    extra: List[List[str]] = field(default_factory=list)

    @property
    def metadata(self) -> Metadata:
        return self.tokens.metadata


def block_metadata(block: Block) -> Metadata:
    """The comment lines of a block (``# key = value``) as ``conllu`` metadata."""
    metadata = Metadata()
    for _, line in block:
        if line.startswith("#"):
            for key, value in parse_comment_line(line):
                metadata[key] = value
    return metadata


def block_doc_id(metadata: Dict[str, Any]) -> Tuple[bool, Optional[str]]:
    """Whether the block starts a new document, and the document's id."""
    if "newdoc id" in metadata:
        return True, metadata["newdoc id"]
    if "newdoc" in metadata:
        return True, None
    return False, None


def parse_conllu_block(
    block: Block,
    *,
    path: str,
    n_columns: Optional[int] = N_CONLLU_COLUMNS,
    metadata: Optional[Metadata] = None,
) -> Optional[ParsedSentence]:
    """Validate and parse one sentence block (``None`` for a comment-only block).
    ``n_columns=None`` accepts CoNLL-U Plus lines with more than ten columns, as long as
    all lines of the sentence have the same number."""
    if metadata is None:
        metadata = block_metadata(block)
    tokens: List[Token] = []
    lines: List[int] = []
    extra: List[List[str]] = []
    for number, line in block:
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        if n_columns is None and len(cols) >= N_CONLLU_COLUMNS:
            n_columns = len(cols)  # CoNLL-U Plus: the first line sets the count
        if len(cols) != n_columns:
            expected = n_columns or f"at least {N_CONLLU_COLUMNS}"
            raise column_count_error(path=path, line=number, found=len(cols), expected=expected)
        token_id = _word_id(cols[0], len(tokens) + 1, path=path, line=number)
        if token_id is None:  # multiword token (1-2) or empty node (3.1)
            continue
        tokens.append(_word(cols, token_id, block, path=path, line=number))
        lines.append(number)
        extra.append(cols[N_CONLLU_COLUMNS:])
    if not tokens:
        return None
    _check_tree(tokens, lines, path)
    return ParsedSentence(TokenList(tokens, metadata), lines, extra)


def _word_id(value: str, expected: int, *, path: str, line: int) -> Optional[int]:
    """The ID of a word line, checked to be the next one (``expected``); ``None`` for a
    multiword token (``1-2``) or an empty node (``3.1``), which hold no syntactic word."""
    try:
        token_id = parse_id_value(value)
    except ParseException:
        token_id = None
    if token_id is None:
        raise line_error(Errors.E101, path=path, line=line, reason="token_id", value=value)
    if not isinstance(token_id, int):
        return None
    if token_id != expected:
        raise line_error(
            Errors.E104, path=path, line=line, reason="token_id", found=token_id, expected=expected
        )
    return token_id


def _word(cols: List[str], token_id: int, block: Block, *, path: str, line: int) -> Token:
    """The ``conllu`` token of the word line ``cols`` (its head an integer or ``None``)."""
    try:
        head = parse_int_value(cols[6])
    except ParseException:
        n = _count_words(block)
        raise line_error(
            Errors.E102, path=path, line=line, reason="head", head=cols[6], id=token_id, n=n
        ) from None
    try:
        misc = parse_dict_value(cols[9])
    except ParseException:  # a malformed MISC only costs us SpaceAfter: keep it raw
        misc = {cols[9]: None}
    return Token(
        id=token_id,
        form=cols[1],
        lemma=cols[2],
        upos=cols[3],
        xpos=None if cols[4] == "_" else cols[4],
        feats=cols[5],  # kept as the raw string: spaCy's MORPH takes it as is
        head=head,
        deprel=cols[7],
        deps=cols[8],
        misc=misc,
    )


def _count_words(block: Block) -> int:
    return sum(1 for _, line in block if line.split("\t", 1)[0].isdigit())


def _check_tree(tokens: List[Token], lines: List[int], path: str) -> None:
    """Heads all given (or all ``_``), in range, and free of cycles."""
    n = len(tokens)
    heads = [t["head"] for t in tokens]
    if all(h is None for h in heads):
        return  # no tree at all: allowed, the record then has no heads
    for token, head, line in zip(tokens, heads, lines, strict=True):
        if head is None or not 0 <= head <= n:
            shown = "_" if head is None else head
            raise line_error(
                Errors.E102, path=path, line=line, reason="head", head=shown, id=token["id"], n=n
            )
    # walk up from every word; state 1 = on the current path, 2 = known to reach the root
    state = [0] * (n + 1)
    state[0] = 2
    for start in range(1, n + 1):
        path_ids = []
        node = start
        while state[node] == 0:
            state[node] = 1
            path_ids.append(node)
            node = heads[node - 1]
        if state[node] == 1:  # came back to a word on this path: a cycle
            cycle = path_ids[path_ids.index(node) :]
            line = lines[cycle[0] - 1]
            shown = " -> ".join(str(i) for i in cycle + [node])
            raise line_error(Errors.E103, path=path, line=line, reason="head_cycle", cycle=shown)
        for node in path_ids:
            state[node] = 2


def sentence_to_record(
    sentence: ParsedSentence,
    *,
    path: str,
    doc_id: Optional[str],
    sent_index: int,
    start_line: int,
) -> SentenceRecord:
    """The record of a parsed sentence: heads 0-based with the root pointing to itself,
    ``root`` renamed ``ROOT`` (as spaCy's conllu converter does)."""
    tokens = sentence.tokens
    has_tree = tokens[0]["head"] is not None
    heads: Optional[List[int]] = None
    deprels: Optional[List[str]] = None
    if has_tree:
        heads = [t["head"] - 1 if t["head"] else i for i, t in enumerate(tokens)]
        deprels = ["ROOT" if t["deprel"] == "root" else t["deprel"] for t in tokens]
    return SentenceRecord(
        words=[t["form"] for t in tokens],
        spaces=[not (t["misc"] and t["misc"].get("SpaceAfter") == "No") for t in tokens],
        lemmas=[_value(t["lemma"], t["form"]) for t in tokens],
        upos=[_value(t["upos"]) for t in tokens],
        xpos=[t["xpos"] or "" for t in tokens],
        morphs=[_value(t["feats"]) for t in tokens],
        heads=heads,
        deprels=deprels,
        predicates=None,
        doc_id=doc_id,
        sent_id=sentence.metadata.get("sent_id"),
        sent_index=sent_index,
        path=path,
        line=start_line,
    )


def _value(value: Optional[str], form: Optional[str] = None) -> str:
    """``_`` means unspecified, except for the lemma of the word ``_`` itself."""
    if value is None or (value == "_" and form != "_"):
        return ""
    return value


def iter_conllu_sentences(
    path: PathLike,
    *,
    n_columns: Optional[int] = N_CONLLU_COLUMNS,
    on_invalid: OnInvalid = None,
) -> Iterator[Tuple[ParsedSentence, Optional[str], int, int]]:
    """``(sentence, doc id, index in document, first line)`` for each valid sentence.
    Invalid sentences raise or go to ``on_invalid`` and still take up their index."""
    path = str(path)
    doc_id: Optional[str] = None
    sent_index = 0
    for start_line, block in iter_blocks(read_lines(path)):
        metadata = block_metadata(block)
        new_doc, new_id = block_doc_id(metadata)
        if new_doc:
            doc_id, sent_index = new_id, 0
        try:
            sentence = parse_conllu_block(block, path=path, n_columns=n_columns, metadata=metadata)
        except CorpusFormatError as err:
            handle_invalid(err, on_invalid, doc_id=doc_id, sent_index=sent_index)
            sent_index += 1
            continue
        if sentence is None:  # comments only, e.g. a file header
            continue
        yield sentence, doc_id, sent_index, start_line
        sent_index += 1


def read_conllu(path: PathLike, *, on_invalid: OnInvalid = None) -> Iterator[SentenceRecord]:
    """Read a CoNLL-U file as sentence records (no SRL: ``predicates`` is ``None``).
    ``doc_id`` comes from ``# newdoc id``, ``sent_id`` from ``# sent_id``. Errors raise
    :class:`CorpusFormatError` unless ``on_invalid`` takes them (the sentence is then
    skipped)."""
    path = str(path)
    for sentence, doc_id, sent_index, start_line in iter_conllu_sentences(
        path, on_invalid=on_invalid
    ):
        yield sentence_to_record(
            sentence, path=path, doc_id=doc_id, sent_index=sent_index, start_line=start_line
        )
