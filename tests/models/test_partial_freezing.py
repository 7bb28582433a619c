"""``trainable_layers``: the embeddings and the bottom blocks of a transformer frozen, their
output (the boundary state) of each training window computed once and kept, only the top
blocks fine-tuned, on tiny random encoders of every family (``encoder_testing``)."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any, Callable, List

import numpy
import pytest
import spacy
import torch
from encoder_testing import FAMILIES, encoder_builder
from spacy.tokens import Doc
from spacy.util import registry
from srl_testing import TEXT_SENTENCES, TINY_MODEL, gold_examples
from thinc.api import Adam

from spacy_lisa.models.transformer_torch import encoder_blocks

TOK2VEC = "spacy-lisa.TransformerTok2Vec.v1"
DEPTH = 4  # blocks of the tiny encoders here
SENTENCES = [
    "John sold the car to Mary .".split(),
    "She said she would come back tomorrow .".split(),
    "The old dog barked .".split(),
]


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    return encoder_builder(tmp_path_factory.mktemp("deep_encoders"), layers=DEPTH)


@pytest.fixture(scope="module")
def vocab() -> Any:
    return spacy.blank("en").vocab


def make_tok2vec(path: Path, **options: Any) -> Any:
    # the HF configs' own dropout (0.1): the frozen part must not apply it in training
    config = {"@architectures": TOK2VEC, "name": str(path), **options}
    model = registry.resolve({"m": config})["m"]
    model.initialize()
    return model


def shim_of(model: Any) -> Any:
    return model.shims[0]


def docs_of(vocab: Any, sentences: List[List[str]]) -> List[Doc]:
    return [Doc(vocab, words=words) for words in sentences]


def block_of(name: str, n_blocks: int) -> int:
    """The block index of a transformer parameter name, -1 outside the blocks."""
    import re

    match = re.match(r"^transformer\..*?\blayers?\.(\d+)\.", name)
    return int(match.group(1)) if match else -1


def trained_parameter_names(model: Any, docs: List[Doc]) -> List[str]:
    """The encoder parameters an update changes, after one hit step (the second pass)."""
    encoder = shim_of(model).encoder
    model.begin_update(docs)  # misses: the boundary states are kept
    before = {n: p.detach().clone() for n, p in encoder.named_parameters()}
    Xs, backprop = model.begin_update(docs)  # hits
    rng = numpy.random.RandomState(0)
    backprop([rng.normal(size=x.shape).astype("float32") for x in Xs])
    model.finish_update(Adam(0.01))
    return sorted(n for n, p in encoder.named_parameters() if not torch.equal(before[n], p))


@pytest.mark.parametrize("layer_mix", [False, True], ids=["last", "mix"])
@pytest.mark.parametrize("family", FAMILIES)
def test_exactly_the_top_blocks_learn(family, layer_mix, encoder_dir, vocab):
    model = make_tok2vec(
        encoder_dir(family), trainable_layers=2, cache_tokens=10_000, layer_mix=layer_mix
    )
    changed = trained_parameter_names(model, docs_of(vocab, SENTENCES))
    blocks = {block_of(name, DEPTH) for name in changed if name.startswith("transformer.")}
    assert blocks <= {DEPTH - 2, DEPTH - 1, -1}, changed
    assert {DEPTH - 2, DEPTH - 1} <= blocks, changed  # both top blocks learn
    outside = [n for n in changed if n.startswith("transformer.") and block_of(n, DEPTH) < 0]
    # outside the blocks only what follows them may learn (ModernBERT's final norm)
    assert all(n.startswith("transformer.final_norm.") for n in outside), outside
    assert ("mix_weights" in changed) == layer_mix
    encoder = shim_of(model).encoder
    assert not any(p.requires_grad for p in encoder.transformer.embeddings.parameters())
    # in training, dropout only in the top blocks: the frozen part's output (what the
    # cache keeps) is a function of the window
    owner, name = encoder_blocks(encoder.transformer)
    blocks = list(getattr(owner, name))
    assert [block.training for block in blocks] == [False] * (DEPTH - 2) + [True] * 2
    assert not encoder.transformer.embeddings.training


@pytest.mark.parametrize("family", FAMILIES)
def test_a_cache_hit_gives_the_states_a_fresh_pass_gives(family, encoder_dir, vocab):
    """In training (dropout on in the top blocks: compared without it, in eval), the
    vectors from kept boundary states equal a fresh pass up to float16 storage, and the
    second pass over the same sentences is all hits, whatever batch they come in."""
    model = make_tok2vec(
        encoder_dir(family), trainable_layers=2, cache_tokens=10_000, layer_mix=True,
        hidden_dropout=0.0,
    )  # fmt: skip
    cache = shim_of(model).cache
    docs = docs_of(vocab, SENTENCES)
    fresh = model.predict(docs)
    first, _ = model.begin_update(docs)
    assert (cache.hits, cache.misses) == (0, 3)
    # another batch: the sentences in another order, one of them in another doc
    again, _ = model.begin_update(docs_of(vocab, SENTENCES[::-1]))
    assert (cache.hits, cache.misses) == (3, 3)
    for x, y in zip(first, fresh, strict=True):
        numpy.testing.assert_allclose(x, y, atol=1e-6)
    for x, y in zip(again[::-1], fresh, strict=True):  # float16 storage: close
        numpy.testing.assert_allclose(x, y, atol=5e-3, rtol=0)


def test_sentences_run_together_are_a_window_of_their_own(encoder_dir, vocab):
    """Two sentences in one window (no sentence boundaries) attend to each other, so the
    window misses and its states are a fresh pass's, not its sentences' side by side."""
    model = make_tok2vec(
        encoder_dir("mpnet"), trainable_layers=2, cache_tokens=10_000, hidden_dropout=0.0
    )
    cache = shim_of(model).cache
    model.begin_update(docs_of(vocab, SENTENCES[:2]))
    merged = [Doc(vocab, words=SENTENCES[0] + SENTENCES[1])]
    X, _ = model.begin_update(merged)
    assert (cache.hits, cache.misses) == (0, 3)
    numpy.testing.assert_allclose(X[0], model.predict(merged)[0], atol=1e-6)
    separate = numpy.concatenate(model.predict(docs_of(vocab, SENTENCES[:2])))
    assert numpy.abs(X[0] - separate).max() > 1e-3


def test_the_cache_stays_under_its_cap_and_recomputes_what_left(encoder_dir, vocab):
    """cache_tokens bounds the wordpieces kept (the boundary states' memory); past it the
    least recently used windows leave and are computed again when seen again."""
    docs = docs_of(vocab, SENTENCES)
    unbounded = make_tok2vec(encoder_dir("bert"), trainable_layers=1, cache_tokens=10_000)
    sizes = []
    for doc in docs:  # each window's wordpieces, special tokens included
        before = shim_of(unbounded).cache.n_tokens
        unbounded.begin_update([doc])
        sizes.append(shim_of(unbounded).cache.n_tokens - before)
    assert all(size > len(doc) for size, doc in zip(sizes, docs, strict=True))
    cap = sizes[1] + sizes[2]  # room for the last two windows only
    model = make_tok2vec(
        encoder_dir("bert"), trainable_layers=1, cache_tokens=cap, hidden_dropout=0.0
    )
    cache = shim_of(model).cache
    for doc in docs:
        model.begin_update([doc])
        assert cache.n_tokens <= cap
    assert len(cache) == 2 and cache.get(tuple(SENTENCES[0])) is None  # the first left
    width = shim_of(model).encoder.width
    assert sum(value.nbytes for value, _ in cache._data.values()) == cap * width * 2
    misses = cache.misses
    X, _ = model.begin_update([docs[0]])
    assert cache.misses == misses + 1 and cache.n_tokens <= cap
    numpy.testing.assert_allclose(X[0], model.predict([docs[0]])[0], atol=1e-6)


def test_zero_and_all_trainable_layers_are_the_frozen_and_the_fine_tuned_paths(encoder_dir, vocab):
    frozen = make_tok2vec(encoder_dir("bert"), trainable_layers=0, cache_tokens=1000)
    encoder = shim_of(frozen).encoder
    assert encoder.frozen and not any(p.requires_grad for p in encoder.parameters())
    docs = docs_of(vocab, SENTENCES)
    frozen.begin_update(docs)
    assert shim_of(frozen).cache.n_tokens == sum(len(d) for d in docs)  # pooled per token
    for t in (DEPTH, DEPTH + 3, None):
        full = make_tok2vec(encoder_dir("bert"), trainable_layers=t)
        encoder = shim_of(full).encoder
        assert encoder.n_top == 0 and all(p.requires_grad for p in encoder.parameters())


def test_contradicting_or_negative_settings_are_refused():
    base = {"@architectures": TOK2VEC, "name": "unused"}
    with pytest.raises(ValueError, match=r"\[E184\]"):
        registry.resolve({"m": {**base, "frozen": True, "trainable_layers": 2}})
    with pytest.raises(ValueError, match=r"\[E163\].*trainable_layers=-1"):
        registry.resolve({"m": {**base, "trainable_layers": -1}})
    with pytest.raises(ValueError, match=r"\[E162\]"):
        registry.resolve({"m": {**base, "cache_tokens": 100}})
    with pytest.raises(ValueError, match=r"\[E186\].*Linear"):
        encoder_blocks(torch.nn.Linear(2, 2))


@pytest.mark.parametrize("family", ["bert", "roberta", "mpnet"])
def test_a_pipeline_trained_so_saves_loads_and_predicts_the_same_frames(
    family, encoder_dir, tmp_path
):
    local = tmp_path / family
    shutil.copytree(encoder_dir(family), local)
    model = copy.deepcopy(TINY_MODEL)
    model["tok2vec"] = {
        "@architectures": TOK2VEC, "name": str(local), "trainable_layers": 2,
        "layer_mix": True, "cache_tokens": 10_000,
    }  # fmt: skip
    nlp = spacy.blank("xx")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": model, "predicate_source": "doc"})
    examples = gold_examples(nlp, TEXT_SENTENCES)
    optimizer = nlp.initialize(lambda: examples)
    tok2vec = nlp.get_pipe("lisa_srl").model.get_ref("tok2vec")
    bottom = encoder_blocks(shim_of(tok2vec).encoder.transformer)
    bottom_before = copy.deepcopy(getattr(*bottom)[0].state_dict())
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    assert shim_of(tok2vec).cache.hits > 0
    bottom_after = getattr(*bottom)[0].state_dict()
    assert all(torch.equal(bottom_before[k], bottom_after[k]) for k in bottom_after)

    def frames(pipeline: Any) -> List[Any]:
        doc = pipeline.make_doc("She said she would come .")
        doc._.srl_predicates = [1, 4]
        doc = pipeline(doc)
        return [(f.predicate.start, f.roleset, [(r.start, r.end, r.label_) for r in f.roles])
                for f in doc._.srl_frames]  # fmt: skip

    expected = frames(nlp)
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(local)
    loaded = spacy.load(tmp_path / "pipeline")
    loaded_encoder = shim_of(loaded.get_pipe("lisa_srl").model.get_ref("tok2vec")).encoder
    assert loaded_encoder.n_top == 2
    assert frames(loaded) == expected
