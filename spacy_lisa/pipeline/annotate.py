"""Decoded scores -> annotations on the docs: ``lisa_srl``'s frames (with lemma, roleset
and UPOS), the parse the model followed, POS and label attention."""

from __future__ import annotations

import warnings
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, cast

import numpy as np
from spacy.tokens import Doc
from thinc.api import Ops

from ..errors import Warnings
from ..frames import set_srl_frames
from ..models.types import LisaOutput
from .batching import doc_heads
from .labels import PREDICATE_SUFFIX
from .senses import PredicateContext, ptb_upos

if TYPE_CHECKING:
    from .labels import FrameLabelTables
    from .options import SRLOptions


def annotate_group(
    docs: List[Doc],
    out: LisaOutput,
    parse_source: str,
    ops: Ops,
    cfg: Dict[str, Any],
    options: SRLOptions,
    tables: FrameLabelTables,
) -> None:
    """Annotate ``docs`` from ``out``, the model's output on them (one predict group:
    docs that follow one ``parse_source``), by the labels in ``cfg`` and the component's
    ``options``. Decode every frame of the group at once
    (log-softmax and Viterbi over one array), then write frames, the parse used, POS
    and attention with array slices per window: no per-token Python in this path."""
    # imported here: spaCy imports every factory module on Language init, keep it light
    from ..device import host_output
    from .decoding import decode_frames

    # on a GPU, one device-to-host copy per array of the group (the parent scores are not
    # read here): decoding, spans and labels run on numpy
    host: Any = host_output(out, exclude=("head_scores",))
    tags = tuple(cfg["labels"]["tags"])
    deps = tuple(cfg["labels"]["deps"])
    tag_ids = host.tag_scores.argmax(axis=-1) if len(tags) else None
    used_heads = host.used_heads
    has_syntax = used_heads is not None
    # the doc's own labels are written where its parse was followed (no label scores)
    dep_ids = host.dep_scores.argmax(axis=-1) if deps and parse_source != "doc" else None
    frames_idx = host.frames.astype(np.int64).reshape(-1, 2)
    attention = host.label_attention
    frame_labels = frame_label_decoder(host, ops, cfg, tables)
    # frames: every frame of the group decoded at once
    win_doc = [w[0] for w in host.windows]
    win_bounds = np.asarray([w[1:] for w in host.windows], dtype=np.int64).reshape(-1, 2)
    frame_win = frames_idx[:, 0]
    decoded: List[Any] = []
    if len(frames_idx):
        decoded = decode_frames(
            host.role_scores,
            frames_idx[:, 1],
            win_bounds[frame_win, 1] - win_bounds[frame_win, 0],
            tuple(cfg["labels"]["roles"]),
            offsets=win_bounds[frame_win, 0],
            decoding=options.decoding,
            transitions=cfg["transitions"],
            start=cfg["start"],
            transition_weight=options.transition_weight,
            unique_core=options.unique_core_roles,
        )
    # per window: array slices
    pos_names = np.array([t.removesuffix(PREDICATE_SUFFIX) for t in tags] or [""], dtype=object)
    dep_names = np.array(list(deps) or [""], dtype=object)
    store_attention = attention is not None and options.store_attention
    token_offset = 0
    attn_by_doc: Dict[int, List[List[float]]] = {}
    pos_by_doc: Dict[int, List[str]] = {}
    parse_by_doc: Dict[int, Any] = {}
    for s, (doc_i, w_start, w_end) in enumerate(host.windows):
        doc = docs[doc_i]
        length = w_end - w_start
        if doc_i not in pos_by_doc:  # the doc's first window
            pos_by_doc[doc_i] = [""] * len(doc)
            # a model without a syntactic head (SA, parse_layer = 0) follows no parse;
            # one that followed the doc's parse followed all of it (windows cover the doc)
            if not has_syntax:
                parse_by_doc[doc_i] = None
            elif parse_source == "doc":
                parse_by_doc[doc_i] = doc_own_parse(doc)
            else:
                parse_by_doc[doc_i] = {"heads": list(range(len(doc))), "deps": [""] * len(doc)}
        parse = parse_by_doc[doc_i]
        if parse is not None and used_heads is not None and parse_source != "doc":
            heads = w_start + used_heads[s, :length].astype(np.int64)
            parse["heads"][w_start:w_end] = heads.tolist()
            if dep_ids is not None:
                parse["deps"][w_start:w_end] = dep_names[dep_ids[s, :length]].tolist()
        if tag_ids is not None:
            window_tags = tag_ids[token_offset : token_offset + length]
            pos_by_doc[doc_i][w_start:w_end] = pos_names[window_tags].tolist()
        if store_attention:
            assert attention is not None
            rows = attn_by_doc.setdefault(
                doc_i, [[0.0] * len(doc) for _ in range(attention.shape[1])]
            )
            for h, values in enumerate(attention[s, :, :length].astype(np.float64).tolist()):
                rows[h][w_start:w_end] = values
        token_offset += length
    # frames after the parse: a roleset's particle ("pick_up.01") is looked for there
    frames_by_doc: Dict[int, List[Dict[str, Any]]] = defaultdict(list)
    for f, (s, (predicate, frame_roles)) in enumerate(
        zip(frame_win.tolist(), decoded, strict=True)
    ):
        doc_i = win_doc[s]
        context = PredicateContext.of(
            docs[doc_i], predicate, int(win_bounds[s, 1]), parse_by_doc.get(doc_i)
        )
        lemma, roleset, upos = frame_labels(docs[doc_i], f, predicate, context)
        frames_by_doc[doc_i].append(
            {
                "predicate": list(predicate),
                "roleset": roleset,
                "lemma": lemma,
                "roles": frame_roles,
                "_pos": upos,
            }
        )
    keep_pos = options.predicate_pos
    for doc_i, doc in enumerate(docs):
        pos = pos_by_doc.get(doc_i)
        if pos is not None:
            doc._.srl_pos = pos
            doc._.srl_parse = parse_by_doc[doc_i]
            if options.write_pos and tag_ids is not None:
                for token, tag in zip(doc, pos, strict=True):
                    if tag and not token.tag_:
                        token.tag_ = tag
        frames = []
        for frame in frames_by_doc.get(doc_i, []):
            start = frame["predicate"][0]
            upos = frame.pop("_pos") or ptb_upos(pos[start] if pos else "")
            if keep_pos is None or upos in keep_pos:
                frames.append(frame)
        set_srl_frames(doc, frames, spans_key=options.spans_key)
        doc._.srl_parse_source = parse_source if has_syntax else None
        if doc_i in attn_by_doc:
            names = [f"head_{h}" for h in range(len(attn_by_doc[doc_i]))]
            doc._.srl_label_attention = {"heads": names, "weights": attn_by_doc[doc_i]}
        if options.overwrite_parse and parse_source == "model" and doc._.srl_parse:
            write_parse(doc, doc._.srl_parse["heads"], doc._.srl_parse["deps"])


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
    Tuple[Optional[str], Optional[str], str],
]:
    """A function (doc, frame index, predicate span, context) -> (lemma, roleset, UPOS
    or "") for the frames of one model output."""
    from ..device import to_host
    from .senses import frame_lemma

    # numpy already when called from annotate_group (to_host copies nothing then)
    sense_scores = to_host(out.sense_scores)
    lemma_scores = to_host(out.lemma_scores)
    pos_scores = to_host(out.pred_pos_scores)
    pos_labels = cfg["pred_pos_labels"]
    trees, decoder = tables.trees, tables.senses

    def labels(
        doc: Doc, f: int, predicate: Tuple[int, int], context: Optional[PredicateContext] = None
    ) -> Tuple[Optional[str], Optional[str], str]:
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
            return lemma, None, upos
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
