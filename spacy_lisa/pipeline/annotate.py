"""Decoded scores -> annotations on the docs: ``lisa_srl``'s frames (with lemma, roleset
and UPOS), the parse the model followed, POS and label attention.

The model's calls on a batch of docs are decoded one at a time (:class:`Annotator`): a
call's windows fill small lists per doc (POS, parse, attention over its tokens, its
frames), and a doc is written once all its windows are decoded. A long doc cut into
several calls thus gets what one call would give it (windows are independent: attention
and the parse never cross them), while only one call's scores are held."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple, cast

import numpy as np
from spacy.tokens import Doc
from thinc.api import Ops

from ..errors import Warnings
from ..frames import set_srl_frames
from ..models.types import LisaOutput
from .batching import PredictGroup, doc_heads
from .labels import PREDICATE_SUFFIX, predicate_tag_ids
from .senses import PredicateContext, ptb_upos

if TYPE_CHECKING:
    from .labels import FrameLabelTables
    from .options import SRLOptions


@dataclass
class DocAnnotations:
    """What the decoded windows of one doc have given so far: lists over its tokens and
    its frames, linear in the doc and small beside the scores they come from."""

    pos: List[str]
    parse: Optional[Dict[str, Any]]  # None: a model without a syntactic head
    parse_source: Optional[str]  # doc._.srl_parse_source
    todo: int  # tokens whose windows are still to decode
    frames: List[Dict[str, Any]] = field(default_factory=list)
    attention: Optional[List[List[float]]] = None  # per label attention head


class Annotator:
    """Annotates ``docs`` from the model's calls on them (:meth:`add`, one call at a
    time), by the labels in ``cfg`` and the component's ``options``. Within a call,
    every frame is decoded at once (log-softmax and Viterbi over one array) and the
    rest is written with array slices per window: no per-token Python in this path."""

    def __init__(
        self,
        docs: List[Doc],
        ops: Ops,
        cfg: Dict[str, Any],
        options: SRLOptions,
        tables: FrameLabelTables,
    ) -> None:
        self.docs, self.ops, self.cfg, self.options, self.tables = docs, ops, cfg, options, tables
        self.pending: Dict[int, DocAnnotations] = {}  # docs with windows still to decode
        tags = cfg["labels"]["tags"]
        self.pos_names = np.array(
            [t.removesuffix(PREDICATE_SUFFIX) for t in tags] or [""], dtype=object
        )
        self.dep_names = np.array(list(cfg["labels"]["deps"]) or [""], dtype=object)
        self.predicate_tags = np.array(predicate_tag_ids(tags), dtype=np.int64)

    def add(self, call: PredictGroup) -> None:
        """Decode one model call's output on the docs at ``call.doc_indices`` (all of
        them or a run of their windows), which follow ``call.parse_source``; write each
        doc whose windows are all decoded."""
        # imported here: spaCy imports every factory module on Language init, keep it light
        from ..device import host_output

        doc_indices, parse_source = call.doc_indices, call.parse_source
        # on a GPU, one device-to-host copy per array of the call (the parent scores are
        # not read here): decoding, spans and labels run on numpy
        host: Any = host_output(call.output, exclude=("head_scores",))
        has_syntax = host.used_heads is not None
        states = [self._state(i, parse_source, has_syntax) for i in doc_indices]
        if len(self.cfg["labels"]["tags"]):
            fill_pos(host, states, self.pos_names)
        if has_syntax and parse_source != "doc":  # the doc's own parse was followed whole
            fill_parse(host, states, self.dep_names if len(self.cfg["labels"]["deps"]) else None)
        if host.label_attention is not None and self.options.store_attention:
            fill_attention(host, states)
        # frames after the parse: a roleset's particle ("pick_up.01") is looked for there
        self._add_frames(host, [self.docs[i] for i in doc_indices], states)
        for doc_i, start, end in host.windows:
            states[doc_i].todo -= end - start
        for i, state in zip(doc_indices, states, strict=True):
            if state.todo == 0:
                write_doc(self.docs[i], self.pending.pop(i), self.options)

    def _state(self, i: int, parse_source: str, has_syntax: bool) -> DocAnnotations:
        state = self.pending.get(i)
        if state is None:  # the doc's first window
            doc = self.docs[i]
            state = self.pending[i] = DocAnnotations(
                pos=[""] * len(doc),
                parse=start_parse(doc, parse_source, has_syntax),
                parse_source=parse_source if has_syntax else None,
                todo=len(doc),
            )
        return state

    def _add_frames(self, host: Any, docs: List[Doc], states: List[DocAnnotations]) -> None:
        """Decode every frame of a call and add those of a kept UPOS to their docs, each
        with its scores (:mod:`~spacy_lisa.decoding.confidence`); roles scoring below
        ``min_score`` are left out."""
        from ..decoding.confidence import predicate_scores
        from ..decoding.frames import decode_frames

        frames_idx = host.frames.astype(np.int64).reshape(-1, 2)
        if not len(frames_idx):
            return
        cfg, options = self.cfg, self.options
        bounds = np.asarray([w[1:] for w in host.windows], dtype=np.int64).reshape(-1, 2)
        frame_win = frames_idx[:, 0]
        decoded = decode_frames(
            host.role_scores,
            frames_idx[:, 1],
            bounds[frame_win, 1] - bounds[frame_win, 0],
            tuple(cfg["labels"]["roles"]),
            offsets=bounds[frame_win, 0],
            decoding=options.decoding,
            transitions=cfg["transitions"],
            start=cfg["start"],
            transition_weight=options.transition_weight,
            unique_core=options.unique_core_roles,
            score_temperature=options.score_temperature,
            score_calibration=options.score_calibration,
        )
        # the tag rows are the windows' tokens, unpadded, in order
        window_rows = np.cumsum([0] + [end - start for _, start, end in host.windows])
        rows = window_rows[frame_win] + frames_idx[:, 1]
        predicate_probs = predicate_scores(host.tag_scores, rows, self.predicate_tags).tolist()
        has_predicate_tags = bool(len(self.predicate_tags))
        frame_labels = frame_label_decoder(host, self.ops, cfg, self.tables)
        keep_pos, min_score = options.predicate_pos, options.min_score
        for f, (s, (predicate, roles)) in enumerate(zip(frame_win.tolist(), decoded, strict=True)):
            doc_i = host.windows[s][0]
            doc, state = docs[doc_i], states[doc_i]
            context = PredicateContext.of(doc, predicate, int(bounds[s, 1]), state.parse)
            lemma, (roleset, roleset_score), upos = frame_labels(doc, f, predicate, context)
            upos = upos or ptb_upos(state.pos[predicate[0]])
            if keep_pos is None or upos in keep_pos:
                state.frames.append(
                    {
                        "predicate": list(predicate),
                        "roleset": roleset,
                        "lemma": lemma,
                        "roles": [role for role in roles if role[3] >= min_score],
                        "score": predicate_probs[f] if has_predicate_tags else None,
                        "roleset_score": roleset_score,
                    }
                )


def start_parse(doc: Doc, parse_source: str, has_syntax: bool) -> Optional[Dict[str, Any]]:
    """``doc._.srl_parse`` before any window is decoded: none for a model without a
    syntactic head (SA, parse_layer = 0), the doc's own where it was followed (windows
    cover the doc), else self-loops without labels for the windows to fill in."""
    if not has_syntax:
        return None
    if parse_source == "doc":
        return doc_own_parse(doc)
    return {"heads": list(range(len(doc))), "deps": [""] * len(doc)}


def fill_pos(host: Any, states: Sequence[DocAnnotations], pos_names: np.ndarray) -> None:
    """The POS of each window's tokens (the argmax of the joint POS/predicate tags)."""
    tag_ids = host.tag_scores.argmax(axis=-1)
    offset = 0  # tag rows are the windows' tokens, unpadded, in order
    for doc_i, start, end in host.windows:
        states[doc_i].pos[start:end] = pos_names[tag_ids[offset : offset + end - start]].tolist()
        offset += end - start


