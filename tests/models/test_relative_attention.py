"""FLAT relative span positions: RelativeMultiHeadSelfAttention."""

from typing import Optional, Tuple

import pytest
import torch
from torch import Tensor, nn

from spacy_lisa.models.relative_attention import (
    RelativeMultiHeadSelfAttention,
    sinusoid_encoding,
)

WIDTH, HEADS = 16, 4


def make_layer(seed: int = 0, dropout: float = 0.0, rel_width: Optional[int] = None):
    torch.manual_seed(seed)
    layer = RelativeMultiHeadSelfAttention(WIDTH, HEADS, dropout, rel_width=rel_width)
    return layer.eval()


def padded_batch(lengths: Tuple[int, ...], seed: int = 1) -> Tuple[Tensor, Tensor]:
    torch.manual_seed(seed)
    T = max(lengths)
    x = torch.randn(len(lengths), T, WIDTH)  # [B, T, d]
    mask = torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]  # [B, T]
    return x, mask


def spans_for(mask: Tensor) -> Tuple[Tensor, Tensor]:
    """Units as spans over an underlying token sequence: unit t covers tokens
    [head_t, tail_t] with widths 1, 2, 1, 3, ... (like wordpiece groups)."""
    B, T = mask.shape
    widths = torch.tensor([1 + (t % 3 == 1) + 2 * (t % 4 == 3) for t in range(T)])
    heads = torch.cat([torch.zeros(1, dtype=torch.long), widths.cumsum(0)[:-1]])
    tails = heads + widths - 1
    return heads.expand(B, T).clone(), tails.expand(B, T).clone()


def test_shapes_and_attention() -> None:
    layer = make_layer()
    x, mask = padded_batch((5, 3))
    out, probs = layer.forward_with_attention(x, mask)
    assert out.shape == (2, 5, WIDTH)
    assert probs.shape == (2, HEADS, 5, 5)
    assert layer(x, mask).shape == (2, 5, WIDTH)
    heads, tails = spans_for(mask)
    assert layer(x, mask, head_pos=heads, tail_pos=tails).shape == (2, 5, WIDTH)


@pytest.mark.parametrize("spans", [False, True])
def test_padding_is_masked(spans: bool) -> None:
    layer = make_layer()
    x, mask = padded_batch((6, 4, 2))
    heads, tails = spans_for(mask) if spans else (None, None)
    out, probs = layer.forward_with_attention(x, mask, head_pos=heads, tail_pos=tails)
    # no attention weight on padding keys; rows of real queries sum to 1
    assert torch.all(probs.masked_select(~mask[:, None, None, :]) == 0)
    row_sums = probs.sum(-1)  # [B, H, T]
    assert torch.allclose(row_sums[mask[:, None, :].expand_as(row_sums)], torch.tensor(1.0))
    # garbage in padded inputs (and padded positions) changes nothing for real tokens
    x2 = x.clone()
    x2[~mask] = 1e3 * torch.randn(int((~mask).sum()), WIDTH)
    if heads is not None and tails is not None:
        heads, tails = heads.clone(), tails.clone()
        heads[~mask] = 500
        tails[~mask] = 900
    out2 = layer(x2, mask, head_pos=heads, tail_pos=tails)
    assert torch.allclose(out[mask], out2[mask], atol=1e-6)
    assert torch.all(out2[~mask] == 0)


@pytest.mark.parametrize("spans", [False, True])
def test_batch_invariance(spans: bool) -> None:
    layer = make_layer()
    x, mask = padded_batch((9, 4))
    heads, tails = spans_for(mask) if spans else (None, None)
    batched = layer(x, mask, head_pos=heads, tail_pos=tails)
    alone_kwargs = {}
    if heads is not None and tails is not None:
        alone_kwargs = {"head_pos": heads[1:, :4], "tail_pos": tails[1:, :4]}
    alone = layer(x[1:, :4], mask[1:, :4], **alone_kwargs)
    assert torch.allclose(batched[1, :4], alone[0], atol=1e-5)


def test_point_and_span_paths_agree() -> None:
    """With head == tail the cheap per-distance path equals the general span path."""
    layer = make_layer()
    B, T, H = 2, 7, HEADS
    q_rel = torch.randn(B, T, H, layer.rel_width)
    pos = torch.tensor([[0, 1, 2, 3, 4, 5, 6], [3, 5, 6, 9, 10, 11, 15]])
    point = layer._point_scores(q_rel, pos)
    span = layer._span_scores(q_rel, pos, pos)
    assert point.shape == span.shape == (B, H, T, T)
    assert torch.allclose(point, span, atol=1e-5)


