"""The LISA objective (eq. 7) and its gradients, in ``ops`` arrays (numpy or cupy).

    L = 1/N * sum_t [ w_role * sum_f CE(role_ft) + w_tag * CE(tag_t)
                      + w_head * CE(head_t) + w_dep * CE(dep_t) ]
        + 1/N * sum_f [ w_sense * CE(sense_f) + w_lemma * CE(lemma_f)
                        + w_predicate_pos * CE(upos_f) ]

(the second line only for models with the per-predicate classifiers; with
``targets.sense_allowed``, the roleset softmax runs over each frame's allowed rolesets only,
the others' logits masked out, so their gradient is zero).

N is the number of real tokens in the batch (the rows of ``tag_scores``): eq. 7 averages
over the T tokens of a sentence, here over the tokens of the whole batch, so every term
has the same per-token normalisation and the gradient does not depend on how sentences
are grouped into batches. Each cross-entropy's gradient with respect to its logits is
``(softmax - one_hot) * weight / N``; targets of ``-1`` (padding, unaligned gold,
unknown labels) contribute neither loss nor gradient.

Knowledge distillation (``weights.teacher`` = a in (0, 1], with ``targets.role_soft`` /
``targets.tag_soft`` from a teacher model): at every position that has both a gold label
and a teacher distribution q, the role and tag terms become
``(1 - a) * CE(gold) + a * CE(q)``, with CE(q) = -sum_c q_c log p_c and gradient
``(softmax - q) * weight / N``; positions without a teacher distribution keep CE(gold).
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple, cast

from thinc.api import Ops
from thinc.types import ArrayXd, Floats2d, Floats3d

from ..errors import Errors
from .types import MASK_VALUE, LisaOutput, LisaTargets, LossWeights


def lisa_loss(
    ops: Ops, output: LisaOutput, targets: LisaTargets, weights: LossWeights
) -> Tuple[float, LisaOutput]:
    """Loss of one batch and its gradients with respect to the logits of ``output``.

    Returns (loss, gradients): a :class:`LisaOutput` whose score arrays hold the
    gradients (zeros for masked positions; empty head/dep arrays stay empty, as for a
    model without syntactic head, ``parse_layer = 0``).
    """
    n_tokens = max(1, int(output.tag_scores.shape[0]))
    scale = 1.0 / n_tokens
    _check("tags", targets.tags, output.tag_scores, "tag_scores")
    _check("roles", targets.roles, output.role_scores, "role_scores")
    total = 0.0
    loss, d_tags = _cross_entropy(
        ops, output.tag_scores, targets.tags, weights.tag * scale, targets.tag_soft, weights.teacher
    )
    total += loss
    loss, d_roles = _cross_entropy(
        ops,
        output.role_scores,
        targets.roles,
        weights.role * scale,
        targets.role_soft,
        weights.teacher,
    )
    total += loss
    grads: Dict[str, Any] = {}
    for name, loss, grad in (
        *_parse_terms(ops, output, targets, weights, scale),
        *_frame_terms(ops, output, targets, weights, scale),
    ):
        total += loss
        grads[name] = grad
    gradients = LisaOutput(
        windows=output.windows,
        tag_scores=cast(Floats2d, d_tags),
        frames=output.frames,
        role_scores=cast(Floats3d, d_roles),
        label_attention=None,
        used_heads=None,
        **grads,
    )
    return total, gradients


# (the LisaOutput field, its loss, its gradient)
Term = Tuple[str, float, Any]


def _parse_terms(
    ops: Ops, output: LisaOutput, targets: LisaTargets, weights: LossWeights, scale: float
) -> List[Term]:
    """The parent and dependency-label terms; empty scores (no syntactic head, or no
    labels) add nothing and get empty gradients."""
    terms = []
    for name, target_name, weight in (
        ("head_scores", "heads", weights.head),
        ("dep_scores", "deps", weights.dep),
    ):
        scores, target = getattr(output, name), getattr(targets, target_name)
        if not scores.size:  # nothing to learn there
            terms.append((name, 0.0, ops.xp.zeros_like(scores)))
            continue
        _check(target_name, target, scores, name)
        terms.append((name, *_cross_entropy(ops, scores, target, weight * scale)))
    return terms


def _frame_terms(
    ops: Ops, output: LisaOutput, targets: LisaTargets, weights: LossWeights, scale: float
) -> List[Term]:
    """The per-predicate classifiers' terms (roleset, lemma, UPOS), for those the model
    has; a classifier without gold gets a zero gradient."""
    terms = []
    # (scores, targets, weight, the classes each frame's softmax runs over: None = all)
    for name, target_name, weight, allowed in (
        ("sense_scores", "senses", weights.sense, targets.sense_allowed),
        ("lemma_scores", "lemmas", weights.lemma, None),
        ("pred_pos_scores", "pred_pos", weights.predicate_pos, None),
    ):
        scores = getattr(output, name)
        target = getattr(targets, target_name)
        if scores is None:
            continue
        if target is None:  # no gold for this classifier: no gradient
            terms.append((name, 0.0, ops.xp.zeros_like(scores)))
            continue
        _check(target_name, target, scores, name)
        if allowed is not None:  # masked logits: no probability, no gradient
            scores = ops.xp.where(allowed, scores, MASK_VALUE)
        terms.append((name, *_cross_entropy(ops, scores, target, weight * scale)))
    return terms


def _check(name: str, target: ArrayXd, scores: ArrayXd, scores_name: str) -> None:
    expected = tuple(scores.shape[:-1])
    if tuple(target.shape) != expected:
        raise ValueError(
            Errors.E158.format(
                name=name, shape=tuple(target.shape), scores=scores_name, expected=expected
            )
        )


def _cross_entropy(
    ops: Ops, scores: Any, target: Any, weight: float, soft: Any = None, share: float = 0.0
) -> Tuple[float, Any]:
    """Summed CE over all positions with target >= 0, times ``weight``; and its gradient
    (same shape as ``scores``). scores [..., C] logits, target [...] int; numpy or cupy
    arrays (typed Any: the maths is plain xp broadcasting, beyond thinc's array types).
    Where ``soft`` [..., C] holds a teacher distribution (a row summing to > 0), ``share``
    of the term is the cross-entropy against it instead of the gold label."""
    xp = ops.xp
    n_classes = scores.shape[-1]
    flat = scores.reshape((-1, n_classes)).astype("float32", copy=False)  # [M, C]
    gold = target.reshape((-1,)).astype("int64", copy=False)  # [M]
    if flat.shape[0] == 0 or n_classes == 0:
        return 0.0, xp.zeros(scores.shape, dtype="float32")
    valid = gold >= 0
    rows = xp.nonzero(valid)[0]
    cols = gold[rows]
    # log-softmax, shifted by the row max so exp never overflows
    shifted = flat - flat.max(axis=-1, keepdims=True)
    log_norm = xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))
    log_probs = shifted - log_norm  # [M, C]
    d_flat = xp.exp(log_probs)  # softmax
    if soft is None or share <= 0:
        loss = -float(log_probs[rows, cols].sum()) * weight
        d_flat[rows, cols] -= 1.0
        d_flat *= valid[:, None] * weight  # masked rows: no gradient at all
        return loss, d_flat.reshape(scores.shape).astype("float32", copy=False)
    q = soft.reshape((-1, n_classes)).astype("float32", copy=False)
    total_weight = valid * weight  # [M]
    soft_weight = (q.sum(axis=-1) > 0) * total_weight * share  # [M]
    gold_weight = total_weight - soft_weight
    loss = -float((soft_weight[:, None] * q * log_probs).sum())
    loss -= float((gold_weight[rows] * log_probs[rows, cols]).sum())
    # total_weight * softmax - gold_weight * one_hot - soft_weight * q
    d_flat *= total_weight[:, None]
    d_flat[rows, cols] -= gold_weight[rows]
    d_flat -= soft_weight[:, None] * q
    return loss, d_flat.reshape(scores.shape).astype("float32", copy=False)
