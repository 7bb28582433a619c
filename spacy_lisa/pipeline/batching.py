"""Docs and Examples -> the model's :class:`~spacy_lisa.models.types.LisaBatch`: encoder
windows, the parse the syntactic head follows, and the predicates."""

from __future__ import annotations

import warnings
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, cast

import numpy as np
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Model
from thinc.types import Ints1d

from ..alignment import one_to_one
from ..errors import Errors, Warnings
from ..frames import has_sentences, predicate_starts, sentence_bounds
from ..models.types import TEACHER_FORCING_MODES, LisaBatch, LisaOutput
from .options import SRLOptions


def ints1d(values: Sequence[int]) -> Ints1d:
    return cast(Ints1d, np.asarray(values, dtype="i"))


class Windower:
    """Splits docs into encoder windows; warns once (per component) about a sentence
    longer than ``max_length`` (W001) and about a doc split by rule (W003)."""

    def __init__(self) -> None:
        self.warned_long = False
        self.warned_unsegmented = False
        self._sentencizer: Optional[Any] = None

    def __call__(
        self,
        doc: Doc,
        max_length: int,
        reference: Optional[Doc] = None,
        *,
        segment: bool = False,
    ) -> List[Tuple[int, int]]:
        """Encoder windows of ``doc``: its sentences (:func:`~spacy_lisa.frames.doc_sentences`:
        the whole doc where it has none), split at ``max_length``. Where ``doc`` has no
        sentence boundaries, the reference's are taken when the tokenisations match
        (training); else at prediction (``segment``) it is split by punctuation rules,
        with warning W003 once, so roles never run across sentences the user did not
        mark."""
        if len(doc) == 0:
            return []
        sentences = doc  # the doc whose sentences (frames.doc_sentences) are taken
        if (
            not has_sentences(doc)
            and reference is not None
            and has_sentences(reference)
            and [t.text for t in reference] == [t.text for t in doc]
        ):
            sentences = reference
        if segment and not has_sentences(sentences):
            bounds = self._rule_sentences(doc)
        else:
            bounds = sentence_bounds(sentences)
        windows: List[Tuple[int, int]] = []
        for start, end in bounds:
            if end - start > max_length and not self.warned_long:
                warnings.warn(
                    Warnings.W001.format(
                        doc=doc.text[:40], length=end - start, max_length=max_length
                    ),
                    stacklevel=4,  # LisaSRL.predict / LisaSRL.update
                )
                self.warned_long = True
            for s in range(start, end, max_length):
                windows.append((s, min(s + max_length, end)))
        return windows

    def _rule_sentences(self, doc: Doc) -> List[Tuple[int, int]]:
        """Sentence bounds of a doc without them, by spaCy's punctuation rules (the
        ``sentencizer``'s), computed without writing them to the doc."""
        if self._sentencizer is None:  # built on first use: most docs have sentences
            from spacy.pipeline import Sentencizer

            self._sentencizer = Sentencizer()
        guesses = self._sentencizer.predict([doc])[0]
        starts = [i for i, start in enumerate(guesses) if start or i == 0]
        bounds = list(zip(starts, starts[1:] + [len(doc)], strict=True))
        if len(bounds) > 1 and not self.warned_unsegmented:
            warnings.warn(Warnings.W003.format(doc=doc.text[:40]), stacklevel=5)  # LisaSRL.predict
            self.warned_unsegmented = True
        return bounds


def train_batch(examples: Sequence[Example], options: SRLOptions, windower: Windower) -> LisaBatch:
    """The training batch of ``examples``: gold predicates and, where the reference has
    one, the gold parse (for teacher forcing), on the predicted tokens."""
    docs = [eg.predicted for eg in examples]
    windows, heads, predicates = [], [], []
    any_gold_parse = False
    for eg in examples:
        p2r, r2p = one_to_one(eg)
        ref = eg.reference
        windows.append(windower(eg.predicted, options.max_length, ref))
        gold_heads = np.full(len(eg.predicted), -1, dtype="i")
        if ref.has_annotation("DEP"):
            any_gold_parse = True
            for i, j in enumerate(p2r):
                if j >= 0:
                    gold_heads[i] = r2p[ref[int(j)].head.i]
        heads.append(cast(Ints1d, gold_heads))
        preds = sorted({int(r2p[start]) for start in predicate_starts(ref) if r2p[start] >= 0})
        predicates.append(ints1d(preds))
    mode = TEACHER_FORCING_MODES[options.teacher_forcing]
    if not any_gold_parse:
        mode = "argmax"
    return LisaBatch(
        docs=docs, windows=windows, heads=heads, predicates=predicates, parse_mode=mode
    )


