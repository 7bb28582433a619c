"""spacy-lisa.TransformerTok2Vec.v1 on the real local MiniLM and real Docs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy
import pytest
import spacy
import torch
import transformers  # noqa: F401  (make install; missing, the module fails)
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry
from srl_testing import TAGGED_SENTENCES
from thinc.api import Adam

from spacy_lisa.frames import set_srl_frames
from spacy_lisa.models.pretrained import DEFAULT_ENCODER, local_model_path
from spacy_lisa.models.transformer import _plan
from spacy_lisa.models.wordpieces import doc_windows

MODEL = DEFAULT_ENCODER
# the MiniLM package is in setup.cfg's dev extra (make install): missing, the module fails
MODEL_DIR = local_model_path(MODEL)

ARCH = "spacy-lisa.TransformerTok2Vec.v1"


def make(**cfg):
    model = registry.resolve({"m": {"@architectures": ARCH, "hidden_dropout": 0.0, **cfg}})["m"]
    model.initialize()
    return model


@pytest.fixture(scope="module")
def vocab():
    return spacy.blank("en").vocab


@pytest.fixture(scope="module")
def model():
    return make()


def doc_of(vocab, words, sent_starts=None):
    return Doc(vocab, words=words, sent_starts=sent_starts)


def test_shapes_empty_doc_and_whitespace(model, vocab):
    docs = [
        doc_of(vocab, ["Hello", "world", "unbelievably", " ", "."]),
        Doc(vocab, words=[]),
        doc_of(vocab, ["Short", "."]),
    ]
    Xs = model.predict(docs)
    assert model.get_dim("nO") == 384
    assert [x.shape for x in Xs] == [(5, 384), (0, 384), (2, 384)]
    norms = numpy.abs(Xs[0]).sum(axis=1)
    assert norms[3] == 0.0  # whitespace token: no wordpiece, zero vector
    assert (numpy.delete(norms, 3) > 0).all()


def test_sentence_windows_vs_whole_doc(model, vocab):
    w1, w2 = ["John", "sold", "the", "car", "."], ["Mary", "bought", "it", "."]
    with_sents = doc_of(vocab, w1 + w2, [True] + [False] * 4 + [True] + [False] * 3)
    whole = doc_of(vocab, w1 + w2)
    X_sents, X_whole, X1, X2 = model.predict(
        [with_sents, whole, doc_of(vocab, w1), doc_of(vocab, w2)]
    )
    # sentence windows: each sentence encoded alone
    numpy.testing.assert_allclose(X_sents, numpy.concatenate([X1, X2]), atol=1e-4)
    # whole doc: cross-sentence context changes the vectors
    assert numpy.abs(X_whole - X_sents).max() > 1e-2


def test_long_window_is_split(model, vocab):
    words = ["word"] * 600  # one wordpiece each: 600 > 510
    doc = doc_of(vocab, words)
    raw, lengths = doc_windows([doc])
    windows = _plan(model, raw)
    assert lengths == [600]
    assert [(w.start, len(w.words)) for w in windows] == [(0, 510), (510, 90)]
    (X,) = model.predict([doc])
    assert X.shape == (600, 384)
    assert (numpy.abs(X).sum(axis=1) > 0).all()  # nothing truncated
    (X_tail,) = model.predict([doc_of(vocab, words[510:])])
    numpy.testing.assert_allclose(X[510:], X_tail, atol=1e-4)


def test_pooling_matches_hf_outputs(vocab, model):
    """A word's vector is the mean of its wordpieces' last hidden states."""
    from transformers import AutoModel, AutoTokenizer

    words = ["An", "unbelievably", "good", "day"]
    (X,) = model.predict([doc_of(vocab, words)])
    tokenizer = AutoTokenizer.from_pretrained(MODEL_DIR, local_files_only=True)
    hf = AutoModel.from_pretrained(MODEL_DIR, local_files_only=True).eval()
    enc = tokenizer([words], is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        hidden = hf(**enc).last_hidden_state[0].numpy()
    pieces = [i for i, w in enumerate(enc.word_ids(0)) if w == 1]
    assert len(pieces) > 1  # "unbelievably" is several wordpieces
    numpy.testing.assert_allclose(X[1], hidden[pieces].mean(axis=0), atol=1e-4)


def _update(model, docs, optimizer):
    Xs, backprop = model.begin_update(docs)
    backprop([numpy.ones_like(x) for x in Xs])
    model.finish_update(optimizer)


def test_frozen_params_fixed_mix_learns(vocab):
    model = make(frozen=True, layer_mix=True)
    encoder = model.shims[0]._model
    before = {k: v.clone() for k, v in encoder.transformer.state_dict().items()}
    mix_before = encoder.mix_weights.detach().clone()
    gamma_before = encoder.mix_gamma.detach().clone()
    docs = [doc_of(vocab, ["John", "sold", "the", "car", "."])]
    _update(model, docs, Adam(0.01))
    after = encoder.transformer.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert not torch.equal(mix_before, encoder.mix_weights.detach())
    assert not torch.equal(gamma_before, encoder.mix_gamma.detach())


def test_cache_hit_skips_transformer_in_training_only(vocab):
    """A frozen transformer's windows seen in training are cached (float16) and not run
    again in training; prediction never reads nor fills the cache (a fresh float32 pass,
    no memory held in a serving process)."""
    model = make(frozen=True, layer_mix=True, cache_tokens=1000)
    shim = model.shims[0]
    docs = [doc_of(vocab, ["John", "sold", "the", "car", "."]), doc_of(vocab, ["Hi", "!"])]
    X_predicted = model.predict(docs)
    assert len(shim.cache) == 0  # prediction: not cached
    X_first, _ = model.begin_update(docs)
    assert len(shim.cache) == 2 and shim.cache.n_tokens == 7

    def fail(*args, **kwargs):
        raise AssertionError("transformer ran on a cached window")

    shim._model.transformer.forward = fail
    try:
        X_again, _ = model.begin_update(docs)  # training reads the cache
        with pytest.raises(AssertionError, match="cached window"):
            model.predict(docs)  # prediction runs the transformer again
    finally:
        del shim._model.transformer.forward
    for a, b in zip(X_first, X_again, strict=True):
        numpy.testing.assert_allclose(a, b, atol=2e-3)  # float16 storage
    numpy.testing.assert_array_equal(model.predict(docs)[0], X_predicted[0])  # exact
    # a new window in training still runs the transformer and is added
    model.begin_update([doc_of(vocab, ["New", "words", "."])])
    assert len(shim.cache) == 3


def test_cache_is_bounded():
    from spacy_lisa.models.wordpieces import WindowCache

    cache = WindowCache(5)
    cache.put(("a", "b", "c"), numpy.zeros(1))
    cache.put(("d", "e"), numpy.zeros(1))
    cache.put(("f",), numpy.zeros(1))
    assert cache.n_tokens <= 5 and cache.get(("a", "b", "c")) is None
    assert cache.get(("f",)) is not None


def test_wordpieces_of_a_window_seen_before_are_reused(model, vocab):
    """A window's pieces are tokenised once: a sentence seen again (the next epoch, or a
    request repeating it) plans the same windows without calling the tokenizer, and only
    new sentences reach it."""
    shim = model.shims[0]
    shim.pieces.clear()
    sold = ["John", "sold", "the", "unbelievably", "expensive", "car", "."]
    docs = [doc_of(vocab, sold, [1, 0, 0, 0, 0, 0, 0]), doc_of(vocab, ["Hi", "!"])]
    first = _plan(model, doc_windows(docs)[0])
    seen = []
    tokenizer = shim.tokenizer

    class Counting:  # the tokenizer, noting the windows it is called on
        def __getattr__(self, name):
            return getattr(tokenizer, name)

        def __call__(self, texts, **kwargs):
            seen.extend(tuple(words) for words in texts)
            return tokenizer(texts, **kwargs)

    shim.tokenizer = Counting()
    try:
        again = _plan(model, doc_windows(docs)[0])
        assert seen == []
        _plan(model, doc_windows(docs + [doc_of(vocab, ["New", "words", "."])])[0])
        assert seen == [("New", "words", ".")]
    finally:
        shim.tokenizer = tokenizer
    assert [(w.start, w.words, w.ids, w.word_ids) for w in again] == [
        (w.start, w.words, w.ids, w.word_ids) for w in first
    ]
    assert len(first[0].ids) > len(sold)  # "unbelievably" is more than one piece


def test_cache_needs_frozen():
    with pytest.raises(ValueError, match=r"\[E162\].*frozen = true"):
        registry.resolve({"m": {"@architectures": ARCH, "cache_tokens": 10}})


@pytest.mark.parametrize(
    "option,code",
    [
        ({"max_batch_wordpieces": 0}, "E163"),
        ({"learn_rate_scale": -1.0}, "E163"),
        ({"frozen": True, "cache_tokens": -5}, "E163"),
    ],
)
def test_bad_options_name_the_option(option, code):
    with pytest.raises(ValueError, match=rf"\[{code}\]"):
        registry.resolve({"m": {"@architectures": ARCH, **option}})


def test_use_before_initialize_says_what_to_do(vocab):
    model = registry.resolve({"m": {"@architectures": ARCH}})["m"]
    with pytest.raises(ValueError, match=r"\[E165\].*nlp.initialize"):
        model.predict([doc_of(vocab, ["John", "ran", "."])])


def test_learn_rate_scale_reaches_optimizer(vocab):
    docs = [doc_of(vocab, ["John", "sold", "the", "car", "to", "Mary", "."])]
    moves = {}
    for scale in (1.0, 0.05):
        model = make(learn_rate_scale=scale)
        param = model.shims[0]._model.transformer.encoder.layer[0].output.dense.weight
        before = param.detach().clone()
        _update(model, docs, Adam(1e-3, grad_clip=0.0))
        moves[scale] = (param.detach() - before).abs().sum().item()
    assert moves[1.0] > 0
    assert moves[0.05] / moves[1.0] == pytest.approx(0.05, rel=0.05)


def test_to_bytes_from_bytes(model, vocab):
    docs = [doc_of(vocab, ["John", "sold", "the", "car", "."])]
    data = model.to_bytes()
    fresh = registry.resolve({"m": {"@architectures": ARCH, "name": "/nonexistent/dir"}})["m"]
    fresh.from_bytes(data)
    assert fresh.get_dim("nO") == 384
    numpy.testing.assert_allclose(fresh.predict(docs)[0], model.predict(docs)[0], atol=1e-5)


@pytest.mark.parametrize("load", ["initialize", "from_bytes"])
def test_weights_go_to_the_device_thinc_runs_on(model, monkeypatch, load):
    """The transformer is loaded on the CPU; built into the shim, it moves to thinc's
    device (the GPU after require_gpu). "meta" stands in for the GPU here."""
    import spacy_lisa.models.transformer_shim as transformer_module

    data = model.to_bytes()
    meta = torch.device("meta")
    monkeypatch.setattr(transformer_module, "get_torch_default_device", lambda: meta)
    if load == "initialize":
        fresh = make()
    else:
        fresh = registry.resolve({"m": {"@architectures": ARCH, "name": "/nonexistent/dir"}})["m"]
        fresh.from_bytes(data)
    devices = {p.device.type for p in fresh.shims[0]._model.parameters()}
    assert devices == {"meta"}


SENTENCES = TAGGED_SENTENCES[:2]


def make_examples(nlp):
    examples = []
    for words, tags, heads, deps, frames in SENTENCES:
        ref = Doc(nlp.vocab, words=words, tags=tags, heads=heads, deps=deps)
        set_srl_frames(
            ref,
            [
                {"predicate": [p, p + 1], "roleset": rs, "roles": [list(r) for r in roles]}
                for p, rs, roles in frames
            ],
        )
        examples.append(Example(nlp.make_doc(" ".join(words)), ref))
    return examples


def test_lisa_trains_and_round_trips_without_model_dir(tmp_path, vocab):
    from srl_testing import TINY_MODEL

    model_copy = tmp_path / "minilm"
    shutil.copytree(MODEL_DIR, model_copy)
    nlp = spacy.blank("en")
    tok2vec = {"@architectures": ARCH, "name": str(model_copy), "learn_rate_scale": 0.1}
    nlp.add_pipe("lisa_srl", config={"model": {**TINY_MODEL, "tok2vec": tok2vec}})
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    transformer = nlp.get_pipe("lisa_srl").model.get_ref("tok2vec").shims[0]._model.transformer
    before = transformer.embeddings.word_embeddings.weight.detach().clone()
    losses = {}
    for _ in range(2):
        nlp.update(examples, sgd=optimizer, drop=0.0, losses=losses)
    assert numpy.isfinite(losses["lisa_srl"]) and losses["lisa_srl"] > 0
    assert not torch.equal(before, transformer.embeddings.word_embeddings.weight.detach())

    text = "John sold the car to Mary ."
    expected = nlp.get_pipe("lisa_srl").model.get_ref("tok2vec").predict([nlp.make_doc(text)])
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(model_copy)
    assert not Path(model_copy).exists()
    loaded = spacy.load(tmp_path / "pipeline")
    got = loaded.get_pipe("lisa_srl").model.get_ref("tok2vec").predict([loaded.make_doc(text)])
    numpy.testing.assert_allclose(got[0], expected[0], atol=1e-5)
    loaded(text)  # the whole pipeline runs
