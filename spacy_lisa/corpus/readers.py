"""``spacy-lisa.SRLCorpus.v1``: ``spacy.Corpus.v1`` for SRL training data.

``spacy.Corpus`` already keeps a reference Doc's ``user_data`` (and so its gold frames)
when it uses the Doc whole: ``DocBin.get_docs`` restores it. It loses the frames where
it cuts a Doc into sentences (``gold_preproc=True``, or ``max_length`` on a long Doc):
``Span.as_doc()`` does not copy user data, and copied frames would carry the Doc's token
offsets anyway. This reader subclasses it, cuts sentences with their frames re-based on
the sentence, and can leave out Docs without SRL annotation (``require_srl``). It can
also split whole documents into sentences as a trained pipeline does
(``sentences_from``), to score a model as it meets raw text.
"""

import logging
import random
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import spacy
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Corpus, Example
from spacy.vocab import Vocab

from ..errors import Errors, Warnings
from ..frames import has_srl_annotation, set_srl_frames
from ..patches import cached_msgpack_codecs
from ..teacher_data import TEACHER_KEY, slice_teacher
from .merging import merge_consecutive

if TYPE_CHECKING:
    from spacy.language import Language

logger = logging.getLogger("spacy_lisa")

FILE_TYPE = ".spacy"


@spacy.registry.readers("spacy-lisa.SRLCorpus.v1")
def create_srl_corpus_reader(
    path: Optional[Path],
    gold_preproc: bool,
    max_length: int = 0,
    limit: int = 0,
    augmenter: Optional[Callable] = None,
    require_srl: bool = True,
    merge_sentences: float = 0.0,
    sentences_from: Optional[str] = None,
) -> Callable[["Language"], Iterable[Example]]:
    """Read ``.spacy`` files (a file or a directory) like ``spacy.Corpus.v1``, keeping
    the gold frames of the reference docs, also on sentences cut from them.
    ``require_srl`` leaves out docs without SRL annotation (``doc._.srl_frame_data is
    None``), counted and logged once. ``merge_sentences`` (with ``gold_preproc``):
    the probability that two consecutive sentences of a document are read as one, as a
    segmenter that misses a sentence start passes them on raw text
    (:mod:`spacy_lisa.corpus.merging`); 0 reads the gold sentences. ``sentences_from``:
    a trained pipeline (path or package, e.g. the project's parser) whose predicted
    sentence boundaries the predicted docs get, the documents read whole: a dev corpus
    read this way scores a model on the sentences raw text gives it."""
    if path is None:
        raise ValueError(Errors.E124)
    return SRLCorpus(
        path,
        gold_preproc=gold_preproc,
        max_length=max_length,
        limit=limit,
        augmenter=augmenter,
        require_srl=require_srl,
        merge_sentences=merge_sentences,
        sentences_from=sentences_from,
    )


def sentence_doc(sent: Span) -> Tuple[Doc, int]:
    """``sent`` as its own Doc with the frames whose predicate starts in it, offsets
    re-based on the sentence, and the number of roles cut at the sentence boundary (a
    sentence Doc cannot hold what lies outside it; the converters never write such
    roles)."""
    if sent.start == 0 and sent.end == len(sent.doc):
        return sent.doc, 0  # the usual one-sentence Doc: nothing to cut
    doc = sent.as_doc(copy_user_data=True)
    if TEACHER_KEY in sent.doc.user_data:  # a teacher's distributions (distillation)
        doc.user_data[TEACHER_KEY] = slice_teacher(
            sent.doc.user_data[TEACHER_KEY], sent.start, sent.end
        )
    if not has_srl_annotation(sent.doc):
        set_srl_frames(doc, None)
        return doc, 0
    start, end = sent.start, sent.end
    frames = []
    n_cut = 0
    for frame in sent.doc._.srl_frame_data:
        p_start, p_end = int(frame["predicate"][0]), int(frame["predicate"][1])
        if not start <= p_start < end:
            continue
        roles = []
        for r in frame.get("roles") or ():
            r_start, r_end = int(r[0]), int(r[1])
            if r_start < start or r_end > end:
                n_cut += 1
            if r_start < end and r_end > start:
                roles.append([max(r_start, start) - start, min(r_end, end) - start, r[2]])
        frames.append(
            {
                "predicate": [p_start - start, min(p_end, end) - start],
                "roleset": frame.get("roleset"),
                "lemma": frame.get("lemma"),
                "roles": roles,
            }
        )
    set_srl_frames(doc, frames)
    return doc, n_cut