def fill_parse(
    host: Any, states: Sequence[DocAnnotations], dep_names: Optional[np.ndarray]
) -> None:
    """The heads each window's layers followed and (``dep_names``) their labels."""
    dep_ids = host.dep_scores.argmax(axis=-1) if dep_names is not None else None
    for s, (doc_i, start, end) in enumerate(host.windows):
        parse = states[doc_i].parse
        assert parse is not None
        length = end - start
        parse["heads"][start:end] = (start + host.used_heads[s, :length].astype(np.int64)).tolist()
        if dep_ids is not None and dep_names is not None:
            parse["deps"][start:end] = dep_names[dep_ids[s, :length]].tolist()


def fill_attention(host: Any, states: Sequence[DocAnnotations]) -> None:
    """Each label attention head's weights over each window's tokens."""
    attention = host.label_attention
    for s, (doc_i, start, end) in enumerate(host.windows):
        state = states[doc_i]
        if state.attention is None:
            state.attention = [[0.0] * len(state.pos) for _ in range(attention.shape[1])]
        for h, values in enumerate(attention[s, :, : end - start].astype(np.float64).tolist()):
            state.attention[h][start:end] = values


def write_doc(doc: Doc, state: DocAnnotations, options: SRLOptions) -> None:
    """Write a doc's annotations once all its windows are decoded."""
    doc._.srl_pos = state.pos
    doc._.srl_parse = state.parse
    if options.write_pos:
        for token, tag in zip(doc, state.pos, strict=True):
            if tag and not token.tag_:
                token.tag_ = tag
    set_srl_frames(doc, state.frames, spans_key=options.spans_key)
    doc._.srl_parse_source = state.parse_source
    if state.attention is not None:
        names = [f"head_{h}" for h in range(len(state.attention))]
        doc._.srl_label_attention = {"heads": names, "weights": state.attention}
    if options.overwrite_parse and state.parse_source == "model" and state.parse:
        write_parse(doc, state.parse["heads"], state.parse["deps"])


