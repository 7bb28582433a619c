"""The LISA torch module: shapes, padding, parse injection, gradients, options."""

from typing import Dict, List

import pytest
import torch
from srl_testing import score_windows, tiny_lisa_torch

from spacy_lisa.models.attention import MultiHeadSelfAttention
from spacy_lisa.models.lal import label_attention_layer
from spacy_lisa.models.lan import lan_role_scorer
from spacy_lisa.models.lisa_torch import LisaTorchModel
from spacy_lisa.models.relative_attention import RelativeMultiHeadSelfAttention
from spacy_lisa.models.types import MASK_VALUE

N_IN, N_TAGS, N_DEPS, N_ROLES = 12, 5, 4, 6
LENGTHS = [5, 7, 3]
T = max(LENGTHS)


def make_model(**options) -> LisaTorchModel:
    """Four layers, the syntactic head at layer 3 (room for layers on either side)."""
    return tiny_lisa_torch(
        N_IN, N_TAGS, N_DEPS, N_ROLES, **{"depth": 4, "parse_layer": 3, **options}
    )


def make_inputs(lengths=LENGTHS, seed=1) -> Dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    length = max(lengths)
    x = torch.randn(len(lengths), length, N_IN, generator=generator)
    mask = torch.arange(length)[None, :] < torch.tensor(lengths)[:, None]
    # a hand-made parse per window: every token hangs on its left neighbour, token 0 root
    heads = torch.arange(length).expand(len(lengths), length) - 1
    heads = heads.clamp(min=0).masked_fill(~mask, -1)
    return {
        "x": x,
        "mask": mask,
        "heads": heads,
        "frame_window": torch.tensor([0, 1, 1, 2]),
        "frame_pos": torch.tensor([2, 0, 6, 1]),
    }


def test_output_shapes():
    model = make_model().eval()
    inputs = make_inputs()
    given = torch.tensor([True, False, True])
    out = score_windows(model, **inputs, given_rows=given)
    B = len(LENGTHS)
    assert out.tag_scores.shape == (B, T, N_TAGS)
    assert out.head_scores.shape == (B, T, T)
    assert out.dep_scores.shape == (B, T, N_DEPS)
    assert out.role_scores.shape == (4, T, N_ROLES)
    assert out.used_heads is not None and out.used_heads.shape == (B, T)
    assert out.label_attention is None
    assert torch.equal(out.frame_window, inputs["frame_window"])
    # masked columns hold MASK_VALUE: keys beyond each window, role tokens of padding
    assert (out.head_scores[2, :, 3:] == MASK_VALUE).all()
    assert (out.role_scores[3, 3:] == MASK_VALUE).all()  # frame 3 is in window 2 (3 tokens)
    assert (out.role_scores[0, 5:] == MASK_VALUE).all()
    # used heads: the given parse where given, the model's argmax elsewhere
    assert out.used_heads[0, :5].tolist() == [0, 0, 1, 2, 3]
    assert torch.equal(out.used_heads[1], out.head_scores[1].argmax(-1))


@pytest.mark.parametrize("own_parse", ["soft", "argmax"])
@pytest.mark.parametrize("given", [False, True])
def test_scores_do_not_depend_on_padding(own_parse, given):
    """A sentence scores the same alone or padded in a batch with longer ones."""
    model = make_model(dropout=0.3, attention_dropout=0.3).eval()
    inputs = make_inputs()
    rows = torch.full((3,), given)
    with torch.no_grad():
        batch = score_windows(model, **inputs, given_rows=rows, own_parse=own_parse)
        # window 2 (3 tokens) alone; its frame is frame 3 of the batch
        alone = score_windows(
            model,
            x=inputs["x"][2:, :3],
            mask=inputs["mask"][2:, :3],
            heads=inputs["heads"][2:, :3],
            given_rows=rows[2:],
            own_parse=own_parse,
            frame_window=torch.tensor([0]),
            frame_pos=torch.tensor([1]),
        )
    atol = 1e-5
    assert torch.allclose(batch.tag_scores[2, :3], alone.tag_scores[0], atol=atol)
    assert torch.allclose(batch.head_scores[2, :3, :3], alone.head_scores[0], atol=atol)
    assert torch.allclose(batch.dep_scores[2, :3], alone.dep_scores[0], atol=atol)
    assert torch.allclose(batch.role_scores[3, :3], alone.role_scores[0], atol=atol)
    assert batch.used_heads is not None and alone.used_heads is not None
    assert torch.equal(batch.used_heads[2, :3], alone.used_heads[0])


def _layer_outputs(model: LisaTorchModel, **inputs) -> List[torch.Tensor]:
    captured: List[torch.Tensor] = []
    hooks = [
        layer.register_forward_hook(lambda module, args, output: captured.append(output))
        for layer in model.layers
    ]
    try:
        out = score_windows(model, **inputs)
    finally:
        for hook in hooks:
            hook.remove()
    return captured + [out]  # type: ignore[list-item]