def resolve_parse_source(doc: Doc, parse_source: str) -> str:
    """``"doc"`` or ``"model"``: the parse the component follows on ``doc``."""
    if parse_source == "auto":
        return "doc" if doc.has_annotation("DEP") else "model"
    if parse_source == "doc" and not doc.has_annotation("DEP"):
        raise ValueError(Errors.E022.format(doc=doc.text[:40]))
    return parse_source


def doc_heads(doc: Doc) -> Ints1d:
    """Absolute head index of every token of ``doc`` (root: its own index), from the
    doc's arrays (``token.head.i`` without making a Token per token)."""
    from spacy.attrs import HEAD

    if len(doc) == 0:
        return ints1d([])
    # HEAD is stored relative to the token, as uint64 (negative offsets wrap around)
    relative = doc.to_array(HEAD).astype(np.int64)
    return cast(Ints1d, (np.arange(len(doc), dtype=np.int64) + relative).astype("i"))


def doc_predicates(doc: Doc) -> Ints1d:
    marked = doc._.srl_predicates
    if marked is None:
        raise ValueError(Errors.E023.format(doc=doc.text[:40]))
    return ints1d(sorted(marked))


def predict_batch(
    docs: List[Doc],
    parse_source: str,
    options: SRLOptions,
    windows: List[List[Tuple[int, int]]],
) -> LisaBatch:
    """The batch of docs that follow one parse source (``"doc"`` or ``"model"``), with
    their encoder windows."""
    predicates = None
    if options.predicate_source == "doc":
        predicates = [doc_predicates(d) for d in docs]
    if parse_source == "doc":
        return LisaBatch(
            docs=docs,
            windows=windows,
            heads=[doc_heads(d) for d in docs],
            predicates=predicates,
            parse_mode="given",
            dep_labels=False,  # the doc's own labels are written (annotate_group)
        )
    return LisaBatch(
        docs=docs, windows=windows, predicates=predicates, parse_mode=options.model_parse
    )


@dataclass
class PredictGroup:
    """One model call at prediction and its output: docs that share a parse source, or
    a run of the windows of one long doc (its other windows are other calls)."""

    doc_indices: List[int]
    output: LisaOutput
    parse_source: str  # what is written to doc._.srl_parse_source


# A doc's index and the run of its windows that one model call encodes
Piece = Tuple[int, List[Tuple[int, int]]]


class LisaPrediction:
    """What :meth:`~.srl_component.LisaSRL.predict` returns and ``set_annotations``
    reads: the model calls on a list of docs, run one at a time as they are iterated
    (each pass runs them again), so that annotating decodes a call's output before the
    next call runs and holds one call's scores at a time, however long the docs are.
    :attr:`groups` runs the calls and keeps their outputs, to inspect the scores."""

    def __init__(
        self,
        docs: List[Doc],
        model: Model,
        options: SRLOptions,
        calls: List[Tuple[str, List[Piece]]],
    ) -> None:
        self.docs, self.model, self.options, self.calls = docs, model, options, calls
        self._groups: Optional[List[PredictGroup]] = None

    @property
    def groups(self) -> List[PredictGroup]:
        if self._groups is None:
            self._groups = list(self._run())
        return self._groups

    def __iter__(self) -> Iterator[PredictGroup]:
        return iter(self._groups) if self._groups is not None else self._run()

    def _run(self) -> Iterator[PredictGroup]:
        whole: Optional[LisaBatch] = None  # the doc being cut into parts, if any
        for source, pieces in self.calls:
            indices = [i for i, _ in pieces]
            docs = [self.docs[i] for i in indices]
            doc, first_windows = docs[0], pieces[0][1]
            if len(pieces) == 1 and is_part(doc, first_windows):
                if whole is None or whole.docs[0] is not doc:
                    # its heads, predicates and token vectors once, for all its parts
                    # (each part sets its windows: window_run)
                    whole = replace(
                        predict_batch([doc], source, self.options, [[]]), vectors={}, parts=True
                    )
                batch = window_run(whole, first_windows)
            else:
                whole = None
                batch = predict_batch(docs, source, self.options, [w for _, w in pieces])
                batch.vectors = {}  # overwrite_parse's second call runs no tok2vec
            yield PredictGroup(indices, _predict(batch, self.model, self.options, source), source)


def is_part(doc: Doc, windows: List[Tuple[int, int]]) -> bool:
    """Whether ``windows`` cover only a part of ``doc`` (a long doc cut into calls)."""
    return windows[0][0] > 0 or windows[-1][1] < len(doc)


