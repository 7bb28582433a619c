"""lisa_loss: value and gradients against torch's cross-entropy, masking, no parser."""

import numpy
import pytest
import torch
from thinc.api import NumpyOps

from spacy_lisa.models.loss import lisa_loss
from spacy_lisa.models.types import MASK_VALUE, LisaOutput, LisaTargets, LossWeights

OPS = NumpyOps()


def make_output(rng, n_windows=2, length=4, n_tags=3, n_deps=5, n_frames=3, n_roles=4, parser=True):
    n_tokens = n_windows * length - 1  # window 1 has one padding position
    head = rng.normal(size=(n_windows, length, length)).astype("float32")
    head[1, :, length - 1] = MASK_VALUE
    return LisaOutput(
        windows=[(0, 0, length), (1, 0, length - 1)],
        tag_scores=rng.normal(size=(n_tokens, n_tags)).astype("float32"),
        head_scores=head if parser else numpy.zeros((n_windows, 0, 0), dtype="float32"),
        dep_scores=rng.normal(size=(n_windows, length, n_deps)).astype("float32")
        if parser
        else numpy.zeros((n_windows, 0, n_deps), dtype="float32"),
        frames=numpy.asarray([[0, 1], [0, 2], [1, 0]], dtype="int32")[:n_frames],
        role_scores=rng.normal(size=(n_frames, length, n_roles)).astype("float32"),
    )


def make_targets(rng, output):
    def labels(shape, n):
        values = rng.integers(0, n, size=shape)
        values[rng.random(shape) < 0.2] = -1  # some masked positions
        return values

    T = output.role_scores.shape[1]
    heads = labels((2, T), T - 1)
    heads[1, T - 1] = -1
    return LisaTargets(
        tags=labels(output.tag_scores.shape[:1], output.tag_scores.shape[1]),
        heads=heads,
        deps=labels((2, T), output.dep_scores.shape[-1]),
        roles=labels(output.role_scores.shape[:2], output.role_scores.shape[2]),
    )


def torch_reference(output, targets, weights):
    """Eq. 7 with torch: summed CE per task, weighted, divided by the token count."""
    n_tokens = output.tag_scores.shape[0]
    pairs = [
        ("tag_scores", targets.tags, weights.tag),
        ("role_scores", targets.roles, weights.role),
        ("head_scores", targets.heads, weights.head),
        ("dep_scores", targets.deps, weights.dep),
    ]
    tensors = {}
    total = torch.zeros(())
    for name, gold, weight in pairs:
        scores = torch.tensor(getattr(output, name), requires_grad=True)
        tensors[name] = scores
        if scores.numel() == 0:
            continue
        ce = torch.nn.functional.cross_entropy(
            scores.reshape(-1, scores.shape[-1]),
            torch.tensor(gold).reshape(-1).long(),
            ignore_index=-1,
            reduction="sum",
        )
        total = total + weight * ce / n_tokens
    total.backward()
    return total.item(), {name: t.grad for name, t in tensors.items()}


def test_loss_and_gradients_match_torch():
    rng = numpy.random.default_rng(0)
    output = make_output(rng)
    targets = make_targets(rng, output)
    weights = LossWeights(role=1.0, tag=0.5, head=2.0, dep=0.25)
    loss, grads = lisa_loss(OPS, output, targets, weights)
    expected_loss, expected = torch_reference(output, targets, weights)
    assert loss == pytest.approx(expected_loss, rel=1e-5)
    for name, grad in expected.items():
        ours = getattr(grads, name)
        assert ours.shape == getattr(output, name).shape
        numpy.testing.assert_allclose(ours, grad.numpy(), atol=1e-6)
    assert grads.frames is output.frames and grads.used_heads is None


def test_masked_positions_get_no_gradient():
    rng = numpy.random.default_rng(1)
    output = make_output(rng)
    targets = make_targets(rng, output)
    targets.roles[:] = -1
    targets.tags[0] = -1
    _, grads = lisa_loss(OPS, output, targets, LossWeights())
    assert not grads.role_scores.any()
    assert not grads.tag_scores[0].any()
    assert grads.tag_scores[1:].any()


def test_without_syntactic_head():
    rng = numpy.random.default_rng(2)
    output = make_output(rng, parser=False)
    targets = make_targets(rng, make_output(numpy.random.default_rng(2)))
    loss, grads = lisa_loss(OPS, output, targets, LossWeights(head=5.0, dep=5.0))
    expected_loss, _ = torch_reference(output, targets, LossWeights(head=5.0, dep=5.0))
    assert loss == pytest.approx(expected_loss, rel=1e-5)
    assert grads.head_scores.shape == (2, 0, 0)
    assert grads.dep_scores.shape == (2, 0, 5)


def test_no_frames():
    rng = numpy.random.default_rng(3)
    output = make_output(rng, n_frames=0)
    targets = make_targets(rng, output)
    loss, grads = lisa_loss(OPS, output, targets, LossWeights())
    assert numpy.isfinite(loss)
    assert grads.role_scores.shape == (0, 4, 4)


