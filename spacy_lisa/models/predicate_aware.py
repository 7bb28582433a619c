"""``spacy-lisa.PredicateAwareLISA.v1``: LISA with the roles of each predicate scored from
an encoding of its window in which that predicate is marked, as transformer SRL systems
do (Shi & Lin 2019; AllenNLP's BERT SRL passes the verb as BERT's token type).

Two calls of the torch network per batch:

1. the sentence pass without the role scorer: the joint POS/predicate tags, the
   predicates (predicted, or the given ones: gold in training, ``doc._.srl_predicates``
   with ``predicate_source = "doc"``), the parse and the per-predicate classifiers
   (roleset, lemma, UPOS);
2. one row per predicate: its window, encoded again with the predicate marked, following
   the parse the first call used. With ``reencode`` and a tok2vec that takes marks
   (``TransformerTok2Vec.v1``: the predicate's wordpieces get token type 1, or a learned
   indicator on their input embeddings where the encoder has no second token type:
   ``predicate_mark``) the tok2vec runs again on the marked windows; otherwise
   (``reencode = false``, or spaCy's ``Tok2Vec``) the first call's token vectors are
   reused and the mark is the learned marker at the LISA encoder's input only. The
   layers above the tok2vec, the syntactic head's parse injection included, run per
   predicate in both.

A predicate's roles depend on its window, the parse and the predicate only, not on which
other predicates the sentence has. The output has the single pass's shape (role scores
padded to the first call's window length), so the component, the loss and decoding are
the same for both architectures.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, List, Optional, Tuple, cast

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d, Floats3d

from ..patches import torch_gemm
from ..signatures import with_fields_as_parameters
from .lisa import check_removed_sizes, encode_tokens, lisa_model, tok2vec_layer
from .lisa_batch import PaddedBatch, ScoreRequest, host_ints, pad_windows
from .lisa_convert import empty_output
from .types import MASK_VALUE, LisaBatch, LisaOutput, LisaSizes


@registry.architectures("spacy-lisa.PredicateAwareLISA.v1")
@with_fields_as_parameters(LisaSizes, defaults=True)
def build_predicate_aware_lisa(
    tok2vec: Model[List[Doc], List[Floats2d]],
    *,
    reencode: bool = True,
    role_scorer: Optional[Callable[[int, int], Any]] = None,
    top_layer: Optional[Callable[[int], Any]] = None,
    detach_frame_heads: bool = False,
    **sizes: Any,
) -> Model[LisaBatch, LisaOutput]:
    """LISA whose roles are scored per predicate, from its window encoded with the
    predicate marked. The sizes and parts are those of ``spacy-lisa.LISA.v1`` (see
    :func:`~.lisa.build_lisa_model`). reencode: run the tok2vec again on each
    predicate's marked window where it takes a mark (``TransformerTok2Vec.v1``); false,
    the mark is added at the LISA encoder's input only (one tok2vec pass per sentence).
    detach_frame_heads: removed, false only (E051), so that configs saved with it load.
    """
    from ..device import check_torch_follows_thinc

    check_removed_sizes("spacy-lisa.PredicateAwareLISA.v1", detach_frame_heads)
    check_torch_follows_thinc("spacy-lisa.PredicateAwareLISA.v1")
    return lisa_model(
        "lisa_predicate_aware",
        forward,
        tok2vec,
        LisaSizes(**sizes),
        role_scorer=role_scorer,
        top_layer=top_layer,
        predicate_marker=True,
        attrs={"reencode": reencode},
    )


def reencodes_predicates(model: Model) -> bool:
    """True when the second pass runs the tok2vec again on marked windows: ``reencode``
    with a tok2vec that takes marks (``attrs["marks_predicates"]``)."""
    return bool(model.attrs["reencode"] and tok2vec_layer(model).attrs.get("marks_predicates"))


def forward(
    model: Model[LisaBatch, LisaOutput], batch: LisaBatch, is_train: bool
) -> Tuple[LisaOutput, Callable[[LisaOutput], LisaBatch]]:
    batch, lisa, Xs, backprop_tok2vec, prepared = encode_tokens(model, batch, is_train)
    if not prepared.windows:
        # only empty docs: nothing to encode (see lisa.forward)
        return empty_output(model), lambda d_output: batch
    ops = model.ops
    n_roles = model.get_dim("n_roles")
    T = prepared.mask.shape[1]
    sentences = replace(prepared, request=replace(prepared.request, score_roles=False))
    frames_out, backprop_frames = lisa(sentences, is_train)
    frames = host_ints(frames_out.frames).reshape(-1, 2)  # [F, 2]: window, offset
    # (doc, start, end, predicate) per frame: the window of its predicate
    items = []
    for s, offset in frames.tolist():
        doc_i, start, end = prepared.windows[s]
        items.append((doc_i, start, end, start + offset))
    if not items:
        output = replace(frames_out, role_scores=ops.alloc3f(0, T, n_roles))

        def backprop_no_frames(d_output: LisaOutput) -> LisaBatch:
            backprop_tok2vec(backprop_frames(d_output))
            return batch

        return output, backprop_no_frames

    marked_Xs, backprop_marked_tok2vec = _marked_token_vectors(model, batch, items, Xs, is_train)
    marked = _marked_batch(model, items, marked_Xs, frames_out, frames)
    roles_out, backprop_roles = lisa(marked, is_train)
    T_roles = marked.mask.shape[1]
    role_scores = ops.xp.full((len(items), T, n_roles), MASK_VALUE, dtype="float32")
    role_scores[:, :T_roles] = roles_out.role_scores
    output = replace(frames_out, role_scores=cast(Floats3d, role_scores))

    def backprop(d_output: LisaOutput) -> LisaBatch:
        d_roles = ops.xp.ascontiguousarray(d_output.role_scores[:, :T_roles])
        d_marked = backprop_roles(
            replace(
                roles_out,
                role_scores=d_roles,
                tag_scores=ops.alloc2f(*roles_out.tag_scores.shape),
            )
        )
        # the sentence pass scored no roles (its role tensor is empty): nothing flows there
        d_Xs = backprop_frames(replace(d_output, role_scores=ops.alloc3f(0, T, n_roles)))
        if backprop_marked_tok2vec is not None:
            backprop_marked_tok2vec(d_marked)
        else:  # the marked rows were the sentence pass's token vectors: gradients add up
            for (doc_i, start, end, _), d_rows in zip(items, d_marked, strict=True):
                d_Xs[doc_i][start:end] += d_rows
        backprop_tok2vec(d_Xs)
        return batch

    return output, backprop


def _marked_batch(
    model: Model,
    items: List[Tuple[int, int, int, int]],
    marked_Xs: List[Floats2d],
    frames_out: LisaOutput,
    frames: numpy.ndarray,
) -> PaddedBatch:
    """The marked pass's input: one padded row per frame, its window's token vectors,
    marked at its predicate, following the parse the sentence pass used."""
    lengths = [end - start for _, start, end, _ in items]
    mask, X = pad_windows(model.ops, lengths, marked_Xs, model.get_dim("nI"))
    request = ScoreRequest(
        heads=_frame_heads(frames_out, frames, mask),
        frame_pos=frames[:, 1].astype("int64"),
        marked=True,
    )
    return PaddedBatch(
        windows=[(f, 0, n) for f, n in enumerate(lengths)],
        doc_lengths=lengths,
        mask=mask,
        X=X,
        request=request,
    )


def _marked_token_vectors(
    model: Model,
    batch: LisaBatch,
    items: List[Tuple[int, int, int, int]],
    Xs: List[Floats2d],
    is_train: bool,
) -> Tuple[List[Floats2d], Optional[Callable[[List[Floats2d]], Any]]]:
    """The token vectors of each item's window: the tok2vec run again with the predicate
    marked (and its backprop), or the sentence pass's rows (and None)."""
    if not reencodes_predicates(model):
        return [Xs[doc_i][start:end] for doc_i, start, end, _ in items], None
    from .transformer import encode_marked
    from .wordpieces import MarkedWindows

    tok2vec = tok2vec_layer(model)
    with torch_gemm(tok2vec, enabled=not is_train):
        return encode_marked(tok2vec, MarkedWindows(batch.docs, items), is_train)


def _frame_heads(
    frames_out: LisaOutput, frames: numpy.ndarray, mask: numpy.ndarray
) -> Optional[numpy.ndarray]:
    """The parse the sentence pass's upper layers used, per frame row ([F, T'] window
    offsets, -1 on padding), or None for a model without syntactic head."""
    if frames_out.used_heads is None:
        return None
    used = host_ints(frames_out.used_heads).reshape(frames_out.used_heads.shape)  # [S, T]
    heads = numpy.full(mask.shape, -1, dtype="int64")
    for f, s in enumerate(frames[:, 0].tolist()):
        n = int(mask[f].sum())
        heads[f, :n] = used[s, :n]
    return heads
