"""Prediction runs the encoder's token-wise layers on the real tokens only (d818063):
:class:`~spacy_lisa.models.attention.Packing`, and the LISA module's outputs in eval mode
equal those of the padded computation (up to float rounding), for every option."""

from typing import Dict

import pytest
import torch
from srl_testing import score_windows, tiny_lisa_torch

from spacy_lisa.models.attention import EncoderLayer, Packing
from spacy_lisa.models.lal import label_attention_layer
from spacy_lisa.models.lan import lan_role_scorer
from spacy_lisa.models.lisa_torch import LisaTorchModel

N_IN, N_TAGS, N_DEPS, N_ROLES = 12, 5, 4, 6
# windows of very different lengths: most of the padded rows are padding
LENGTHS = [2, 9, 1, 5, 9, 3]


def make_model(**options) -> LisaTorchModel:
    """In eval mode, with lemma classes, and a tag classifier that predicts some
    predicates."""
    model = tiny_lisa_torch(N_IN, N_TAGS, N_DEPS, N_ROLES, **{"n_lemmas": 3, **options})
    with torch.no_grad():
        model.tag_output.bias[1] += 1.0
    return model.eval()


def make_inputs(seed: int = 1) -> Dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    T = max(LENGTHS)
    mask = torch.arange(T)[None, :] < torch.tensor(LENGTHS)[:, None]
    x = torch.randn(len(LENGTHS), T, N_IN, generator=generator)
    x = x.masked_fill(~mask[..., None], 7.0)  # padding rows: junk, never read
    heads = torch.randint(0, T, (len(LENGTHS), T), generator=generator)
    heads = torch.minimum(heads, (torch.tensor(LENGTHS) - 1)[:, None]).masked_fill(~mask, -1)
    return {"x": x, "mask": mask, "heads": heads}


def padded(model: LisaTorchModel, monkeypatch: pytest.MonkeyPatch, **inputs):
    with monkeypatch.context() as patch:
        patch.setattr(LisaTorchModel, "_packing", lambda self, mask: None)
        with torch.no_grad():
            return score_windows(model, **inputs)


def assert_same_outputs(packed, reference, mask: torch.Tensor) -> None:
    close = dict(rtol=1e-5, atol=1e-5)
    assert torch.equal(packed.frame_window, reference.frame_window)
    assert torch.equal(packed.frame_pos, reference.frame_pos)
    torch.testing.assert_close(packed.tag_scores[mask], reference.tag_scores[mask], **close)
    torch.testing.assert_close(packed.role_scores, reference.role_scores, **close)
    if reference.used_heads is not None:
        torch.testing.assert_close(packed.head_scores[mask], reference.head_scores[mask], **close)
        torch.testing.assert_close(packed.dep_scores[mask], reference.dep_scores[mask], **close)
        assert torch.equal(packed.used_heads[mask], reference.used_heads[mask])
    for name in ("sense_scores", "lemma_scores", "label_attention"):
        if getattr(reference, name) is None:
            assert getattr(packed, name) is None
        else:
            torch.testing.assert_close(getattr(packed, name), getattr(reference, name), **close)


def test_packing_round_trip():
    mask = torch.arange(4)[None, :] < torch.tensor([2, 4, 1])[:, None]
    packing = Packing.of(mask)
    assert packing is not None and packing.n_tokens == 7
    assert packing.position.tolist() == [0, 1, 0, 1, 2, 3, 0]
    assert packing.window.tolist() == [0, 0, 1, 1, 1, 1, 2]
    values = torch.arange(12.0).view(3, 4)[..., None].expand(3, 4, 2)
    packed = packing.pack(values)
    assert packed[:, 0].tolist() == [0, 1, 4, 5, 6, 7, 8]
    unpacked = packing.unpack(packed)
    assert torch.equal(unpacked[mask], values[mask]) and not unpacked[~mask].any()
    # window offsets -> packed rows of the same window (e.g. parents)
    assert packing.rows(torch.tensor([1, 0, 3, 3, 0, 2, 0])).tolist() == [1, 0, 5, 5, 2, 4, 6]


def test_packing_needs_prefix_masks():
    assert Packing.of(torch.tensor([[True, False, True]])) is None
    assert Packing.of(torch.tensor([[False, False], [True, False]])) is not None


