"""Label Attention Layer (LAL) and the LAN role decoder."""

import math
from typing import Tuple

import pytest
import torch
from oracles import head_slice
from spacy.util import registry
from thinc.api import Config, ConfigValidationError
from torch import Tensor, nn

from spacy_lisa.models.lal import label_attention_layer
from spacy_lisa.models.lal_torch import LabelAttentionLayer
from spacy_lisa.models.lan import lan_role_scorer
from spacy_lisa.models.lan_torch import LabelAttentionRoleDecoder
from spacy_lisa.models.types import MASK_VALUE

WIDTH = 16


def padded_batch(lengths: Tuple[int, ...], seed: int = 1) -> Tuple[Tensor, Tensor]:
    torch.manual_seed(seed)
    T = max(lengths)
    x = torch.randn(len(lengths), T, WIDTH)  # [B, T, d]
    mask = torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]  # [B, T]
    return x, mask


# --- Label Attention Layer ----------------------------------------------------------------


def make_lal(seed: int = 0, **kwargs) -> LabelAttentionLayer:
    torch.manual_seed(seed)
    options = {"n_heads": 4, "head_width": 8, **kwargs}
    return LabelAttentionLayer(WIDTH, **options).eval()


@pytest.mark.parametrize("n_heads,ffn", [(4, False), (4, True), (3, False)])
def test_lal_shapes(n_heads: int, ffn: bool) -> None:
    layer = make_lal(n_heads=n_heads, ffn=ffn)
    x, mask = padded_batch((5, 3))
    y, attn = layer(x, mask)
    assert y.shape == (2, 5, WIDTH)
    assert attn.shape == (2, n_heads, 5)
    assert layer.attributable == (WIDTH % n_heads == 0)


def test_lal_attention_rows_sum_to_one_and_padding_is_masked() -> None:
    layer = make_lal(dropout=0.5).train()  # weights are returned before dropout
    x, mask = padded_batch((6, 4, 1))
    y, attn = layer(x, mask)
    assert torch.allclose(attn.sum(-1), torch.ones(3, 4), atol=1e-6)
    assert torch.all(attn.masked_select(~mask[:, None, :]) == 0)
    layer.eval()
    y, _ = layer(x, mask)
    x2 = x.clone()
    x2[~mask] = 1e3 * torch.randn(int((~mask).sum()), WIDTH)
    y2, attn2 = layer(x2, mask)
    assert torch.allclose(y[mask], y2[mask], atol=1e-6)
    assert torch.all(y2[~mask] == 0)


@pytest.mark.parametrize("ffn", [False, True])
def test_lal_batch_invariance(ffn: bool) -> None:
    layer = make_lal(ffn=ffn)
    x, mask = padded_batch((9, 4))
    y, attn = layer(x, mask)
    y_alone, attn_alone = layer(x[1:, :4], mask[1:, :4])
    assert torch.allclose(y[1, :4], y_alone[0], atol=1e-5)
    assert torch.allclose(attn[1, :, :4], attn_alone[0], atol=1e-6)


@pytest.mark.parametrize("options", [{"ffn": True, "dropout": 0.1}, {"n_heads": 3}, {"n_heads": 4}])
def test_lal_gradients_reach_every_parameter(options: dict) -> None:
    layer = make_lal(**options).train()
    x, mask = padded_batch((5, 3))
    y, _ = layer(x, mask)
    (y[mask] * torch.randn_like(y[mask])).sum().backward()
    for name, param in layer.named_parameters():
        assert param.grad is not None, name
        assert torch.count_nonzero(param.grad) > 0, name


def test_lal_head_slices_are_attributable() -> None:
    """Changing head 2's query vector changes only head 2's slice of every token."""
    layer = make_lal()
    x, mask = padded_batch((5, 3))
    y, _ = layer(x, mask)
    with torch.no_grad():
        layer.queries[2] += 1.0
    y2, _ = layer(x, mask)
    changed = (y - y2).abs().amax(dim=(0, 1)) > 1e-6  # [d]
    expected = torch.zeros(WIDTH, dtype=torch.bool)
    expected[head_slice(layer, 2)] = True
    assert torch.equal(changed, expected)


def test_lal_invalid_sizes() -> None:
    with pytest.raises(ValueError, match="E204"):
        LabelAttentionLayer(WIDTH, 0, 8)


