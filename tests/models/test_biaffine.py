"""The syntactically-informed head: biaffine arcs and per-class biaffine labels."""

import pytest
import torch

from spacy_lisa.models.biaffine import Biaffine, SyntacticHead
from spacy_lisa.models.types import MASK_VALUE


def test_biaffine_matches_the_formula():
    torch.manual_seed(0)
    scorer = Biaffine(5, 3, n_out=2, bias_x=True, bias_y=True)
    x, y = torch.randn(2, 4, 5), torch.randn(2, 6, 3)
    scores = scorer(x, y)
    assert scores.shape == (2, 2, 4, 6)
    x1 = torch.cat([x, torch.ones(2, 4, 1)], -1)
    y1 = torch.cat([y, torch.ones(2, 6, 1)], -1)
    b, o, i, j = 1, 1, 2, 5
    expected = x1[b, i] @ scorer.weight[o] @ y1[b, j]
    assert scores[b, o, i, j].item() == pytest.approx(expected.item(), abs=1e-5)
    # aligned pairs equal the diagonal of the all-pairs scores
    pairs = scorer.score_pairs(x, y[:, :4])  # [2, 4, 2]
    full = scorer(x, y[:, :4])  # [2, 2, 4, 4]
    assert torch.allclose(pairs, full.diagonal(dim1=2, dim2=3).transpose(1, 2), atol=1e-5)


def test_biaffine_without_bias():
    scorer = Biaffine(4, 2, bias_x=True, bias_y=False)
    assert scorer.weight.shape == (1, 5, 2)
    assert scorer(torch.randn(1, 3, 4), torch.randn(1, 3, 2)).shape == (1, 1, 3, 3)


def _head(n_deps=3):
    torch.manual_seed(0)
    return SyntacticHead(width=8, dep_width=6, head_width=4, n_deps=n_deps, dropout=0.0)


def test_syntactic_head_modes():
    head = _head()
    states = torch.randn(2, 5, 8)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)
    soft = head(states, mask, own_mode="soft")
    assert soft.head_scores.shape == (2, 5, 5)
    assert soft.dep_scores.shape == (2, 5, 3)
    assert (soft.head_scores[1, :, 3:] == MASK_VALUE).all()
    assert torch.allclose(soft.attention, torch.softmax(soft.head_scores, -1))
    assert torch.equal(soft.used_heads, soft.head_scores.argmax(-1))
    argmax = head(states, mask, own_mode="argmax")
    assert torch.equal(argmax.attention.argmax(-1), soft.used_heads)
    assert torch.equal(argmax.attention.sum(-1), torch.ones(2, 5))
    # a given parse, -1 and out-of-window heads become self-loops
    given = torch.tensor([[1, -1, 1, 2, 9], [2, 2, 2, -1, -1]])
    rows = torch.tensor([True, False])
    mixed = head(states, mask, heads=given, given_rows=rows, own_mode="soft")
    assert mixed.used_heads[0].tolist() == [1, 1, 1, 2, 4]
    assert torch.equal(mixed.used_heads[1], soft.used_heads[1])
    assert torch.equal(mixed.attention[0], torch.eye(5)[[1, 1, 1, 2, 4]])
    assert torch.allclose(mixed.attention[1], soft.attention[1])
    # arcs do not depend on the parse that is fed upwards; labels follow the used heads
    assert torch.equal(mixed.head_scores, soft.head_scores)
    assert torch.allclose(mixed.dep_scores[1], soft.dep_scores[1])
    assert not torch.allclose(mixed.dep_scores[0], soft.dep_scores[0])


def test_dep_labels_are_a_biaffine_of_dependent_and_used_parent():
    head = _head(n_deps=2)
    states = torch.randn(1, 4, 8)
    mask = torch.ones(1, 4, dtype=torch.bool)
    heads = torch.tensor([[1, 1, 3, 1]])
    out = head(states, mask, heads=heads, given_rows=torch.tensor([True]))
    dep = torch.nn.functional.leaky_relu(head.dep_mlp(states), 0.01)
    par = torch.nn.functional.leaky_relu(head.head_mlp(states), 0.01)
    all_pairs = head.label(dep, par)  # [1, 2, T, T]
    expected = torch.stack([all_pairs[0, :, t, h] for t, h in enumerate([1, 1, 3, 1])])
    assert torch.allclose(out.dep_scores[0], expected, atol=1e-5)


def test_unknown_own_mode():
    head = _head()
    with pytest.raises(ValueError):
        head(torch.randn(1, 2, 8), torch.ones(1, 2, dtype=torch.bool), own_mode="given")