def predict_groups(
    docs: List[Doc], model: Model, options: SRLOptions, windower: Windower
) -> LisaPrediction:
    """The model's calls on ``docs``, grouped by the parse they follow and cut into
    calls of similar window lengths (:func:`length_chunks`); empty docs are in none.
    The windows are found now (W001 and W003 are the caller's); the calls run when
    iterated."""
    windows = prediction_windows(docs, options, windower)
    by_source: Dict[str, List[int]] = defaultdict(list)
    for i in windows:
        by_source[resolve_parse_source(docs[i], options.parse_source)].append(i)
    calls = [
        (source, pieces)
        for source, source_indices in by_source.items()
        for pieces in length_chunks(source_indices, windows)
    ]
    return LisaPrediction(docs, model, options, calls)


def window_run(batch: LisaBatch, windows: List[Tuple[int, int]]) -> LisaBatch:
    """``batch`` of one doc cut to a run of its ``windows`` (with the predicates in it)."""
    start, end = windows[0][0], windows[-1][1]
    predicates = None
    if batch.predicates is not None:
        marked = np.asarray(batch.predicates[0])
        predicates = [cast(Ints1d, marked[(marked >= start) & (marked < end)])]
    return replace(batch, windows=[windows], predicates=predicates)


def prediction_windows(
    docs: List[Doc], options: SRLOptions, windower: Windower
) -> Dict[int, List[Tuple[int, int]]]:
    """Encoder windows of every non-empty doc, by index (docs without sentence boundaries
    are split by rule)."""
    windows: Dict[int, List[Tuple[int, int]]] = {}
    for i, doc in enumerate(docs):  # a loop: a comprehension's frame would shift stacklevel
        if len(doc):
            windows[i] = windower(doc, options.max_length, segment=True)
    return windows


# padded tokens (windows x longest window) per model call at prediction. The encoder's
# token-wise layers run on the real tokens only (lisa_torch's packing), so padding costs
# only attention and the role scorer: 1,024 beat 512 (before packing's best), 1,536,
# 2,048 and 3,072 on EWT dev sentences, one thread. It also bounds a call's scores (and
# so prediction's memory): a longer doc is cut into calls of its own
PREDICT_CHUNK_TOKENS = 1024


def length_chunks(
    indices: List[int],
    windows: Dict[int, List[Tuple[int, int]]],
    max_padded: Optional[int] = None,
) -> List[List[Piece]]:
    """Split docs into model calls of similar window lengths: the encoder pads every
    window of a call to the longest, so a batch of sentences of 3 to 60 tokens spends
    most of its matmuls (and, quadratically, its attention) on padding. Docs are sorted
    by their longest window and cut where ``windows x longest`` would pass
    ``max_padded`` (default ``PREDICT_CHUNK_TOKENS``). A doc over it is cut into runs
    of windows that fit (at least one window each), each a call of its own, in order."""
    if max_padded is None:
        max_padded = PREDICT_CHUNK_TOKENS
    longest = {i: max(end - start for start, end in windows[i]) for i in indices}
    chunks: List[List[Piece]] = []
    current: List[Piece] = []
    n_windows = 0
    for i in sorted(indices, key=lambda i: longest[i], reverse=True):
        if len(windows[i]) * longest[i] > max_padded:
            per_call = max(1, max_padded // longest[i])
            chunks.extend(
                [(i, windows[i][k : k + per_call])] for k in range(0, len(windows[i]), per_call)
            )
            continue
        # the first doc of a chunk is its longest (descending order)
        width = longest[current[0][0]] if current else longest[i]
        if current and (n_windows + len(windows[i])) * width > max_padded:
            chunks.append(current)
            current, n_windows = [], 0
        current.append((i, windows[i]))
        n_windows += len(windows[i])
    if current:
        chunks.append(current)
    return chunks


def _predict(batch: LisaBatch, model: Model, options: SRLOptions, source: str) -> LisaOutput:
    output = model.predict(batch)
    if source == "model" and options.overwrite_parse and output.used_heads is not None:
        # decode the own parse as a tree, then let the model follow that tree, so
        # the tree written to the doc, the labels scored for it and the parse the
        # roles followed are one and the same
        output = model.predict(tree_batch(batch, model, output))
    return output


def tree_batch(batch: LisaBatch, model: Model, output: LisaOutput) -> LisaBatch:
    """``batch`` following the maximum spanning tree of ``output``'s parent scores (a
    well-formed tree per window, root = self-loop) instead of the model's own parse
    (tokens outside the batch's windows, in a part of a doc: their own heads)."""
    from ..decoding.tree import mst_decode

    head_scores = model.ops.to_numpy(output.head_scores)
    heads = [np.arange(len(doc), dtype="i") for doc in batch.docs]
    for s, (doc_i, w_start, w_end) in enumerate(output.windows):
        n = w_end - w_start
        heads[doc_i][w_start:w_end] = w_start + np.asarray(
            mst_decode(head_scores[s, :n, :n]), dtype="i"
        )
    return replace(batch, heads=[cast(Ints1d, h) for h in heads], parse_mode="given")