def test_lal_overfits_a_sequence_level_task() -> None:
    """Tag every token with whether the sequence contains token 0 anywhere: needs the
    global context that the heads' context vectors carry."""
    torch.manual_seed(0)
    n, T, vocab = 16, 6, 5
    lengths = torch.randint(2, T + 1, (n,))
    mask = torch.arange(T)[None, :] < lengths[:, None]
    ids = torch.randint(1, vocab, (n, T))
    has_zero = torch.arange(n) % 2 == 0
    ids[has_zero, (torch.rand(n) * lengths).long()[has_zero]] = 0
    gold = has_zero[:, None].long().expand(n, T)
    embed = nn.Embedding(vocab, WIDTH)
    layer = LabelAttentionLayer(WIDTH, 4, 8, dropout=0.0)
    out = nn.Linear(WIDTH, 2)
    params = [*embed.parameters(), *layer.parameters(), *out.parameters()]
    optimizer = torch.optim.Adam(params, lr=0.02)
    for _ in range(150):
        optimizer.zero_grad()
        y, _ = layer(embed(ids), mask)
        loss = nn.functional.cross_entropy(out(y)[mask], gold[mask])
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        predicted = out(layer.eval()(embed(ids), mask)[0]).argmax(-1)
    assert torch.equal(predicted[mask], gold[mask])


def test_lal_builder_is_registered() -> None:
    build = registry.architectures.get("spacy-lisa.LabelAttentionLayer.v1")
    assert build is label_attention_layer
    config = Config().from_str(
        """
        [layer]
        @architectures = "spacy-lisa.LabelAttentionLayer.v1"
        n_heads = 4
        head_width = 8
        ffn = true
        """
    )
    make = registry.resolve(config)["layer"]
    layer = make(WIDTH)
    assert isinstance(layer, LabelAttentionLayer) and layer.ffn is not None
    assert layer.n_heads == 4 and layer.width == WIDTH


def test_lal_removed_residual_dropout() -> None:
    """residual_dropout was removed: a config saved with 0.0 (every saved LAL config names
    it) builds the same layer, any other value fails with E053."""
    block = '[layer]\n@architectures = "spacy-lisa.LabelAttentionLayer.v1"\n'
    saved = registry.resolve(Config().from_str(block + "residual_dropout = 0.0"))["layer"]
    assert isinstance(saved(WIDTH), LabelAttentionLayer)
    with pytest.raises(ConfigValidationError, match="E053"):
        registry.resolve(Config().from_str(block + "residual_dropout = 0.1"))


# --- LAN role decoder ----------------------------------------------------------------------

N_LABELS = 5


def make_lan(seed: int = 0, **kwargs) -> LabelAttentionRoleDecoder:
    torch.manual_seed(seed)
    options = {"n_layers": 2, "n_heads": 2, "hidden_width": 12, "dropout": 0.0, **kwargs}
    return LabelAttentionRoleDecoder(WIDTH, N_LABELS, **options).eval()


def frames_of(*pairs: Tuple[int, int]) -> Tuple[Tensor, Tensor]:
    windows, positions = zip(*pairs, strict=True)
    return torch.tensor(windows), torch.tensor(positions)


def test_lan_shapes_and_padding_rows() -> None:
    decoder = make_lan()
    states, mask = padded_batch((6, 3))
    frame_window, frame_pos = frames_of((0, 1), (0, 4), (1, 2))
    logits = decoder(states, mask, frame_window, frame_pos)
    assert logits.shape == (3, 6, N_LABELS)
    frame_mask = mask[frame_window]
    assert torch.all(logits[~frame_mask] == MASK_VALUE)
    assert torch.all(logits[frame_mask] > MASK_VALUE / 2)
    empty = decoder(states, mask, torch.zeros(0, dtype=torch.long), torch.zeros(0).long())
    assert empty.shape == (0, 6, N_LABELS)


def test_lan_padding_changes_nothing() -> None:
    decoder = make_lan()
    states, mask = padded_batch((6, 3))
    frame_window, frame_pos = frames_of((0, 1), (1, 2), (1, 0))
    logits = decoder(states, mask, frame_window, frame_pos)
    states2 = states.clone()
    states2[~mask] = 1e3 * torch.randn(int((~mask).sum()), WIDTH)
    logits2 = decoder(states2, mask, frame_window, frame_pos)
    assert torch.allclose(logits, logits2, atol=1e-6)


def test_lan_batch_invariance() -> None:
    decoder = make_lan()
    states, mask = padded_batch((9, 4))
    batched = decoder(states, mask, *frames_of((0, 7), (1, 1), (0, 2), (1, 3)))
    alone = decoder(states[1:, :4], mask[1:, :4], *frames_of((0, 1), (0, 3)))
    assert torch.allclose(batched[1, :4], alone[0], atol=1e-5)
    assert torch.allclose(batched[3, :4], alone[1], atol=1e-5)


@pytest.mark.parametrize("n_layers,n_heads", [(1, 1), (2, 2), (3, 1)])
def test_lan_gradients_reach_every_parameter(n_layers: int, n_heads: int) -> None:
    decoder = make_lan(n_layers=n_layers, n_heads=n_heads, dropout=0.1).train()
    states, mask = padded_batch((5, 3))
    frame_window, frame_pos = frames_of((0, 1), (1, 0), (0, 4))
    logits = decoder(states, mask, frame_window, frame_pos)
    gold = torch.randint(0, N_LABELS, logits.shape[:2])
    frame_mask = mask[frame_window]
    nn.functional.cross_entropy(logits[frame_mask], gold[frame_mask]).backward()
    for name, param in decoder.named_parameters():
        assert param.grad is not None, name
        assert torch.count_nonzero(param.grad) > 0, name