def test_injected_parse_changes_only_layers_from_p_up():
    model = make_model(tag_layer=1, parse_layer=3).eval()
    inputs = make_inputs()
    rows = torch.ones(3, dtype=torch.bool)
    other = inputs["heads"].clone()
    other[:, 1:] = 0  # a different parse: every token on the first one
    with torch.no_grad():
        *layers_a, out_a = _layer_outputs(model, **inputs, given_rows=rows)
        inputs["heads"] = other
        *layers_b, out_b = _layer_outputs(model, **inputs, given_rows=rows)
    mask = inputs["mask"]
    for j, (a, b) in enumerate(zip(layers_a, layers_b, strict=True), start=1):
        same = torch.allclose(a[mask], b[mask], atol=1e-6)
        assert same == (j < 3), f"layer {j}"
    # below p: the tags (layer r = 1) and the parse scores (read from S^(p-1))
    assert torch.equal(out_a.tag_scores, out_b.tag_scores)
    assert torch.equal(out_a.head_scores, out_b.head_scores)
    # from p up: roles, and dep labels (they follow the used heads)
    assert not torch.allclose(out_a.role_scores, out_b.role_scores)
    assert not torch.allclose(out_a.dep_scores, out_b.dep_scores)
    assert out_b.used_heads is not None
    assert out_b.used_heads[0, :5].tolist() == [0, 0, 0, 0, 0]


def test_gradients_reach_every_parameter():
    model = make_model().train()
    inputs = make_inputs()
    inputs["x"].requires_grad_(True)
    out = score_windows(
        model, **inputs, given_rows=torch.tensor([False, True, False]), own_parse="soft"
    )
    generator = torch.Generator().manual_seed(3)
    loss = sum(
        (torch.randn(t.shape, generator=generator) * t).sum()
        for t in (out.tag_scores, out.head_scores, out.dep_scores, out.role_scores)
    )
    loss.backward()
    missing = [
        name for name, p in model.named_parameters() if p.grad is None or not p.grad.abs().sum() > 0
    ]
    assert missing == []
    assert inputs["x"].grad is not None and inputs["x"].grad.abs().sum() > 0


def test_predicts_predicates_from_the_tag_layer():
    model = make_model().eval()
    # make the classifier's argmax tag 2 for every token, tag 2 being a predicate tag
    with torch.no_grad():
        model.tag_output.weight.zero_()
        model.tag_output.bias.copy_(torch.tensor([0.0, 0.0, 5.0, 0.0, 0.0]))
    inputs = make_inputs()
    del inputs["frame_window"], inputs["frame_pos"]
    predicate_tags = torch.tensor([False, False, True, False, False])
    out = score_windows(model, **inputs, predicate_tags=predicate_tags)
    expected = [(s, t) for s, n in enumerate(LENGTHS) for t in range(n)]
    assert list(zip(out.frame_window.tolist(), out.frame_pos.tolist(), strict=True)) == expected
    assert out.role_scores.shape == (sum(LENGTHS), T, N_ROLES)
    # no predicate label: no frames, empty role scores
    none = score_windows(model, **inputs, predicate_tags=torch.zeros(N_TAGS, dtype=torch.bool))
    assert none.role_scores.shape == (0, T, N_ROLES)
    assert score_windows(model, **inputs).role_scores.shape == (0, T, N_ROLES)


def test_without_syntactic_head():
    """parse_layer = 0: the paper's SA baseline, no parse scores at all."""
    model = make_model(parse_layer=0, tag_layer=4).eval()
    assert model.parser is None
    out = score_windows(model, **make_inputs())
    assert out.head_scores.shape == (3, 0, 0)
    assert out.dep_scores.shape == (3, 0, N_DEPS)
    assert out.used_heads is None
    assert out.role_scores.shape == (4, T, N_ROLES)


def test_relative_positions_use_flat_attention_in_every_layer():
    model = make_model(positions="relative").eval()
    attentions = [layer.attention for layer in model.layers]
    assert all(isinstance(a, RelativeMultiHeadSelfAttention) for a in attentions)
    inputs = make_inputs()
    with torch.no_grad():
        out = score_windows(model, **inputs, given_rows=torch.ones(3, dtype=torch.bool))
        alone = score_windows(
            model,
            x=inputs["x"][:1, :5],
            mask=inputs["mask"][:1, :5],
            heads=inputs["heads"][:1, :5],
            given_rows=torch.ones(1, dtype=torch.bool),
            frame_window=torch.tensor([0]),
            frame_pos=torch.tensor([2]),
        )
    assert torch.allclose(out.role_scores[0, :5], alone.role_scores[0], atol=1e-5)
    absolute = make_model()
    assert all(isinstance(layer.attention, MultiHeadSelfAttention) for layer in absolute.layers)


def test_label_attention_top_layer_and_lan_scorer():
    model = make_model(
        top_layer=label_attention_layer(n_heads=4, head_width=4),
        role_scorer=lan_role_scorer(n_layers=2, hidden_width=8),
    ).eval()
    out = score_windows(model, **make_inputs())
    assert out.label_attention is not None and out.label_attention.shape == (3, 4, T)
    assert out.role_scores.shape == (4, T, N_ROLES)
    assert (out.role_scores[3, 3:] == MASK_VALUE).all()


