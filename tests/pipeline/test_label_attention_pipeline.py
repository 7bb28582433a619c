"""lisa_srl with the label-attention options (LAN role scorer, LAL top layer, FLAT relative
positions): they train through the component, survive serialisation, and the LAL
attention is stored on the doc when asked."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from srl_testing import TINY_MODEL
from test_srl_component import LONG, TEXTS, frames_of, make_examples

import spacy_lisa.pipeline.batching as batching

VARIANTS = {
    "lan": {
        "role_scorer": {
            "@architectures": "spacy-lisa.LANRoleScorer.v1",
            "n_layers": 2,
            "hidden_width": 32,
        }
    },
    "lal": {
        "top_layer": {
            "@architectures": "spacy-lisa.LabelAttentionLayer.v1",
            "n_heads": 4,
            "head_width": 8,
        }
    },
    "relative": {"positions": "relative"},
}


def train_variant(name: str, **component):
    nlp = spacy.blank("en")
    nlp.add_pipe("lisa_srl", config={"model": {**TINY_MODEL, **VARIANTS[name]}, **component})
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
    return nlp


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def variant_nlp(request):
    return request.param, train_variant(request.param, store_attention=request.param == "lal")


def test_variant_learns_and_round_trips(variant_nlp, tmp_path):
    name, nlp = variant_nlp
    doc = nlp(TEXTS[0])
    assert [f.predicate.text for f in doc._.srl_frames] == ["sold"], name
    assert ("John", "ARG0") in [(r.text, r.label_) for r in doc._.srl_frames[0].roles], name
    expected = [frames_of(nlp(t)) for t in TEXTS]
    nlp.to_disk(tmp_path / name)
    assert [frames_of(spacy.load(tmp_path / name)(t)) for t in TEXTS] == expected
    assert [frames_of(pickle.loads(pickle.dumps(nlp))(t)) for t in TEXTS] == expected
    config = {"model": {**TINY_MODEL, **VARIANTS[name]}}
    fresh = spacy.blank("en")
    fresh.add_pipe("lisa_srl", config=config)
    assert [frames_of(fresh.from_bytes(nlp.to_bytes())(t)) for t in TEXTS] == expected


def test_lal_attention_is_stored_and_serialisable(variant_nlp):
    name, nlp = variant_nlp
    doc = nlp(TEXTS[2])
    attention = doc._.srl_label_attention
    if name != "lal":
        assert attention is None
        return
    assert attention["heads"] == [f"head_{i}" for i in range(4)]
    weights = np.asarray(attention["weights"])
    assert weights.shape == (4, len(doc))
    # one sentence = one window: each head's attention is a distribution over its words
    assert np.allclose(weights.sum(axis=1), 1.0, atol=1e-4)
    restored = Doc(nlp.vocab).from_bytes(doc.to_bytes())
    assert np.allclose(np.asarray(restored._.srl_label_attention["weights"]), weights)
    # and it can be shown: the render page carries a heatmap row per head
    import spacy_lisa

    html = spacy_lisa.render(doc)
    assert all(f"head_{i}" in html for i in range(4))


def test_a_long_doc_cut_into_calls_is_annotated_as_in_one(variant_nlp, monkeypatch):
    """The label-attention options, the LAL attention stored on the doc included, give
    a doc of many windows cut into bounded calls what one call on it gives."""
    name, nlp = variant_nlp
    docs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # W001: a window longer than max_length
        for budget in (10**9, 128):
            monkeypatch.setattr(batching, "PREDICT_CHUNK_TOKENS", budget)
            docs[budget] = nlp(LONG)
    whole, cut = docs[10**9], docs[128]
    assert frames_of(cut) == frames_of(whole), name
    assert (cut._.srl_parse, cut._.srl_pos) == (whole._.srl_parse, whole._.srl_pos), name
    if name == "lal":  # float weights: windows padded to another length in the cut calls
        weights = [np.asarray(d._.srl_label_attention["weights"]) for d in (cut, whole)]
        np.testing.assert_allclose(*weights, rtol=0, atol=1e-6)


def test_lan_starts_from_the_log_prior_of_the_roles():
    # without the prior, LAN's BiLSTM saturated into a constant all-O output on EWT
    nlp = spacy.blank("en")
    nlp.add_pipe("lisa_srl", config={"model": {**TINY_MODEL, **VARIANTS["lan"]}})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    srl = nlp.get_pipe("lisa_srl")
    counts = srl.label_data["role_counts"]
    assert counts["O"] > counts["B-ARG0"] > 0
    scorer = srl.model.layers[1].shims[0]._model.role_scorer
    bias = scorer.label_bias.detach().numpy()
    roles = srl.role_labels
    expected = np.log(
        (np.array([counts.get(r, 0) for r in roles]) + 1.0)
        / (np.array([counts.get(r, 0) for r in roles]) + 1.0).sum()
    )
    assert np.allclose(bias, expected, atol=1e-6)
    assert roles[int(bias.argmax())] == "O"
    # the counts travel with label_data, so initialize(labels=...) gives the same start
    again = spacy.blank("en")
    again.add_pipe("lisa_srl", config={"model": {**TINY_MODEL, **VARIANTS["lan"]}})
    again.get_pipe("lisa_srl").initialize(
        lambda: make_examples(again), nlp=again, labels=srl.label_data
    )
    other = again.get_pipe("lisa_srl").model.layers[1].shims[0]._model.role_scorer
    assert np.allclose(other.label_bias.detach().numpy(), bias)