def test_lan_one_layer_is_a_softmax_classifier_over_label_embeddings() -> None:
    """With one layer, softmax(logits) = softmax((H^w W^Q + b) E^T / sqrt(h) + prior), H^w
    recomputed here frame by frame (unpadded, unpacked) from the decoder's own input map
    and BiLSTM: a softmax classifier whose weights are the label embeddings."""
    decoder = make_lan(n_layers=1, hidden_width=10)
    decoder.set_label_prior(torch.randn(decoder.n_labels))
    states, mask = padded_batch((6, 4))
    frame_window, frame_pos = frames_of((0, 2), (1, 0), (1, 3))
    probs = torch.softmax(decoder(states, mask, frame_window, frame_pos), dim=-1)
    E = decoder.label_embeddings.detach()  # [L, h]
    lstm = decoder.encoders[0]
    with torch.no_grad():
        for f, (w, p) in enumerate(zip(frame_window.tolist(), frame_pos.tolist(), strict=True)):
            n = int(mask[w].sum())
            tokens = states[w, :n]  # [n, d]
            predicate = tokens[p].expand_as(tokens)
            indicator = decoder.predicate_indicator.weight[(torch.arange(n) == p).long()]
            x = decoder.input_proj(torch.cat([tokens, predicate, tokens * predicate], -1))
            x = nn.functional.leaky_relu(decoder.input_norm(x + indicator), 0.1)
            query, _ = lstm(x[None])  # [1, n, h]
            query = decoder.output_query(query[0])
            logits = query @ E.T / math.sqrt(E.shape[1]) + decoder.label_bias
            expected = torch.softmax(logits, dim=-1)
            assert torch.allclose(probs[f, :n], expected, atol=1e-6)


def test_lan_overfits_roles_by_distance_to_the_predicate() -> None:
    """The role of a token is a function of its signed distance to the predicate
    (A0 two tokens before it, A1 two after, V on it, O elsewhere), in BIO."""
    labels = ["O", "B-A0", "I-A0", "B-V", "B-A1", "I-A1"]
    by_distance = {-2: 1, -1: 2, 0: 3, 1: 4, 2: 5}
    torch.manual_seed(0)
    n, T = 5, 9
    lengths = torch.tensor([9, 7, 8, 6, 9])
    mask = torch.arange(T)[None, :] < lengths[:, None]
    states = torch.randn(n, T, WIDTH)  # no position information in the states
    pairs = [(w, p) for w in range(n) for p in range(0, int(lengths[w]), 2)]
    frame_window, frame_pos = frames_of(*pairs)
    distance = torch.arange(T)[None, :] - frame_pos[:, None]  # [F, T]
    gold = torch.zeros(len(pairs), T, dtype=torch.long)
    for d, label in by_distance.items():
        gold[distance == d] = label
    frame_mask = mask[frame_window]
    torch.manual_seed(0)
    decoder = LabelAttentionRoleDecoder(
        WIDTH, len(labels), n_layers=2, n_heads=2, hidden_width=24, dropout=0.0
    )
    optimizer = torch.optim.Adam(decoder.parameters(), lr=0.02)
    for _ in range(250):
        optimizer.zero_grad()
        logits = decoder(states, mask, frame_window, frame_pos)
        nn.functional.cross_entropy(logits[frame_mask], gold[frame_mask]).backward()
        optimizer.step()
    with torch.no_grad():
        predicted = decoder.eval()(states, mask, frame_window, frame_pos).argmax(-1)
    assert torch.equal(predicted[frame_mask], gold[frame_mask])


def test_lan_invalid_inputs() -> None:
    with pytest.raises(ValueError, match="E208"):
        LabelAttentionRoleDecoder(WIDTH, N_LABELS, hidden_width=11)
    with pytest.raises(ValueError, match="E208"):
        LabelAttentionRoleDecoder(WIDTH, N_LABELS, n_heads=3, hidden_width=16)
    with pytest.raises(ValueError, match="E207"):
        LabelAttentionRoleDecoder(WIDTH, N_LABELS, n_layers=0)
    decoder = make_lan()
    states, mask = padded_batch((6, 3))
    with pytest.raises(ValueError, match="E209"):
        decoder(states, mask, *frames_of((1, 4)))  # token 4 of window 1 is padding


def test_lan_builder_is_registered() -> None:
    assert registry.architectures.get("spacy-lisa.LANRoleScorer.v1") is lan_role_scorer
    config = Config().from_str(
        """
        [scorer]
        @architectures = "spacy-lisa.LANRoleScorer.v1"
        n_layers = 3
        hidden_width = 20
        """
    )
    make = registry.resolve(config)["scorer"]
    decoder = make(WIDTH, 7)
    assert isinstance(decoder, LabelAttentionRoleDecoder)
    assert decoder.n_layers == 3 and decoder.n_labels == 7 and decoder.hidden_width == 20