def test_relative_positions_are_translation_invariant_and_directional() -> None:
    layer = make_layer()
    x, mask = padded_batch((6,))
    base = layer(x, mask)
    shifted = torch.arange(6)[None, :] + 11
    assert torch.allclose(base, layer(x, mask, head_pos=shifted), atol=1e-5)
    # reading the sequence backwards is not the mirror image of reading it forwards:
    # a distance-only (unsigned) encoding would make these equal
    backwards = layer(x.flip(1), mask).flip(1)
    assert not torch.allclose(base, backwards, atol=1e-4)
    enc = sinusoid_encoding(torch.tensor([-3, 3]), 8)
    assert not torch.allclose(enc[0], enc[1])


def test_spans_change_the_scores() -> None:
    layer = make_layer()
    x, mask = padded_batch((6,))
    heads, tails = spans_for(mask)
    assert not torch.allclose(
        layer(x, mask, head_pos=heads, tail_pos=tails), layer(x, mask, head_pos=heads)
    )


def test_override_head_replaces_head_zero() -> None:
    layer = make_layer()
    x, mask = padded_batch((5, 3))
    B, T = mask.shape
    parse = torch.zeros(B, T, T)
    parents = torch.tensor([[1, 1, 1, 4, 1], [2, 2, 2, 0, 0]])  # one-hot rows on heads
    parse.scatter_(2, parents[..., None], 1.0)
    out, probs = layer.forward_with_attention(x, mask, override_head=parse)
    assert torch.equal(probs[:, 0], parse * mask[:, None, :])
    _, free = layer.forward_with_attention(x, mask)
    assert torch.equal(probs[:, 1:], free[:, 1:])
    assert not torch.allclose(out, layer(x, mask))


@pytest.mark.parametrize("spans", [False, True])
def test_gradients_reach_every_parameter(spans: bool) -> None:
    layer = make_layer(dropout=0.1).train()
    x, mask = padded_batch((5, 3))
    heads, tails = spans_for(mask) if spans else (None, None)
    out = layer(x, mask, head_pos=heads, tail_pos=tails)
    (out[mask] ** 2).sum().backward()
    for name, param in layer.named_parameters():
        assert param.grad is not None, name
        assert torch.count_nonzero(param.grad) > 0, name


def test_invalid_configuration_and_positions() -> None:
    with pytest.raises(ValueError, match="E200"):
        RelativeMultiHeadSelfAttention(10, 4, 0.0)
    layer = make_layer()
    x, mask = padded_batch((4,))
    with pytest.raises(ValueError, match="E201"):
        layer(x, mask, head_pos=torch.arange(3)[None, :])
    with pytest.raises(ValueError, match="E203"):
        layer(x, mask, head_pos=torch.tensor([[0, 2, 4, 6]]), tail_pos=torch.tensor([[0, 1, 4, 6]]))


class DirectionTagger(nn.Module):
    """Token embedding + marker -> relative attention -> left/right/marked classifier."""

    def __init__(self, vocab: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, WIDTH)
        self.marker = nn.Parameter(torch.randn(WIDTH))
        self.attention = RelativeMultiHeadSelfAttention(WIDTH, 2, 0.0, rel_width=16)
        self.out = nn.Linear(2 * WIDTH, 3)

    def forward(self, ids: Tensor, marked: Tensor, mask: Tensor) -> Tensor:
        x = (
            self.embed(ids)
            + (torch.arange(ids.shape[1])[None, :] == marked[:, None])[..., None] * self.marker
        )  # [B, T, d]
        return self.out(torch.cat([x, self.attention(x, mask)], dim=-1))  # [B, T, 3]


def test_overfits_a_direction_task() -> None:
    """Label = left of / right of / is the marked token. Token identities are random,
    so without direction-aware positions the task is unsolvable (attention without
    positions is permutation-equivariant)."""
    torch.manual_seed(0)
    n, T, vocab = 12, 8, 6
    lengths = torch.randint(4, T + 1, (n,))
    mask = torch.arange(T)[None, :] < lengths[:, None]
    ids = torch.randint(0, vocab, (n, T))
    marked = (torch.rand(n) * lengths).long()
    position = torch.arange(T)[None, :]
    gold = torch.where(position < marked[:, None], 0, 1)
    gold = torch.where(position == marked[:, None], 2, gold)  # [n, T]
    model = DirectionTagger(vocab)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(250):
        optimizer.zero_grad()
        logits = model(ids, marked, mask)
        loss = nn.functional.cross_entropy(logits[mask], gold[mask])
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        predicted = model(ids, marked, mask).argmax(-1)
    assert torch.equal(predicted[mask], gold[mask])