class SRLCorpus(Corpus):
    """``spacy.training.Corpus`` that keeps gold frames on sentence cuts and can require
    SRL annotation. ``n_without_srl`` counts the docs left out by ``require_srl`` in
    the last pass; ``n_roles_cut`` the role spans cut at sentence boundaries;
    ``merge_sentences`` and ``sentences_from`` are the reader options of those names."""

    def __init__(
        self,
        path: Union[str, Path],
        *,
        limit: int = 0,
        gold_preproc: bool = False,
        max_length: int = 0,
        augmenter: Optional[Callable] = None,
        shuffle: bool = False,
        require_srl: bool = True,
        merge_sentences: float = 0.0,
        sentences_from: Optional[str] = None,
    ) -> None:
        if not 0.0 <= merge_sentences < 1.0 or (merge_sentences and not gold_preproc):
            raise ValueError(Errors.E125.format(rate=merge_sentences))
        if sentences_from and (gold_preproc or max_length or merge_sentences):
            raise ValueError(Errors.E132.format(path=sentences_from))
        super().__init__(
            path,
            limit=limit,
            gold_preproc=gold_preproc,
            max_length=max_length,
            augmenter=augmenter,
            shuffle=shuffle,
        )
        self.require_srl = require_srl
        self.merge_sentences = merge_sentences
        self.sentences_from = sentences_from
        self._segmenter: Optional[Language] = None
        # the corpus is read at every evaluation: each document is split once
        self._sent_starts: Dict[str, List[bool]] = {}
        self.n_without_srl = 0
        self.n_roles_cut = 0
        self._logged = False
        self._logged_cut = False

    def read_docbin(self, vocab: Vocab, locs: Iterable[Union[str, Path]]) -> Iterator[Doc]:
        """The non-empty docs of the files (with SRL annotation if ``require_srl``), at
        most ``limit`` of them."""
        # spacy train reads the corpus again every epoch and evaluation: srsly's registry
        # scan on every msgpack call cost ~3 ms a doc, ten times the decoding itself. The
        # cache is open while this read runs (until it ends or its generator is dropped)
        with cached_msgpack_codecs():
            yield from self._read_docbin(vocab, locs)

    def _read_docbin(self, vocab: Vocab, locs: Iterable[Union[str, Path]]) -> Iterator[Doc]:
        n = 0
        self.n_without_srl = 0
        for loc in locs:
            loc = Path(loc)
            if not loc.name.endswith(FILE_TYPE):
                continue
            for doc in DocBin().from_disk(loc).get_docs(vocab):
                if len(doc) == 0:
                    continue
                if self.require_srl and not has_srl_annotation(doc):
                    self.n_without_srl += 1
                    continue
                yield doc
                n += 1
                if self.limit >= 1 and n >= self.limit:
                    self._log_skipped()
                    return
        self._log_skipped()

    def _log_skipped(self) -> None:
        # the corpus is read again every epoch / evaluation: say it once
        if self.n_without_srl and not self._logged:
            logger.warning(Warnings.W002.format(n=self.n_without_srl))
            self._logged = True

    def _sentences(self, reference: Doc) -> List[Doc]:
        docs = []
        for sent in reference.sents:
            doc, n_cut = sentence_doc(sent)
            self.n_roles_cut += n_cut
            docs.append(doc)
        if self.n_roles_cut and not self._logged_cut:
            logger.warning(
                "%d role span(s) crossed a sentence boundary and were cut to the sentence "
                "of their predicate (gold_preproc / max_length split the docs into sentences).",
                self.n_roles_cut,
            )
            self._logged_cut = True
        return docs

    def make_examples(self, nlp: "Language", reference_docs: Iterable[Doc]) -> Iterator[Example]:
        for reference in reference_docs:
            if len(reference) == 0:
                continue
            if self.max_length == 0 or len(reference) < self.max_length:
                yield self._make_example(nlp, reference, False)
            elif reference.has_annotation("SENT_START"):
                for ref_sent in self._sentences(reference):
                    if 0 < len(ref_sent) < self.max_length:
                        yield self._make_example(nlp, ref_sent, False)

    def _make_example(self, nlp: "Language", reference: Doc, gold_preproc: bool) -> Example:
        """spaCy's example, whose predicted doc also knows the gold sentence boundaries
        with ``gold_preproc`` (gold sentences are what that setting means): without
        them ``lisa_srl`` would split a gold sentence by punctuation rules (W003)."""
        example = super()._make_example(nlp, reference, gold_preproc)
        if self.sentences_from:
            starts = self._segment(example.x, self.sentences_from)
            for token, start in zip(example.x, starts, strict=True):
                token.is_sent_start = start
        if gold_preproc and len(example.x) == len(reference):
            sent_starts = (
                [bool(t.is_sent_start) for t in reference]
                if reference.has_annotation("SENT_START")
                else [True] + [False] * (len(reference) - 1)
            )
            for token, start in zip(example.x, sent_starts, strict=True):
                token.is_sent_start = start
        return example

    def _segment(self, doc: Doc, sentences_from: str) -> List[bool]:
        """The sentence starts the pipeline ``sentences_from`` predicts for ``doc``'s
        words."""
        if doc.text not in self._sent_starts:
            if self._segmenter is None:
                self._segmenter = spacy.load(sentences_from)
            words = [t.text for t in doc]
            spaces = [bool(t.whitespace_) for t in doc]
            split = self._segmenter(Doc(self._segmenter.vocab, words=words, spaces=spaces))
            if not split.has_annotation("SENT_START"):
                raise ValueError(
                    Errors.E133.format(path=sentences_from, pipes=self._segmenter.pipe_names)
                )
            self._sent_starts[doc.text] = [bool(t.is_sent_start) for t in split]
        return self._sent_starts[doc.text]

    def make_examples_gold_preproc(
        self, nlp: "Language", reference_docs: Iterable[Doc]
    ) -> Iterator[Example]:
        ref_sents = self._gold_sentences(reference_docs)
        if self.merge_sentences:
            # drawn from the global generator that spacy train seeds: reproducible
            # for a seed, other merges each time the corpus is read
            rng = random.Random(random.getrandbits(64))
            ref_sents = merge_consecutive(ref_sents, self.merge_sentences, rng=rng)
        for ref_sent in ref_sents:
            eg = self._make_example(nlp, ref_sent, True)
            if len(eg.x):
                yield eg

    def _gold_sentences(self, reference_docs: Iterable[Doc]) -> Iterator[Doc]:
        for reference in reference_docs:
            if reference.has_annotation("SENT_START"):
                yield from self._sentences(reference)
            else:
                yield reference
