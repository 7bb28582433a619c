"""The docs an evaluation on gold tokens gives the pipeline: the gold words, spaces
and sentence boundaries (:func:`gold_preproc_doc`, like ``spacy evaluate
--gold-preproc``), with a parse injected where ``lisa_srl`` is to follow one
(:func:`with_parse`: the gold parse, or another pipeline's, :func:`parse_gold_words`)."""

from __future__ import annotations

from typing import List, Optional, Sequence, Union

from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..loading import load_parser


def _sent_starts(gold: Doc) -> Optional[List[Union[bool, int, None]]]:
    if len(gold) == 0 or not gold.has_annotation("SENT_START"):
        return None
    return [t.is_sent_start for t in gold]


def gold_preproc_doc(vocab: Vocab, gold: Doc) -> Doc:
    """A fresh doc in ``vocab`` with the gold words, spaces and sentence boundaries only
    (what the pipeline reads in an evaluation on gold tokens)."""
    return Doc(
        vocab,
        words=[t.text for t in gold],
        spaces=[bool(t.whitespace_) for t in gold],
        sent_starts=_sent_starts(gold),
    )


def with_parse(vocab: Vocab, gold: Doc, parsed: Doc, *, tags: bool = True) -> Doc:
    """A fresh doc in ``vocab`` with the gold words and ``parsed``'s heads, labels (and
    tags): the input of ``lisa_srl`` following another parse (``parse_source="doc"``)."""
    if len(gold) == 0:
        return Doc(vocab, words=[])
    tag_list = [t.tag_ for t in parsed] if tags and parsed.has_annotation("TAG") else None
    return Doc(
        vocab,
        words=[t.text for t in gold],
        spaces=[bool(t.whitespace_) for t in gold],
        heads=[t.head.i for t in parsed],
        deps=[t.dep_ for t in parsed],
        tags=tag_list,
    )


def parse_gold_words(path: str, gold_docs: Sequence[Doc], batch_size: int) -> List[Doc]:
    """Parse the gold words with another pipeline's parser (and tagger), in that
    pipeline's own vocab (its label strings live there). A pipeline that cannot be
    loaded (E317) or has no parser (E255) raises :class:`~spacy_lisa.errors.UserError`."""
    other, disable = load_parser(path)
    docs = [gold_preproc_doc(other.vocab, gold) for gold in gold_docs]
    return list(other.pipe(docs, batch_size=batch_size, disable=disable))
