"""The predicate-aware architecture (``spacy-lisa.PredicateAwareLISA.v1``): each
predicate's roles come from an encoding of its window with that predicate marked, the
tok2vec run again on it (``reencode``) or the mark at the LISA encoder's input only."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any, List

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.util import registry
from srl_testing import TEXT_SENTENCES, TINY_MODEL, gold_examples, overfit
from test_lisa import DATA, make_batch, make_docs, make_model

from spacy_lisa.models.lisa_torch import LisaTorchModel
from spacy_lisa.models.pretrained import DEFAULT_ENCODER, local_model_path
from spacy_lisa.models.transformer import _encode, _plan, encode_marked
from spacy_lisa.models.wordpieces import MarkedWindows, marked_windows

PREDICATE_AWARE = "spacy-lisa.PredicateAwareLISA.v1"

MINILM = DEFAULT_ENCODER
TRANSFORMER_TOK2VEC = {
    "@architectures": "spacy-lisa.TransformerTok2Vec.v1",
    "name": MINILM,
    "hidden_dropout": 0.0,
    "learn_rate_scale": 0.1,
}


def frames_of(doc: Doc) -> List[Any]:
    return [
        (f.predicate.start, f.roleset, [(r.start, r.end, r.label_) for r in f.roles])
        for f in doc._.srl_frames
    ]


@pytest.mark.parametrize("reencode", [True, False])
def test_roles_of_a_predicate_do_not_depend_on_the_other_predicates(reencode):
    """A frame's role scores are the same whether its predicate is scored alone, with the
    sentence's other predicates, or in a batch with other sentences."""
    model = make_model(architecture=PREDICATE_AWARE, reencode=reencode, dropout=0.1)
    docs = make_docs()
    model.initialize(X=make_batch(docs))
    doc = next(d for d in docs if len(DATA[docs.index(d)][4]) == 2)  # two predicates
    first, second = (f[0] for f in DATA[docs.index(doc)][4])

    def scores(batch_docs, predicates):
        """Role scores of the frames of ``doc`` in a batch, by predicate."""
        batch = make_batch(batch_docs)
        batch.predicates = [numpy.asarray(p) for p in predicates]
        output = model.predict(batch)
        i = batch_docs.index(doc)
        return {
            output.windows[s][1] + offset: output.role_scores[f, : len(doc)]
            for f, (s, offset) in enumerate(output.frames.tolist())
            if output.windows[s][0] == i
        }

    both = scores([doc], [[first, second]])
    others = [d for d in docs if d is not doc]
    other_predicates = [[f[0] for f in DATA[docs.index(d)][4]] for d in others]
    batched = scores([*others, doc], [*other_predicates, [first, second]])
    for predicate in (first, second):
        alone = scores([doc], [[predicate]])
        numpy.testing.assert_allclose(alone[predicate], both[predicate], atol=1e-5)
        numpy.testing.assert_allclose(batched[predicate], both[predicate], atol=1e-5)
    # and the two predicates' roles are encoded apart: their scores differ
    assert numpy.abs(both[first] - both[second]).max() > 1e-3


def _call_kind(request: Any) -> str:
    if request.marked:
        return "marked"
    assert not request.score_roles
    return "sentences"


@pytest.mark.parametrize("reencode", [True, False])
def test_training_scores_the_gold_predicates_prediction_its_own(reencode, monkeypatch):
    """In training the marked call runs on the gold predicates (teacher forcing), one
    row each, marked at its position; at prediction on the predicates the sentence pass
    found."""
    model = make_model(architecture=PREDICATE_AWARE, reencode=reencode)
    docs = make_docs()
    batch = make_batch(docs)
    model.initialize(X=batch)
    calls: List[Any] = []
    forward = LisaTorchModel.forward

    def spy(self, x, mask, request):
        frame_pos = request.frame_pos if request.marked else None
        calls.append((_call_kind(request), x.shape[0], frame_pos))
        return forward(self, x, mask, request)

    monkeypatch.setattr(LisaTorchModel, "forward", spy)
    output, _ = model.begin_update(batch)
    gold = [(i, p) for i, item in enumerate(DATA) for p, _ in item[4]]
    found = [(output.windows[s][0], output.windows[s][1] + o) for s, o in output.frames.tolist()]
    assert found == gold
    assert [kind for kind, _, _ in calls] == ["sentences", "marked"]
    assert calls[1][1] == len(gold)  # one row per gold predicate
    assert calls[1][2].tolist() == [p for _, p in gold]  # marked at the predicate
    calls.clear()
    predicted = model.predict(make_batch(docs, mode="argmax", predicates=False))
    kinds = [kind for kind, _, _ in calls]
    n_predicted = len(predicted.frames)
    assert kinds == (["sentences", "marked"] if n_predicted else ["sentences"])
    assert predicted.role_scores.shape[0] == n_predicted


