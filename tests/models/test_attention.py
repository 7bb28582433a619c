"""Encoder building blocks: sinusoids, multi-head self-attention, encoder layer."""

import math

import pytest
import torch
from oracles import attention_probs

from spacy_lisa.models.attention import (
    EncoderLayer,
    MultiHeadSelfAttention,
    cached_positions,
    sinusoidal_positions,
)

WIDTH, HEADS = 16, 4


def _mask(lengths, T):
    return torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]  # [B, T]


def test_sinusoidal_positions_values():
    pe = sinusoidal_positions(7, 6)
    assert pe.shape == (7, 6)
    assert torch.allclose(pe[0], torch.tensor([0.0, 1.0, 0.0, 1.0, 0.0, 1.0]))
    t, i = 3, 1
    angle = t / 10000 ** (2 * i / 6)
    assert pe[t, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
    assert pe[t, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)
    # prefixes agree: a window's encoding does not depend on the padded length
    assert torch.equal(sinusoidal_positions(12, 6)[:7], pe)
    assert sinusoidal_positions(4, 5).shape == (4, 5)  # odd width


@pytest.mark.parametrize("width", [6, 192, 97])
def test_cached_positions_are_the_computed_ones(width):
    """The prediction path slices one kept table: bit for bit what computing the
    encoding for that length gives, for lengths below and past the table's first size."""
    for length in [1, 2, 7, 127, 128, 129, 300, 3, 1000]:
        assert torch.equal(
            cached_positions(length, width, torch.device("cpu")),
            sinusoidal_positions(length, width),
        )


def test_attention_shapes_and_padding_invariance():
    torch.manual_seed(0)
    layer = MultiHeadSelfAttention(WIDTH, HEADS, dropout=0.3).eval()
    x = torch.randn(2, 7, WIDTH)
    mask = _mask([4, 7], 7)
    y = layer(x, mask)
    assert y.shape == (2, 7, WIDTH)
    alone = layer(x[:1, :4], mask[:1, :4])
    assert torch.allclose(y[0, :4], alone[0], atol=1e-5)
    # garbage in the padding does not leak into real tokens
    x2 = x.clone()
    x2[0, 4:] = 100.0
    assert torch.allclose(layer(x2, mask)[0, :4], y[0, :4], atol=1e-5)


def test_forward_is_masked_softmax_attention():
    """The fused kernel computes what the paper writes: each head's softmax over the real
    tokens (the oracle's distributions), times the values, heads concatenated."""
    torch.manual_seed(0)
    layer = MultiHeadSelfAttention(WIDTH, HEADS, dropout=0.0)
    B, T, dh = 2, 5, WIDTH // HEADS
    x = torch.randn(B, T, WIDTH)
    mask = _mask([3, 5], T)
    probs = attention_probs(layer, x, mask)
    assert probs.shape == (B, HEADS, T, T)
    assert torch.allclose(probs.sum(-1), torch.ones(B, HEADS, T))
    assert probs[0, :, :, 3:].abs().max() < 1e-6  # padding keys get nothing
    v = layer.qkv(x).view(B, T, 3, HEADS, dh)[:, :, 2]  # [B, T, H, dh]
    context = torch.einsum("bhij,bjhd->bihd", probs, v)
    expected = layer.output(context.reshape(B, T, WIDTH))
    y = layer(x, mask)
    assert torch.allclose(y[0, :3], expected[0, :3], atol=1e-5)
    assert torch.allclose(y[1], expected[1], atol=1e-5)


def test_override_head_replaces_head_zero():
    torch.manual_seed(0)
    layer = MultiHeadSelfAttention(WIDTH, HEADS, dropout=0.0)
    B, T, dh = 2, 5, WIDTH // HEADS
    x = torch.randn(B, T, WIDTH)
    mask = _mask([5, 3], T)
    heads = torch.tensor([[1, 1, 1, 2, 3], [2, 2, 2, 0, 0]])
    override = torch.nn.functional.one_hot(heads, T).float()  # [B, T, T]
    y = layer(x, mask, override_head=override)
    # by hand: head 0 copies the parent's value, heads 1.. attend as usual
    qkv = layer.qkv(x).view(B, T, 3, HEADS, dh)
    v = qkv[:, :, 2]  # [B, T, H, dh]
    probs = attention_probs(layer, x, mask)  # [B, H, T, T]
    context = torch.einsum("bhij,bjhd->bihd", probs, v)
    context[:, :, 0] = torch.stack([v[b, heads[b], 0] for b in range(B)])
    expected = layer.output(context.reshape(B, T, WIDTH))
    assert torch.allclose(y[0], expected[0], atol=1e-5)
    assert torch.allclose(y[1, :3], expected[1, :3], atol=1e-5)
    # the other heads are untouched: a different override changes only head 0's share
    other = torch.nn.functional.one_hot(torch.zeros_like(heads), T).float()
    assert not torch.allclose(layer(x, mask, override_head=other), y)


def test_single_head_with_override():
    layer = MultiHeadSelfAttention(8, 1, dropout=0.0)
    x = torch.randn(1, 3, 8)
    override = torch.eye(3)[None]
    y = layer(x, torch.ones(1, 3, dtype=torch.bool), override_head=override)
    v = layer.qkv(x)[..., 16:]
    assert torch.allclose(y, layer.output(v), atol=1e-6)


def test_width_must_divide_into_heads():
    with pytest.raises(ValueError, match="E200"):
        MultiHeadSelfAttention(10, 4, 0.0)


def test_encoder_layer_residual_and_norm():
    torch.manual_seed(0)
    layer = EncoderLayer(MultiHeadSelfAttention(WIDTH, HEADS, 0.0), WIDTH, 32, dropout=0.0)
    x = torch.randn(3, 6, WIDTH)
    mask = _mask([6, 2, 4], 6)
    y = layer(x, mask)
    assert y.shape == x.shape
    # LayerNorm output: zero mean, unit variance per token
    assert torch.allclose(y.mean(-1), torch.zeros(3, 6), atol=1e-5)
    assert torch.allclose(layer(x[1:2, :2], mask[1:2, :2])[0], y[1, :2], atol=1e-5)
    override = torch.eye(6).expand(3, 6, 6)
    assert layer(x, mask, override_head=override).shape == x.shape