def doc_own_parse(doc: Doc) -> Dict[str, List[Any]]:
    """The doc's own parse as ``doc._.srl_parse`` holds it: absolute heads (root: its
    own index) and labels, read as arrays rather than token by token."""
    from spacy.attrs import DEP

    strings = doc.vocab.strings
    labels = doc.to_array(DEP).tolist() if len(doc) else []
    return {"heads": doc_heads(doc).tolist(), "deps": [strings[label] for label in labels]}


def frame_label_decoder(
    out: LisaOutput, ops: Ops, cfg: Dict[str, Any], tables: FrameLabelTables
) -> Callable[
    [Doc, int, Tuple[int, int], Optional[PredicateContext]],
    Tuple[Optional[str], Tuple[Optional[str], Optional[float]], str],
]:
    """A function (doc, frame index, predicate span, context) -> (lemma, (roleset, its
    probability), UPOS or "") for the frames of one model output."""
    from ..device import to_host
    from .senses import frame_lemma

    # numpy already when called from Annotator.add (to_host copies nothing then)
    sense_scores = to_host(out.sense_scores)
    lemma_scores = to_host(out.lemma_scores)
    pos_scores = to_host(out.pred_pos_scores)
    pos_labels = cfg["pred_pos_labels"]
    trees, decoder = tables.trees, tables.senses

    def labels(
        doc: Doc, f: int, predicate: Tuple[int, int], context: Optional[PredicateContext] = None
    ) -> Tuple[Optional[str], Tuple[Optional[str], Optional[float]], str]:
        start, end = predicate
        scores_f = None if lemma_scores is None else lemma_scores[f]
        known = decoder.has_candidates if decoder is not None else None
        lemma = frame_lemma(doc, start, scores_f, trees, known)
        upos = ""
        if doc.has_annotation("POS"):
            upos = doc[start].pos_
        elif pos_scores is not None and pos_labels:
            upos = pos_labels[int(pos_scores[f].argmax())]
        if decoder is None:  # trained on data without rolesets
            return lemma, (None, None), upos
        scores = None if sense_scores is None else sense_scores[f]
        return lemma, decoder.decode(scores, lemma, context), upos

    return labels


def write_parse(doc: Doc, heads: List[int], deps: List[str]) -> None:
    """Write absolute ``heads`` / ``deps`` onto the doc's tokens (a well-formed tree per
    window, as produced by MST decoding). An arc without a label (a model trained without
    dependency labels) gets spaCy's generic ``dep``, with warning W005."""
    from spacy.attrs import DEP, HEAD

    unlabelled = sum(1 for d in deps if not d)
    if unlabelled:
        warnings.warn(Warnings.W005.format(n=unlabelled, doc=doc.text[:40]), stacklevel=2)
    array = np.zeros((len(doc), 2), dtype="uint64")
    for i, (h, d) in enumerate(zip(heads, deps, strict=True)):
        array[i, 0] = np.uint64(np.int64(h - i).astype("uint64"))
        array[i, 1] = doc.vocab.strings.add(d or "dep")
    doc.from_array([HEAD, DEP], cast(Any, array))