def test_only_the_predicate_aware_architecture_learns_a_marker():
    single = make_model()
    single.initialize(X=make_batch(make_docs()))
    assert single.layers[1].shims[0]._model.predicate_marker is None
    aware = make_model(architecture=PREDICATE_AWARE)
    aware.initialize(X=make_batch(make_docs()))
    assert aware.layers[1].shims[0]._model.predicate_marker is not None


def test_marked_pipeline_gives_the_same_frames_alone_batched_and_after_loading(tmp_path):
    """lisa_srl with predicate_source="doc": a predicate's frame is the same with the
    sentence's other predicates marked or not, in nlp.pipe batches or one by one, and
    after to_disk / spacy.load."""
    model = copy.deepcopy(TINY_MODEL)
    model["@architectures"] = PREDICATE_AWARE
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": model})
    overfit(nlp, gold_examples(nlp, TEXT_SENTENCES), steps=40)
    srl = nlp.get_pipe("lisa_srl")
    srl.predicate_source = "doc"
    text = "She said she would come ."

    def run(predicates, pipeline=nlp):
        doc = pipeline.make_doc(text)
        doc._.srl_predicates = predicates
        for _, proc in pipeline.pipeline:
            doc = proc(doc)
        return frames_of(doc)

    both = run([1, 4])
    assert [f[0] for f in both] == [1, 4]
    assert run([1]) == both[:1] and run([4]) == both[1:]
    assert both[0][2] == [(0, 1, "ARG0"), (2, 5, "ARG1")]  # learnt
    srl.predicate_source = "model"
    texts = [t for t, *_ in TEXT_SENTENCES] * 3
    one_by_one = [frames_of(nlp(t)) for t in texts]
    assert [frames_of(d) for d in nlp.pipe(texts, batch_size=4)] == one_by_one
    nlp.to_disk(tmp_path / "marked")
    loaded = spacy.load(tmp_path / "marked")
    assert loaded.get_pipe("lisa_srl").model.attrs["lisa_config"]["predicate_marker"] is True
    assert [frames_of(d) for d in loaded.pipe(texts)] == one_by_one


# --- the transformer's marked input ------------------------------------------------------


@pytest.fixture(scope="module")
def transformer():
    model = registry.resolve({"m": TRANSFORMER_TOK2VEC})["m"]
    model.initialize()
    return model


def test_marked_windows_mark_the_predicate_wordpieces_as_token_type_one(transformer):
    vocab = spacy.blank("en").vocab
    doc = Doc(vocab, words=["They", "unbelievably", "outmanoeuvred", "us", "."])
    items = [(0, 0, 5, 2), (0, 1, 4, 2), (0, 0, 5, 3)]
    raw, lengths = marked_windows(MarkedWindows([doc], items))
    windows = _plan(transformer, raw)
    assert lengths == [5, 3, 5]
    assert transformer.shims[0].encoder.predicate_mark == "token_type"  # MiniLM: 2 types
    (sub,) = _encode(transformer, windows)
    types = sub.marks.numpy()
    ids = sub.input_ids.numpy()
    tokenizer = transformer.shims[0].tokenizer
    for _, start, end, predicate in items:
        # rows are sorted by length: find this item's row by its ids
        words = [t.text for t in doc[start:end]]
        marked_word = predicate - start
        enc = tokenizer(words, is_split_into_words=True, add_special_tokens=True)
        r = next(
            r
            for r in range(len(ids))
            if ids[r, : len(enc["input_ids"])].tolist() == enc["input_ids"]
            and types[r].sum() == sum(1 for w in enc.word_ids() if w == marked_word)
        )
        expected = [int(w == marked_word) for w in enc.word_ids()]
        assert types[r, : len(expected)].tolist() == expected
    assert (
        sum(1 for w in tokenizer(["outmanoeuvred"], is_split_into_words=True).word_ids() if w == 0)
        > 1
    )


