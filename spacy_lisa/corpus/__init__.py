"""Readers for SRL corpus formats and the writer to spaCy DocBin.

Readers are pure functions from files to :class:`SentenceRecord`s:
:func:`~spacy_lisa.corpus.conllu.read_conllu`,
:func:`~spacy_lisa.corpus.conll2012.read_conll2012`,
:func:`~spacy_lisa.corpus.conll2005.read_conll2005`,
:func:`~spacy_lisa.corpus.universal_propbank.read_universal_propbank` and the EWT join
:func:`~spacy_lisa.corpus.ewt.join_ewt`. :mod:`~spacy_lisa.corpus.docbin` turns records
into Docs with gold frames; :mod:`~spacy_lisa.corpus.readers` registers the
``spacy-lisa.SRLCorpus.v1`` training corpus reader.
"""

from ._io import CorpusFormatError
from .records import Argument, Predicate, SentenceRecord
from .stats import CorpusStats

__all__ = ["Argument", "CorpusFormatError", "CorpusStats", "Predicate", "SentenceRecord"]