@pytest.mark.parametrize(
    "options",
    [
        dict(tag_layer=2, parse_layer=2),
        dict(tag_layer=0, parse_layer=2),
        dict(tag_layer=1, parse_layer=5),
        dict(tag_layer=5, parse_layer=0),
    ],
)
def test_layer_numbers_are_validated(options):
    with pytest.raises(ValueError, match="E150"):
        make_model(**options)


def test_unknown_positions():
    with pytest.raises(ValueError, match="E024"):
        make_model(positions="learned")


def test_unknown_sense_head():
    with pytest.raises(ValueError, match="E024.*sense_head"):
        make_model(n_senses=3, sense_head="joint")


def test_unknown_own_parse():
    model = make_model()
    with pytest.raises(ValueError, match="E024"):
        score_windows(model, **make_inputs(), own_parse="given")


def test_dep_labels_can_be_left_out():
    """At prediction on docs whose own parse labels are kept, the label scorer is skipped:
    zeros in its place, every other output unchanged."""
    model = make_model().eval()
    inputs = make_inputs()
    given = torch.tensor([True, True, True])
    with torch.no_grad():
        full = score_windows(model, **inputs, given_rows=given)
        lean = score_windows(model, **inputs, given_rows=given, dep_labels=False)
    assert lean.dep_scores.shape == full.dep_scores.shape
    assert not lean.dep_scores.any() and full.dep_scores.any()
    for name in ("tag_scores", "head_scores", "role_scores", "used_heads"):
        assert torch.equal(getattr(lean, name), getattr(full, name)), name


def test_frame_heads_train_the_encoder():
    """The lemma/UPOS classifiers (and the roleset's with sense_head="shared") train the
    encoder the roles share (detach_frame_heads, which kept them off it, was removed)."""
    model = make_model(n_senses=7, n_lemmas=3, n_pred_pos=2, sense_head="shared")
    model.train()
    out = score_windows(model, **make_inputs())
    assert out.sense_scores is not None and out.lemma_scores is not None
    (out.sense_scores.sum() + out.lemma_scores.sum()).backward()
    trained = {
        n for n, p in model.named_parameters() if p.grad is not None and p.grad.abs().sum() > 0
    }
    assert {"frame_classifier.mlp.weight", "frame_classifier.sense.weight"} <= trained
    assert any(n.startswith(("layers.", "input_proj.")) for n in trained)


@pytest.mark.parametrize("head", ["separate", "separate_context"])
def test_separate_sense_head_leaves_the_rest_of_the_model_as_without_it(head):
    """sense_head="separate": the same seed gives the same weights, the same training-mode
    outputs (dropout masks included) and the same gradients everywhere else as a model
    with no sense head, whatever the sense loss; the sense head still learns."""

    def step(model):
        model.train()  # dropout masks: the next draws of torch's stream after building
        out = score_windows(model, **make_inputs())
        loss = out.role_scores.sum() + out.tag_scores.sum() + out.lemma_scores.sum()
        if out.sense_scores is not None:
            loss = loss + 100 * out.sense_scores.logsumexp(-1).sum()
        loss.backward()
        return out

    with_sense = make_model(n_senses=7, n_lemmas=3, n_pred_pos=2, sense_head=head)
    out_with = step(with_sense)
    without = make_model(n_lemmas=3, n_pred_pos=2, sense_head=head)
    out_without = step(without)
    assert with_sense.frame_classifier.sense is None
    rest = dict(without.named_parameters())
    own = {n for n, _ in with_sense.named_parameters() if n.startswith("sense_classifier.")}
    assert own and set(dict(with_sense.named_parameters())) - own == set(rest)
    for name, param in with_sense.named_parameters():
        if name not in own:
            assert torch.equal(param, rest[name]), name
    assert out_with.sense_scores is not None and out_with.sense_scores.shape == (4, 7)
    assert torch.equal(out_with.role_scores, out_without.role_scores)
    assert torch.equal(out_with.tag_scores, out_without.tag_scores)
    for name, param in with_sense.named_parameters():
        if name in own:
            assert param.grad is not None and param.grad.abs().sum() > 0, name
        else:
            other = rest[name].grad
            assert (param.grad is None) == (other is None), name
            assert param.grad is None or torch.equal(param.grad, other), name


def test_shared_sense_head_changes_the_encoder_gradient():
    """The contrast that makes the test above able to fail: on the shared MLP, the sense
    loss reaches the encoder."""
    model = make_model(n_senses=7, n_lemmas=3, n_pred_pos=2, sense_head="shared")
    model.train()
    out = score_windows(model, **make_inputs())
    assert model.sense_classifier is None
    out.sense_scores.sum().backward()
    assert model.input_proj.weight.grad is not None
    assert model.input_proj.weight.grad.abs().sum() > 0
