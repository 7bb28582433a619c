"""The bilinear role scorer (eq. 6) and its registered builder."""

import pytest
import torch
from spacy.util import registry
from thinc.api import ConfigValidationError

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


def test_registered_builder_removed_max_distance():
    """max_distance was removed: 0 (what every saved config of the builder names) builds
    the scorer, any other value fails with E052."""
    make = registry.architectures.get("spacy-lisa.BilinearRoleScorer.v1")
    assert isinstance(make(max_distance=0)(16, 7), BilinearRoleScorer)
    for value in (4, -1):
        with pytest.raises(ConfigValidationError, match="E052"):
            make(max_distance=value)