OPTIONS = {
    "default": {},
    "senses": dict(n_senses=4),
    "parse at the top layer": dict(tag_layer=2, parse_layer=3),
    "no syntactic head": dict(parse_layer=0),
    "label attention": dict(top_layer=label_attention_layer(n_heads=2, head_width=4)),
    "lan scorer": dict(role_scorer=lan_role_scorer(n_layers=1, hidden_width=8)),
}


@pytest.mark.parametrize("options", list(OPTIONS.values()), ids=list(OPTIONS))
@pytest.mark.parametrize("parse", ["argmax", "soft", "given", "mixed"])
@pytest.mark.parametrize("predicates", ["given", "predicted"])
def test_packed_prediction_equals_padded(monkeypatch, options, parse, predicates):
    model = make_model(**dict(options))
    inputs = make_inputs()
    mask = inputs["mask"]
    given = {"given": [True] * 6, "mixed": [True, False, True, False, False, True]}
    kwargs = dict(
        inputs, own_parse="argmax" if parse == "given" else parse.replace("mixed", "soft")
    )
    kwargs["given_rows"] = torch.tensor(given.get(parse, [False] * 6))
    if predicates == "given":
        kwargs["frame_window"] = torch.tensor([0, 1, 1, 3, 4, 5])
        kwargs["frame_pos"] = torch.tensor([1, 0, 8, 4, 2, 0])
    else:
        kwargs["predicate_tags"] = torch.tensor([False, True, False, False, True])
    calls = []
    original = EncoderLayer.forward_packed

    def spy(self, *args, **kw):
        calls.append(1)
        return original(self, *args, **kw)

    monkeypatch.setattr(EncoderLayer, "forward_packed", spy)
    with torch.no_grad():
        packed = score_windows(model, **kwargs)
    assert len(calls) == len(model.layers)  # the packed path ran
    reference = padded(model, monkeypatch, **kwargs)
    assert predicates == "given" or packed.frame_window.numel() > 0
    assert_same_outputs(packed, reference, mask)


def test_training_and_relative_positions_run_padded(monkeypatch):
    calls = []
    monkeypatch.setattr(EncoderLayer, "forward_packed", lambda *a, **k: calls.append(1))
    inputs = dict(make_inputs(), frame_window=torch.tensor([1]), frame_pos=torch.tensor([2]))
    model = make_model()
    score_windows(
        model.train(), **inputs
    )  # dropout masks are drawn per padded row: training stays padded
    with torch.no_grad():
        score_windows(make_model(positions="relative"), **inputs)
    assert calls == []
    # a mask that is not a prefix per window cannot be packed either
    assert model.eval()._packing(torch.tensor([[True, False, True]])) is None


def test_head_scores_can_be_left_out_when_every_window_is_given(monkeypatch):
    """At prediction on docs with their own parse and labels, nothing reads the head's
    own parse: with head_scores=False its projections and arc scores are skipped (zeros),
    every other output unchanged. Any window on the model's own parse needs them."""
    model = make_model()
    inputs = dict(make_inputs(), frame_window=torch.tensor([1, 4]), frame_pos=torch.tensor([3, 0]))
    assert model.parser is not None
    projections = []
    model.parser.dep_mlp.register_forward_hook(lambda *args: projections.append(1))
    everywhere = torch.ones(len(LENGTHS), dtype=torch.bool)
    with torch.no_grad():
        full = score_windows(model, **inputs, given_rows=everywhere, dep_labels=False)
        assert len(projections) == 1
        lean = score_windows(
            model, **inputs, given_rows=everywhere, dep_labels=False, head_scores=False
        )
        assert len(projections) == 1
        mixed = everywhere.clone()
        mixed[2] = False
        needed = score_windows(
            model, **inputs, given_rows=mixed, dep_labels=False, head_scores=False
        )
        assert len(projections) == 2
    assert not lean.head_scores.any() and lean.head_scores.shape == full.head_scores.shape
    assert full.head_scores.any() and needed.head_scores.any()
    for name in ("tag_scores", "role_scores", "used_heads", "dep_scores", "lemma_scores"):
        assert torch.equal(getattr(lean, name), getattr(full, name)), name
