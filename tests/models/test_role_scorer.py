"""The bilinear role scorer (eq. 6) and its registered builder."""

import pytest
import torch
from spacy.util import registry

from spacy_lisa.models import lisa  # noqa: F401  (registers the builder)
from spacy_lisa.models.role_scorer import BilinearRoleScorer


def test_scores_every_frame_against_its_own_window():
    torch.manual_seed(0)
    scorer = BilinearRoleScorer(width=8, n_labels=5, hidden=6).eval()
    states = torch.randn(3, 7, 8)
    mask = torch.ones(3, 7, dtype=torch.bool)
    frame_window = torch.tensor([0, 0, 2, 1])
    frame_pos = torch.tensor([1, 4, 0, 6])
    scores = scorer(states, mask, frame_window, frame_pos)
    assert scores.shape == (4, 7, 5)
    # eq. 6 by hand for frame 2 (token 0 of window 2), token 3, label 4
    pred = torch.nn.functional.leaky_relu(scorer.pred_mlp(states[2, 0]), 0.01)
    role = torch.nn.functional.leaky_relu(scorer.role_mlp(states[2, 3]), 0.01)
    u = scorer.bilinear.weight[4]
    expected = torch.cat([pred, torch.ones(1)]) @ u @ torch.cat([role, torch.ones(1)])
    assert torch.allclose(scores[2, 3, 4], expected, atol=1e-5)
    # one pass equals one call per frame
    single = scorer(states, mask, frame_window[3:], frame_pos[3:])
    assert torch.allclose(single[0], scores[3], atol=1e-5)


def test_no_frames():
    scorer = BilinearRoleScorer(width=8, n_labels=5, hidden=6)
    empty = torch.zeros(0, dtype=torch.long)
    out = scorer(torch.randn(2, 4, 8), torch.ones(2, 4, dtype=torch.bool), empty, empty)
    assert out.shape == (0, 4, 5)


def test_registered_builder():
    make = registry.architectures.get("spacy-lisa.BilinearRoleScorer.v1")(hidden_width=12)
    module = make(16, 7)
    assert isinstance(module, BilinearRoleScorer)
    assert module.pred_mlp.out_features == 12
    assert module.bilinear.weight.shape == (7, 13, 13)


def test_distance_bias_scores_the_clipped_offset_to_the_predicate():
    """max_distance adds, per label, a learned score of token - predicate clipped to
    [-k, k]; it starts at zero, so the scorer starts as the paper's."""
    torch.manual_seed(0)
    plain = BilinearRoleScorer(width=8, n_labels=5, hidden=6).eval()
    scorer = BilinearRoleScorer(width=8, n_labels=5, hidden=6, max_distance=2).eval()
    scorer.load_state_dict(plain.state_dict(), strict=False)
    states, mask = torch.randn(2, 7, 8), torch.ones(2, 7, dtype=torch.bool)
    frame_window, frame_pos = torch.tensor([0, 1]), torch.tensor([1, 5])
    before = plain(states, mask, frame_window, frame_pos)
    assert torch.equal(scorer(states, mask, frame_window, frame_pos), before)
    with torch.no_grad():
        scorer.distance.weight[2 - 1, 3] = 5.0  # offset -1 (just before), label 3
        scorer.distance.weight[2 + 2, 0] = 1.0  # offset +2 and beyond (clipped), label 0
    delta = scorer(states, mask, frame_window, frame_pos) - before
    expected = torch.zeros_like(delta)
    expected[0, 0, 3] = expected[1, 4, 3] = 5.0  # tokens 0 and 4: one before the predicate
    expected[0, 3:, 0] = 1.0  # frame 0 (predicate 1): tokens 3..6 are 2 or more after
    assert torch.allclose(delta, expected)


def test_registered_builder_distance_option():
    make = registry.architectures.get("spacy-lisa.BilinearRoleScorer.v1")
    assert make(max_distance=4)(16, 7).distance.weight.shape == (9, 7)
    assert make()(16, 7).distance is None
    with pytest.raises(ValueError, match="max_distance"):
        make(max_distance=-1)