def test_marked_windows_output_per_item(transformer):
    vocab = spacy.blank("en").vocab
    docs = [
        Doc(vocab, words="John sold the car .".split()),
        Doc(vocab, words="Mary left .".split()),
    ]
    plain = transformer.predict(docs)
    items = [(0, 0, 5, 1), (1, 0, 3, 1), (0, 0, 5, 1), (0, 0, 5, 3)]
    marked, _ = encode_marked(transformer, MarkedWindows(docs, items), is_train=False)
    assert [x.shape for x in marked] == [(5, 384), (3, 384), (5, 384), (5, 384)]
    numpy.testing.assert_allclose(marked[0], marked[2], atol=1e-5)  # same window, same mark
    assert numpy.abs(marked[0] - marked[3]).max() > 1e-2  # another predicate marked
    assert numpy.abs(marked[0] - plain[0]).max() > 1e-2  # the mark changes the encoding


def test_transformer_with_one_token_type_marks_with_the_indicator(tmp_path):
    """A transformer with one token type (RoBERTa-style) takes the mark as the learned
    indicator (predicate_mark = "auto"); token types forced on it are refused (E172).
    tests/models/test_encoder_families.py has the other families."""
    from transformers import BertConfig, BertModel

    source = local_model_path(MINILM)
    target = tmp_path / "one_type"
    target.mkdir()
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(Path(source) / name, target / name)
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64, type_vocab_size=1,
    )  # fmt: skip
    BertModel(config).save_pretrained(target)
    model = registry.resolve({"m": {**TRANSFORMER_TOK2VEC, "name": str(target)}})["m"]
    model.initialize()
    assert model.shims[0].encoder.predicate_mark == "indicator"
    doc = Doc(spacy.blank("en").vocab, words="John sold the car .".split())
    (marked,), _ = encode_marked(model, MarkedWindows([doc], [(0, 0, 5, 1)]), is_train=False)
    assert marked.shape == (5, 32)
    forced = {**TRANSFORMER_TOK2VEC, "name": str(target), "predicate_mark": "token_type"}
    with pytest.raises(ValueError, match=r"\[E172\].*1 token type"):
        registry.resolve({"m": forced})["m"].initialize()


@pytest.mark.slow
def test_marked_transformer_pipeline_learns_and_reencodes_once_per_predicate(monkeypatch):
    """lisa_srl on MiniLM, predicate-aware: the transformer runs once on the sentences
    and once per predicate on its marked window; the tiny pipeline learns the training
    sentences' roles."""
    from spacy_lisa.models import transformer as transformer_module

    model = copy.deepcopy(TINY_MODEL)
    model.update({"@architectures": PREDICATE_AWARE, "tok2vec": TRANSFORMER_TOK2VEC})
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": model})
    overfit(nlp, gold_examples(nlp, TEXT_SENTENCES), steps=25)
    calls: List[Any] = []
    forward, encode = transformer_module.forward, transformer_module.encode_marked

    def spy_forward(model, X, is_train):
        calls.append(X)
        return forward(model, X, is_train)

    def spy_marked(model, X, is_train):
        calls.append(X)
        return encode(model, X, is_train)

    monkeypatch.setattr(transformer_module, "encode_marked", spy_marked)
    nlp.get_pipe("lisa_srl").model.layers[0]._func = spy_forward
    doc = nlp("She said she would come .")
    assert frames_of(doc) == [
        (1, "say.01", [(0, 1, "ARG0"), (2, 5, "ARG1")]),
        (4, "come.01", [(2, 3, "ARG1"), (3, 4, "ARGM-MOD")]),
    ]
    assert isinstance(calls[0], list)  # the sentences
    assert isinstance(calls[1], MarkedWindows)  # then each predicate's window
    assert [item[3] for item in calls[1].items] == [1, 4]