def test_target_shapes_are_checked():
    rng = numpy.random.default_rng(4)
    output = make_output(rng)
    targets = make_targets(rng, output)
    targets.roles = targets.roles[:2]
    with pytest.raises(ValueError, match="E158"):
        lisa_loss(OPS, output, targets, LossWeights())


def soft_rows(rng, shape, n_classes, missing=0.3):
    """Teacher distributions [..., C] (rows of zeros: no teacher there)."""
    q = rng.random(shape + (n_classes,)).astype("float32")
    q /= q.sum(axis=-1, keepdims=True)
    q[rng.random(shape) < missing] = 0.0
    return q


def test_teacher_share_mixes_gold_and_soft_cross_entropy_like_torch():
    """With a teacher share a, a position with gold and a teacher distribution q costs
    (1 - a) CE(gold) + a CE(q); one without q keeps CE(gold); masked gold costs nothing."""
    rng = numpy.random.default_rng(5)
    output = make_output(rng)
    targets = make_targets(rng, output)
    targets.role_soft = soft_rows(rng, targets.roles.shape, output.role_scores.shape[-1])
    targets.tag_soft = soft_rows(rng, targets.tags.shape, output.tag_scores.shape[-1])
    weights = LossWeights(role=1.0, tag=0.5, head=0.0, dep=0.0, teacher=0.7)
    loss, grads = lisa_loss(OPS, output, targets, weights)

    n_tokens = output.tag_scores.shape[0]
    expected_loss = torch.zeros(())
    expected = {}
    for name, gold, q, weight in (
        ("role_scores", targets.roles, targets.role_soft, weights.role),
        ("tag_scores", targets.tags, targets.tag_soft, weights.tag),
    ):
        scores = torch.tensor(getattr(output, name), requires_grad=True)
        log_p = torch.log_softmax(scores, dim=-1)
        gold_t = torch.tensor(gold).long()
        valid = gold_t >= 0
        q_t = torch.tensor(q)
        has_q = (q_t.sum(-1) > 0) & valid
        ce_gold = -log_p.gather(-1, gold_t.clamp(min=0)[..., None])[..., 0]
        ce_soft = -(q_t * log_p).sum(-1)
        share = weights.teacher * has_q.float()
        per_position = valid.float() * ((1 - share) * ce_gold + share * ce_soft)
        term = weight * per_position.sum() / n_tokens
        term.backward()
        expected_loss = expected_loss + term.detach()
        expected[name] = scores.grad
    assert loss == pytest.approx(expected_loss.item(), rel=1e-5)
    for name, grad in expected.items():
        numpy.testing.assert_allclose(getattr(grads, name), grad.numpy(), atol=1e-6)


def test_teacher_share_zero_ignores_the_teacher():
    rng = numpy.random.default_rng(6)
    output = make_output(rng)
    targets = make_targets(rng, output)
    plain_loss, plain = lisa_loss(OPS, output, targets, LossWeights())
    targets.role_soft = soft_rows(rng, targets.roles.shape, output.role_scores.shape[-1], 0.0)
    loss, grads = lisa_loss(OPS, output, targets, LossWeights(teacher=0.0))
    assert loss == plain_loss
    numpy.testing.assert_array_equal(grads.role_scores, plain.role_scores)


def test_sense_softmax_over_the_allowed_rolesets_only():
    """sense_loss="candidates": the roleset cross-entropy runs over each frame's allowed
    rolesets (its lemma's), as torch's on the masked logits; the other rolesets get no
    gradient, and a frame without a sense target none at all."""
    rng = numpy.random.default_rng(4)
    output = make_output(rng)
    n_senses = 6
    output.sense_scores = rng.normal(size=(3, n_senses)).astype("float32")
    targets = make_targets(rng, output)
    targets.senses = numpy.asarray([2, 5, -1])
    allowed = numpy.zeros((3, n_senses), dtype=bool)
    allowed[0, [1, 2]] = True
    allowed[1, [0, 4, 5]] = True
    allowed[2] = True
    weights = LossWeights(role=0.0, tag=0.0, head=0.0, dep=0.0, sense=1.5)
    everything, _ = lisa_loss(OPS, output, targets, weights)
    targets.sense_allowed = allowed
    loss, grads = lisa_loss(OPS, output, targets, weights)
    scores = torch.tensor(output.sense_scores, requires_grad=True)
    masked = scores.masked_fill(~torch.tensor(allowed), MASK_VALUE)
    ce = torch.nn.functional.cross_entropy(
        masked, torch.tensor(targets.senses).long(), ignore_index=-1, reduction="sum"
    )
    expected = 1.5 * ce / output.tag_scores.shape[0]
    expected.backward()
    assert loss == pytest.approx(expected.item(), rel=1e-5)
    assert loss < everything  # fewer rolesets to spread probability over
    numpy.testing.assert_allclose(grads.sense_scores, scores.grad.numpy(), atol=1e-6)
    assert not grads.sense_scores[~allowed].any()
    assert not grads.sense_scores[2].any()
