"""Predicate-aware encoding for ``spacy-lisa.LISA.v1`` (``predicate_encoding = "marked"``
or ``"marked_upper"``): the roles of each predicate are scored from an encoding of its
window in which that predicate is marked, as transformer SRL systems do (Shi & Lin 2019;
AllenNLP's BERT SRL passes the verb as BERT's token type).

Two calls of the torch network per batch:

1. ``"frames"``: the single pass over the sentence windows without the role scorer: the
   joint POS/predicate tags, the predicates (predicted, or the given ones: gold in
   training, ``doc._.srl_predicates`` with ``predicate_source = "doc"``), the parse and the
   per-predicate classifiers (roleset, lemma, UPOS).
2. ``"roles"``: one row per predicate: its window, encoded again with the predicate
   marked, following the parse stage 1 used (gold in training with teacher forcing, the
   doc's own, or the model's). With ``"marked"`` and a tok2vec that takes marks
   (``TransformerTok2Vec.v1``: the predicate's wordpieces get token type 1) the tok2vec
   runs again on the marked windows; with ``"marked_upper"``, or a tok2vec without
   marks (spaCy's ``Tok2Vec``), the stage-1 token vectors are reused and the mark is the
   learned marker at the LISA encoder's input only. The layers above the tok2vec, the
   syntactic head's parse injection included, run per predicate in both.

A predicate's roles depend on its window, the parse and the predicate only, not on which
other predicates the sentence has. The output has the single pass's shape (role scores
padded to stage 1's window length), so the component, the loss and decoding are the same
for every mode.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, List, Optional, Tuple, cast

import numpy
from thinc.api import Model
from thinc.types import Floats2d, Floats3d

from .gemm_ops import torch_gemm
from .lisa_batch import PreparedBatch, host_ints, pad_windows
from .transformer import MarkedWindows
from .types import MASK_VALUE, LisaBatch, LisaOutput


def reencodes_predicates(model: Model) -> bool:
    """True when stage 2 runs the tok2vec again on marked windows: ``"marked"`` with a
    tok2vec that takes marks (``attrs["marks_predicates"]``)."""
    from .lisa import _tok2vec_layer, predicate_encoding

    return predicate_encoding(model) == "marked" and bool(
        _tok2vec_layer(model).attrs.get("marks_predicates")
    )


def marked_forward(
    model: Model[LisaBatch, LisaOutput],
    batch: LisaBatch,
    prepared: PreparedBatch,
    Xs: List[Floats2d],
    is_train: bool,
) -> Tuple[LisaOutput, Callable[[LisaOutput], List[Floats2d]]]:
    """Both stages on a prepared batch whose token vectors ``Xs`` (one array per doc)
    came from the tok2vec. Returns the output and a backprop that returns the gradient of
    ``Xs`` (the caller passes it to the tok2vec's own backprop)."""
    from .lisa import _lisa_layer, _tok2vec_layer

    lisa = _lisa_layer(model)
    assert lisa is not None  # built: forward checked it
    ops = model.ops
    n_roles = model.get_dim("n_roles")
    T = prepared.mask.shape[1]
    frames_out, backprop_frames = lisa(replace(prepared, stage="frames"), is_train)
    frames = host_ints(frames_out.frames).reshape(-1, 2)  # [F, 2]: window, offset
    # (doc, start, end, predicate) per frame: the window of its predicate
    items = []
    for s, offset in frames.tolist():
        doc_i, start, end = prepared.windows[s]
        items.append((doc_i, start, end, start + offset))
    lengths = [end - start for _, start, end, _ in items]
    if not items:
        output = replace(frames_out, role_scores=ops.alloc3f(0, T, n_roles))
        return output, lambda d_output: backprop_frames(d_output)

    tok2vec = _tok2vec_layer(model)
    backprop_marked_tok2vec: Optional[Callable[[List[Floats2d]], Any]] = None
    if reencodes_predicates(model):
        with torch_gemm(tok2vec, enabled=not is_train):
            marked_Xs, backprop_marked_tok2vec = tok2vec(MarkedWindows(batch.docs, items), is_train)
    else:
        marked_Xs = [Xs[doc_i][start:end] for doc_i, start, end, _ in items]
    mask, X = pad_windows(ops, lengths, marked_Xs, model.get_dim("nI"))
    roles_in = PreparedBatch(
        windows=[(f, 0, n) for f, n in enumerate(lengths)],
        doc_lengths=lengths,
        mask=mask,
        X=X,
        heads=_frame_heads(frames_out, frames, mask),
        given_rows=numpy.ones((len(items),), dtype=bool),
        own_parse="argmax",
        dep_labels=False,
        head_scores=False,
        frame_window=numpy.arange(len(items), dtype="int64"),
        frame_pos=frames[:, 1].astype("int64"),
        predicate_tags=prepared.predicate_tags,
        stage="roles",
    )
    roles_out, backprop_roles = lisa(roles_in, is_train)
    T_roles = mask.shape[1]
    role_scores = ops.xp.full((len(items), T, n_roles), MASK_VALUE, dtype="float32")
    role_scores[:, :T_roles] = roles_out.role_scores
    output = replace(frames_out, role_scores=cast(Floats3d, role_scores))

    def backprop(d_output: LisaOutput) -> List[Floats2d]:
        d_roles = ops.xp.ascontiguousarray(d_output.role_scores[:, :T_roles])
        d_marked = backprop_roles(
            replace(
                roles_out,
                role_scores=d_roles,
                tag_scores=ops.alloc2f(*roles_out.tag_scores.shape),
            )
        )
        # stage 1 scored no roles (its role tensor is empty): nothing flows there
        d_Xs = backprop_frames(replace(d_output, role_scores=ops.alloc3f(0, T, n_roles)))
        if backprop_marked_tok2vec is not None:
            backprop_marked_tok2vec(d_marked)
        else:  # the marked rows were stage 1's token vectors: their gradients add up
            for (doc_i, start, end, _), d_rows in zip(items, d_marked, strict=True):
                d_Xs[doc_i][start:end] += d_rows
        return d_Xs

    return output, backprop


def _frame_heads(
    frames_out: LisaOutput, frames: numpy.ndarray, mask: numpy.ndarray
) -> Optional[numpy.ndarray]:
    """The parse stage 1's upper layers used, per frame row ([F, T'] window offsets, -1
    on padding), or None for a model without syntactic head."""
    if frames_out.used_heads is None:
        return None
    used = host_ints(frames_out.used_heads).reshape(frames_out.used_heads.shape)  # [S, T]
    heads = numpy.full(mask.shape, -1, dtype="int64")
    for f, s in enumerate(frames[:, 0].tolist()):
        n = int(mask[f].sum())
        heads[f, :n] = used[s, :n]
    return heads
