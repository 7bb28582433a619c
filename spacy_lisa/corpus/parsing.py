"""Dependency trees for sentences read without one (CoNLL-2012 ``.gold_conll`` files
hold constituency brackets, CoNLL-2005 files no syntax): a spaCy pipeline's parser run on
the gold tokens (``convert conll2012|conll2005 --parser``).

Each sentence is parsed on its own as one sentence: every token but the first is preset as
no sentence start, which spaCy's parser keeps. A component that splits it all the same (a
sentencizer before the parser) leaves several roots: the later ones are attached to the
first as ``MERGED_ROOT_DEP`` (as merged training sentences are, :mod:`.merging`) and
counted (note ``parsed_roots_merged``), so no sentence boundary the gold lacks reaches
the Doc. Only the heads and labels are taken; words, POS and frames stay the file's.
"""

from __future__ import annotations

from itertools import islice
from typing import Iterable, Iterator, List, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc

from .merging import MERGED_ROOT_DEP
from .records import SentenceRecord
from .stats import CorpusStats

# sentences per nlp.pipe call: records are parsed as they stream by, a batch at a time
PARSE_BATCH = 256


def parse_records(
    records: Iterable[SentenceRecord],
    nlp: Language,
    *,
    disable: List[str],
    stats: CorpusStats,
) -> Iterator[SentenceRecord]:
    """The ``records``, each one without a tree given the parse of ``nlp`` (a pipeline
    with a parser, run without the components ``disable``, as
    :func:`~spacy_lisa.loading.load_parser` gives them) on its words. Counted in
    ``stats``: ``sentences_parsed``, and ``parsed_roots_merged`` (see the module
    docstring)."""
    iterator = iter(records)
    while batch := list(islice(iterator, PARSE_BATCH)):
        todo = [r for r in batch if r.heads is None and len(r)]
        docs = (
            Doc(nlp.vocab, words=r.words, spaces=r.spaces, sent_starts=_one_sentence(len(r)))
            for r in todo
        )
        for record, doc in zip(todo, nlp.pipe(docs, disable=disable), strict=True):
            record.heads, record.deprels = _one_tree(doc, stats)
            stats.note("sentences_parsed")
        yield from batch


def _one_sentence(n: int) -> List[Union[bool, int, None]]:
    return [i == 0 for i in range(n)]


def _one_tree(doc: Doc, stats: CorpusStats) -> Tuple[List[int], List[str]]:
    """The parse of ``doc`` as one tree (absolute heads, the root its own head)."""
    heads = [t.head.i for t in doc]
    deps = [t.dep_ for t in doc]
    roots = [i for i, head in enumerate(heads) if head == i]
    for i in roots[1:]:
        heads[i], deps[i] = roots[0], MERGED_ROOT_DEP
        stats.note("parsed_roots_merged")
    return heads, deps
