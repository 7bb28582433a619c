"""The Thinc model spacy-lisa.LISA.v1: builder, lazy build, batches, serialisation,
overfitting through lisa_loss + a thinc optimizer, and the tok2vec sublayers
(spacy.Tok2Vec.v2, a Tok2VecListener behind a real tok2vec component, a transformer
listener behind a real transformer component)."""

import copy
import pickle
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy
import pytest
import spacy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry
from thinc.api import Adam, Config, Model, data_validation, fix_random_seed

from spacy_lisa.decoding.bio import spans_to_bio
from spacy_lisa.frames import set_srl_frames
from spacy_lisa.models.lisa import build_lisa_model, ensure_built
from spacy_lisa.models.loss import lisa_loss
from spacy_lisa.models.pretrained import DEFAULT_ENCODER, local_model_path
from spacy_lisa.models.types import LisaBatch, LisaOutput, LisaTargets, LossWeights

P = ":PREDICATE"
# text, absolute heads (root = itself), deps, joint POS/predicate tags (V: a predicate
# verb), frames as (predicate index, [(start, end, role)])
RAW = [
    ("The cat chased the dog .", "1 2 2 4 2 2", "det nsubj root det obj punct",
     "DET NOUN V DET NOUN PUNCT", [(2, [(0, 2, "ARG0"), (3, 5, "ARG1")])]),
    ("A bird sang .", "1 2 2 2", "det nsubj root punct",
     "DET NOUN V PUNCT", [(2, [(0, 2, "ARG0")])]),
    ("She gave him a book .", "1 1 1 4 1 1", "nsubj root iobj det obj punct",
     "PRON V PRON DET NOUN PUNCT", [(1, [(0, 1, "ARG0"), (2, 3, "ARG2"), (3, 5, "ARG1")])]),
    ("John wanted to leave .", "1 1 3 1 1", "nsubj root mark xcomp punct",
     "PROPN V PART V PUNCT", [(1, [(0, 1, "ARG0"), (2, 4, "ARG1")]), (3, [(0, 1, "ARG0")])]),
    ("The old man slept in the park .", "2 2 3 3 6 6 3 3",
     "det amod nsubj root case det obl punct",
     "DET ADJ NOUN V ADP DET NOUN PUNCT", [(3, [(0, 3, "ARG0"), (4, 7, "ARGM-LOC")])]),
    ("Mary read the letter quickly .", "1 1 3 1 1 1", "nsubj root det obj advmod punct",
     "PROPN V DET NOUN ADV PUNCT", [(1, [(0, 1, "ARG0"), (2, 4, "ARG1"), (4, 5, "ARGM-MNR")])]),
    ("Dogs chase cats and cats run .", "1 1 1 5 5 1 1", "nsubj root obj cc nsubj conj punct",
     "NOUN V NOUN CCONJ NOUN V PUNCT",
     [(1, [(0, 1, "ARG0"), (2, 3, "ARG1")]), (5, [(4, 5, "ARG0")])]),
    ("He opened the door with a key .", "1 1 3 1 6 6 1 1",
     "nsubj root det obj case det obl punct",
     "PRON V DET NOUN ADP DET NOUN PUNCT", [(1, [(0, 1, "ARG0"), (2, 4, "ARG1"), (4, 7, "ARG2")])]),
    ("The children played .", "1 2 2 2", "det nsubj root punct",
     "DET NOUN V PUNCT", [(2, [(0, 2, "ARG0")])]),
    ("Tom said that Ann left .", "1 1 4 4 1 1", "nsubj root mark nsubj ccomp punct",
     "PROPN V SCONJ PROPN V PUNCT", [(1, [(0, 1, "ARG0"), (2, 5, "ARG1")]), (4, [(3, 4, "ARG0")])]),
]  # fmt: skip
DATA = [
    (
        text,
        [int(h) for h in heads.split()],
        deps.split(),
        ["VERB" + P if tag == "V" else tag for tag in tags.split()],
        frames,
    )
    for text, heads, deps, tags, frames in RAW
]
TAGS = sorted({tag for item in DATA for tag in item[3]})
DEPS = sorted({dep for item in DATA for dep in item[2]})
LABELS = {label for item in DATA for _, spans in item[4] for *_, label in spans}
ROLES = ["O", "B-V"] + sorted(f"{bio}-{label}" for label in LABELS for bio in "BI")
PREDICATE_TAGS = [i for i, tag in enumerate(TAGS) if tag.endswith(P)]
WIDTH = 32

TOK2VEC = f"""
[model.tok2vec]
@architectures = "spacy.Tok2Vec.v2"

[model.tok2vec.embed]
@architectures = "spacy.MultiHashEmbed.v2"
width = {WIDTH}
attrs = ["NORM", "PREFIX", "SUFFIX", "SHAPE"]
rows = [500, 100, 100, 100]
include_static_vectors = false

[model.tok2vec.encode]
@architectures = "spacy.MaxoutWindowEncoder.v2"
width = {WIDTH}
depth = 1
window_size = 1
maxout_pieces = 2
"""


def lisa_config(
    tok2vec: str = TOK2VEC, architecture: str = "spacy-lisa.LISA.v1", **options
) -> Config:
    settings = dict(
        width=WIDTH,
        depth=2,
        n_heads=2,
        ffn_width=2 * WIDTH,
        dropout=0.0,
        attention_dropout=0.0,
        tag_layer=1,
        parse_layer=2,
        parse_dep_width=16,
        parse_head_width=16,
        role_width=16,
    )
    settings.update(options)
    lines = "\n".join(f"{key} = {value!r}".replace("'", '"') for key, value in settings.items())
    return Config().from_str(f'[model]\n@architectures = "{architecture}"\n{lines}\n{tok2vec}')


def make_model(**options) -> Model[LisaBatch, LisaOutput]:
    fix_random_seed(0)
    model = registry.resolve(lisa_config(**options))["model"]
    set_dims(model)
    return model


def set_dims(model: Model) -> None:
    model.set_dim("n_tags", len(TAGS))
    model.set_dim("n_deps", len(DEPS))
    model.set_dim("n_roles", len(ROLES))
    model.attrs["predicate_tags"] = list(PREDICATE_TAGS)


def make_docs(vocab=None) -> List[Doc]:
    vocab = vocab if vocab is not None else spacy.blank("en").vocab
    return [Doc(vocab, words=item[0].split()) for item in DATA]


def item_of(doc: Doc):
    words = [token.text for token in doc]
    return next(item for item in DATA if item[0].split() == words)


def make_batch(
    docs: List[Doc], mode: str = "given", predicates: bool = True, **kwargs
) -> LisaBatch:
    data = [item_of(doc) for doc in docs]
    given = [numpy.asarray([f[0] for f in item[4]]) for item in data]
    return LisaBatch(
        docs=docs,
        windows=kwargs.pop("windows", [[(0, len(doc))] for doc in docs]),
        heads=[numpy.asarray(item[1]) for item in data],
        predicates=given if predicates else None,
        parse_mode=mode,
        **kwargs,
    )


def make_targets(batch: LisaBatch, output: LisaOutput) -> LisaTargets:
    """Gold for whole-doc windows of DATA docs, frames in output.frames order."""
    data = [item_of(doc) for doc in batch.docs]
    S = len(output.windows)
    T = max((end - start for _, start, end in output.windows), default=0)
    heads = numpy.full((S, T), -1)
    deps = numpy.full((S, T), -1)
    for s, (i, start, end) in enumerate(output.windows):
        absolute = numpy.asarray(data[i][1][start:end])
        inside = (absolute >= start) & (absolute < end)
        heads[s, : end - start] = numpy.where(inside, absolute - start, numpy.arange(end - start))
        deps[s, : end - start] = [DEPS.index(dep) for dep in data[i][2][start:end]]
    tags = numpy.asarray([TAGS.index(tag) for item in data for tag in item[3]])
    roles = numpy.full((len(output.frames), T), -1)
    for f, (s, offset) in enumerate(output.frames.tolist()):
        i, start, end = output.windows[s]
        spans = dict(data[i][4]).get(start + offset)
        if spans is None:  # a predicted predicate that is not gold
            continue
        local = [(a - start, b - start, label) for a, b, label in spans]
        bio, _ = spans_to_bio(end - start, local, predicate=(offset, offset + 1))
        roles[f, : end - start] = [ROLES.index(tag) for tag in bio]
    return LisaTargets(tags=tags, heads=heads, deps=deps, roles=roles)


def role_accuracy(batch: LisaBatch, output: LisaOutput) -> float:
    gold = make_targets(batch, output).roles
    real = gold >= 0
    return float((output.role_scores.argmax(-1) == gold)[real].mean())


# --- builder and lazy build ------------------------------------------------------------


def test_output_shapes_and_contract():
    model = make_model()
    docs = make_docs()[:3]
    batch = make_batch(docs)
    model.initialize(X=batch)
    assert model.get_dim("nI") == WIDTH  # from Tok2Vec.v2's nO
    output, backprop = model.begin_update(batch)
    N = sum(len(doc) for doc in docs)
    T = max(len(doc) for doc in docs)
    assert output.windows == [(0, 0, 6), (1, 0, 4), (2, 0, 6)]
    assert output.tag_scores.shape == (N, len(TAGS))
    assert output.head_scores.shape == (3, T, T)
    assert output.dep_scores.shape == (3, T, len(DEPS))
    assert output.frames.tolist() == [[0, 2], [1, 2], [2, 1]]
    assert output.role_scores.shape == (3, T, len(ROLES))
    assert output.used_heads is not None
    assert output.used_heads[0].tolist() == DATA[0][1]  # "given": the batch's heads
    assert output.head_scores[1, 0, 4] == pytest.approx(-1e4)  # past the window: masked
    loss, gradients = lisa_loss(model.ops, output, make_targets(batch, output), LossWeights())
    assert loss > 0
    assert backprop(gradients) is batch


def test_windows_heads_and_predicates_across_window_boundaries():
    model = make_model()
    docs = make_docs()[:2]
    model.initialize(X=make_batch(docs))
    # doc 0 in two windows; the head of token 3 ("the" -> 4) stays inside window 1, the
    # head of token 1 ("cat" -> 2) leaves window 0: treated as root (self-loop)
    batch = make_batch(docs, windows=[[(0, 2), (2, 6)], [(0, 4)]])
    output = model.predict(batch)
    assert output.windows == [(0, 0, 2), (0, 2, 6), (1, 0, 4)]
    assert output.frames.tolist() == [[1, 0], [2, 2]]  # "chased" is token 0 of window 1
    assert output.used_heads is not None
    assert output.used_heads[0, :2].tolist() == [1, 1]
    assert output.used_heads[1].tolist() == [0, 2, 0, 0]
    assert output.tag_scores.shape[0] == 10
    # plain lists work as well as arrays
    batch.heads = [[int(h) for h in heads] for heads in batch.heads or []]
    batch.predicates = [[int(p) for p in predicates] for predicates in batch.predicates or []]
    again = model.predict(batch)
    assert again.frames.tolist() == output.frames.tolist()
    numpy.testing.assert_array_equal(again.used_heads, output.used_heads)


def test_predicted_predicates_and_own_parse():
    model = make_model()
    docs = make_docs()[:2]
    model.initialize(X=make_batch(docs))
    output = model.predict(make_batch(docs, mode="argmax", predicates=False))
    predicted = model.ops.to_numpy(output.tag_scores).argmax(-1)
    flat = [(s, t) for s, (_, start, end) in enumerate(output.windows) for t in range(end - start)]
    expected = [pos for pos, tag in zip(flat, predicted, strict=True) if tag in PREDICATE_TAGS]
    assert [tuple(frame) for frame in output.frames.tolist()] == expected
    assert output.role_scores.shape[0] == len(expected)
    assert output.used_heads is not None
    assert (output.used_heads == output.head_scores.argmax(-1)).all()


def test_empty_docs():
    model = make_model()
    vocab = spacy.blank("en").vocab
    docs = make_docs(vocab)[:1]
    model.initialize(X=make_batch(docs))
    empty = Doc(vocab, words=[])
    batch = LisaBatch(docs=[empty, docs[0], empty], windows=[[], [(0, 6)], []], parse_mode="soft")
    output = model.predict(batch)
    assert output.windows == [(1, 0, 6)]
    assert output.tag_scores.shape == (6, len(TAGS))
    only_empty = LisaBatch(docs=[empty], windows=[[]], predicates=[numpy.zeros(0, dtype=int)])
    output, backprop = model.begin_update(only_empty)
    assert output.tag_scores.shape == (0, len(TAGS))
    assert output.role_scores.shape == (0, 0, len(ROLES))
    assert backprop(output) is only_empty


def test_ensure_built_is_lazy_and_idempotent():
    model = registry.resolve(lisa_config())["model"]
    with pytest.raises(ValueError, match="E153"):
        model.predict(make_batch(make_docs()[:1]))
    with pytest.raises(ValueError, match="E152"):
        ensure_built(model)  # n_tags, n_deps, n_roles unknown
    set_dims(model)
    ensure_built(model)
    lisa = model.get_ref("lisa")
    ensure_built(model)
    assert model.get_ref("lisa") is lisa and len(model.layers) == 2


def test_serialization_round_trip():
    model = make_model()
    docs = make_docs()
    batch = make_batch(docs)
    model.initialize(X=batch)
    optimizer = Adam(0.01)
    for _ in range(2):
        output, backprop = model.begin_update(batch)
        backprop(lisa_loss(model.ops, output, make_targets(batch, output), LossWeights())[1])
        model.finish_update(optimizer)
    data = model.to_bytes()
    loaded = registry.resolve(lisa_config())["model"]
    for name in ("nI", "n_tags", "n_deps", "n_roles"):  # what the component keeps in cfg
        loaded.set_dim(name, model.get_dim(name))
    ensure_built(loaded)
    loaded.from_bytes(data)
    assert loaded.attrs["predicate_tags"] == PREDICATE_TAGS  # attrs travel with the bytes
    test = make_batch(docs, mode="argmax", predicates=False)
    before, after = model.predict(test), loaded.predict(test)
    assert before.frames.tolist() == after.frames.tolist()
    numpy.testing.assert_allclose(before.role_scores, after.role_scores, atol=1e-6)
    numpy.testing.assert_allclose(before.tag_scores, after.tag_scores, atol=1e-6)


@pytest.mark.parametrize("how", ["pickle", "deepcopy", "copy"])
def test_pickle_and_copies_predict_the_same(how):
    config = lisa_config()
    config["model"]["role_scorer"] = {"@architectures": "spacy-lisa.BilinearRoleScorer.v1"}
    fix_random_seed(0)
    model = registry.resolve(config)["model"]
    set_dims(model)
    batch = make_batch(make_docs()[:3], mode="argmax", predicates=False)
    model.initialize(X=batch)
    if how == "pickle":
        other = pickle.loads(pickle.dumps(model))
    elif how == "deepcopy":
        other = copy.deepcopy(model)
    else:  # Model.copy() drops refs: the model finds its layers by position
        other = model.copy()
    expected, got = model.predict(batch), other.predict(batch)
    assert expected.frames.tolist() == got.frames.tolist()
    numpy.testing.assert_allclose(expected.tag_scores, got.tag_scores, atol=1e-6)
    numpy.testing.assert_allclose(expected.role_scores, got.role_scores, atol=1e-6)


def test_reinitialize_gives_fresh_weights():
    model = make_model()
    batch = make_batch(make_docs()[:2])
    model.initialize(X=batch)
    first = model.predict(batch).role_scores
    model.initialize(X=batch)
    assert not numpy.allclose(first, model.predict(batch).role_scores)


def test_initialize_under_data_validation():
    model = make_model()
    with data_validation(True):
        model.initialize(X=make_batch(make_docs()[:2]))


@pytest.mark.parametrize(
    "options,code",
    [
        ({"tag_layer": 2, "parse_layer": 2}, "E150"),
        ({"depth": 2, "parse_layer": 3}, "E150"),
        ({"width": 30, "n_heads": 4}, "E200"),
        ({"positions": "rotary"}, "E024"),
        ({"sense_head": "joint"}, "E024.*sense_head"),
        ({"dropout": 1.0}, "E151"),
        ({"ffn_width": 0}, "E151"),
    ],
)
def test_invalid_options(options, code):
    with pytest.raises(ValueError, match=code):
        registry.resolve(lisa_config(**options))


def test_invalid_batches():
    model = make_model()
    docs = make_docs()[:2]
    model.initialize(X=make_batch(docs))
    with pytest.raises(ValueError, match="E154"):
        model.predict(LisaBatch(docs=docs, windows=[[(0, 6)], [(0, 4)]], parse_mode="given"))
    with pytest.raises(ValueError, match="E024"):
        model.predict(make_batch(docs, mode="gold"))
    with pytest.raises(ValueError, match="E156"):
        model.predict(make_batch(docs, windows=[[(0, 5)], [(0, 4)]]))  # a token uncovered
    bad = make_batch(docs)
    bad.predicates = [numpy.asarray([7]), numpy.asarray([2])]
    with pytest.raises(ValueError, match="E156"):
        model.predict(bad)
    model.attrs["predicate_tags"] = [len(TAGS)]
    with pytest.raises(ValueError, match="E159"):
        model.predict(make_batch(docs))


def test_a_run_of_a_docs_windows_scores_as_in_all_of_them():
    """LisaBatch.parts (prediction): windows covering a run of a doc score as they do
    among all the doc's windows, the tok2vec run once for all the runs (``vectors``);
    predicates outside the run, and training on a run, are refused."""
    model = make_model()
    docs = [max(make_docs(), key=len)]
    model.initialize(X=make_batch(docs))
    n = len(docs[0])
    cut = [(0, 2), (2, 4), (4, n)]
    whole = model.predict(make_batch(docs, windows=[cut], predicates=False))
    vectors: Dict[Any, Any] = {}
    runs = [
        model.predict(
            make_batch(docs, windows=[[w]], predicates=False, parts=True, vectors=vectors)
        )
        for w in cut
    ]
    assert len(vectors) == 1  # one tok2vec pass, on the whole doc
    whole_frames = [tuple(f) for f in whole.frames.tolist()]
    for s, (run, (start, end)) in enumerate(zip(runs, cut, strict=True)):
        assert run.windows == [(0, start, end)]
        numpy.testing.assert_allclose(run.tag_scores, whole.tag_scores[start:end], atol=1e-5)
        assert numpy.array_equal(
            run.used_heads[0, : end - start], whole.used_heads[s, : end - start]
        )
        offsets = [t for w, t in whole_frames if w == s]
        assert run.frames[:, 1].tolist() == offsets
        for f, t in enumerate(offsets):
            numpy.testing.assert_allclose(
                run.role_scores[f, : end - start],
                whole.role_scores[whole_frames.index((s, t)), : end - start],
                atol=1e-5,
            )
    outside = make_batch(docs, windows=[cut[:1]], parts=True)  # predicates past token 2
    with pytest.raises(ValueError, match="E156"):
        model.predict(outside)
    with pytest.raises(ValueError, match="E156"):
        model.begin_update(make_batch(docs, windows=[cut[:1]], predicates=False, parts=True))


def test_without_syntactic_head():
    model = make_model(parse_layer=0, tag_layer=2)
    batch = make_batch(make_docs()[:2])  # "given" heads are ignored without a parser
    model.initialize(X=batch)
    output, backprop = model.begin_update(batch)
    assert output.head_scores.size == 0 and output.dep_scores.size == 0
    assert output.used_heads is None
    loss, gradients = lisa_loss(model.ops, output, make_targets(batch, output), LossWeights())
    backprop(gradients)


def test_role_scorer_and_top_layer_from_config():
    config = lisa_config()
    config["model"]["role_scorer"] = {
        "@architectures": "spacy-lisa.BilinearRoleScorer.v1",
        "hidden_width": 8,
    }
    config["model"]["top_layer"] = {
        "@architectures": "spacy-lisa.LabelAttentionLayer.v1",
        "n_heads": 4,
        "head_width": 8,
    }
    model = registry.resolve(config)["model"]
    set_dims(model)
    batch = make_batch(make_docs()[:2])
    model.initialize(X=batch)
    output = model.predict(batch)
    assert output.label_attention is not None
    assert output.label_attention.shape == (2, 4, 6)
    torch_model = model.get_ref("lisa").shims[0]._model
    assert torch_model.role_scorer.pred_mlp.out_features == 8


# --- overfitting ---------------------------------------------------------------------


def test_overfits_ten_sentences():
    """Tok2Vec.v2 + LISA + lisa_loss + Adam learn the 10 hand-made sentences."""
    model = make_model()
    docs = make_docs()
    batch = make_batch(docs)  # training: gold predicates, gold parse (teacher forcing)
    model.initialize(X=batch)
    optimizer = Adam(0.01)
    accuracy = 0.0
    for step in range(1, 101):
        output, backprop = model.begin_update(batch)
        _, gradients = lisa_loss(model.ops, output, make_targets(batch, output), LossWeights())
        backprop(gradients)
        model.finish_update(optimizer)
        if step % 5 == 0:
            accuracy = role_accuracy(batch, model.predict(batch))
            if accuracy >= 0.99 and step >= 30:
                break
    assert accuracy >= 0.99
    # end to end as at test time: own predicates, own (argmax) parse
    test = make_batch(docs, mode="argmax", predicates=False)
    output = model.predict(test)
    assert output.frames.tolist() == model.predict(batch).frames.tolist()
    targets = make_targets(batch, output)
    assert (output.used_heads == targets.heads)[targets.heads >= 0].mean() >= 0.95
    assert role_accuracy(test, output) >= 0.95


# --- tok2vec sublayers inside real pipelines --------------------------------------------


@Language.factory("lisa_model_test_host", default_config={"model": None})
def make_host(nlp: Language, name: str, model: Model) -> "LisaHost":
    return LisaHost(nlp.vocab, model, name)


class LisaHost(TrainablePipe):
    """A minimal component around the LISA model: gold heads and tags from the
    reference doc, gold frames from doc._.srl_frames. Just enough to run the model
    behind a listener inside nlp.update; the real component is spacy_lisa.pipeline."""

    def __init__(self, vocab, model: Model, name: str) -> None:
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg: Dict = {}

    def _batch(self, examples: List[Example], mode: str = "given") -> LisaBatch:
        docs = [eg.predicted for eg in examples]
        refs = [eg.reference for eg in examples]
        return LisaBatch(
            docs=docs,
            windows=[[(0, len(doc))] for doc in docs],
            heads=[numpy.asarray([token.head.i for token in ref]) for ref in refs],
            predicates=[numpy.asarray([f.predicate.start for f in r._.srl_frames]) for r in refs],
            parse_mode=mode,
        )

    def predict(self, docs: List[Doc]) -> LisaOutput:
        windows = [[(0, len(doc))] if len(doc) else [] for doc in docs]
        return self.model.predict(LisaBatch(docs=docs, windows=windows, parse_mode="argmax"))

    def set_annotations(self, docs: List[Doc], scores: LisaOutput) -> None:
        for doc in docs:
            doc.user_data["lisa_host_ran"] = True

    def initialize(self, get_examples, *, nlp: Optional[Language] = None) -> None:
        set_dims(self.model)
        self.model.initialize(X=self._batch(list(get_examples())[:5]))

    def update(self, examples, *, drop: float = 0.0, sgd=None, losses=None):
        losses = {} if losses is None else losses
        batch = self._batch(list(examples))
        output, backprop = self.model.begin_update(batch)
        targets = make_targets(batch, output)
        loss, gradients = lisa_loss(self.model.ops, output, targets, LossWeights())
        backprop(gradients)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] = losses.get(self.name, 0.0) + loss
        return losses


def make_examples(nlp: Language) -> List[Example]:
    examples = []
    for text, heads, deps, tags, frames in DATA:
        words = text.split()
        reference = Doc(nlp.vocab, words=words, heads=heads, deps=deps, tags=tags)
        set_srl_frames(reference, [{"predicate": [p, p + 1], "roles": r} for p, r in frames])
        examples.append(Example(Doc(nlp.vocab, words=words), reference))
    return examples


def train_pipeline(nlp: Language, steps: int) -> List[float]:
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.005
    history = []
    for _ in range(steps):
        losses = nlp.update(examples, sgd=optimizer)
        history.append(losses["lisa"])
    return history


def _params(model: Model) -> List[numpy.ndarray]:
    return [
        node.get_param(name).copy()
        for node in model.walk()
        for name in node.param_names
        if node.has_param(name)
    ]


def test_tok2vec_listener_behind_a_tok2vec_component():
    fix_random_seed(0)
    nlp = spacy.blank("en")
    tok2vec_config = Config().from_str("[model]\n" + TOK2VEC)["model"]["tok2vec"]
    nlp.add_pipe("tok2vec", config={"model": tok2vec_config})
    listener = f"""
[model.tok2vec]
@architectures = "spacy.Tok2VecListener.v1"
width = {WIDTH}
upstream = "tok2vec"
"""
    nlp.add_pipe("lisa_model_test_host", name="lisa", config=lisa_config(tok2vec=listener))
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    assert nlp.get_pipe("tok2vec").listening_components == ["lisa"]
    tok2vec_model = nlp.get_pipe("tok2vec").model
    tok2vec_before = _params(tok2vec_model)
    history = [nlp.update(examples, sgd=optimizer)["lisa"] for _ in range(15)]
    assert history[-1] < history[0] / 2
    # the gradient went back through the listener into the upstream tok2vec
    changed = [
        not numpy.allclose(a, b)
        for a, b in zip(_params(tok2vec_model), tok2vec_before, strict=True)
    ]
    assert all(changed)
    doc = nlp("The cat chased the dog .")
    assert doc.user_data["lisa_host_ran"]


def _minilm_path() -> Path:
    return Path(local_model_path(DEFAULT_ENCODER))


@pytest.mark.slow
def test_transformer_listener_behind_a_transformer_component(monkeypatch):
    # the optional extra spacy-lisa[spacy-transformers] (in the dev install): an install
    # with transformers 5, which spacy-transformers 1.4 rules out, runs without it
    pytest.importorskip(
        "spacy_transformers", reason="spacy-transformers (an optional extra) is not installed"
    )
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "transformer",
        config={
            "model": {
                "@architectures": "spacy-transformers.TransformerModel.v3",
                "name": str(_minilm_path()),
                "tokenizer_config": {"use_fast": True},
                "get_spans": {
                    "@span_getters": "spacy-transformers.strided_spans.v1",
                    "window": 64,
                    "stride": 48,
                },
            }
        },
    )
    listener = """
[model.tok2vec]
@architectures = "spacy-transformers.TransformerListener.v1"
grad_factor = 1.0
upstream = "*"

[model.tok2vec.pooling]
@layers = "reduce_mean.v1"
"""
    nlp.add_pipe("lisa_model_test_host", name="lisa", config=lisa_config(tok2vec=listener))
    history = train_pipeline(nlp, steps=6)
    model = nlp.get_pipe("lisa").model
    assert model.get_dim("nI") == 384  # MiniLM's width, known only after the pipeline ran
    assert history[-1] < history[0]
    doc = nlp("Tom said that Ann left .")
    assert doc.user_data["lisa_host_ran"]


def test_registered_name_resolves_to_the_builder():
    assert registry.architectures.get("spacy-lisa.LISA.v1") is build_lisa_model


# ------------------------------------------------------------------ prediction speed
def test_tok2vec_predicts_with_torch_gemm_and_trains_with_blis(monkeypatch):
    """At prediction the tok2vec's blis NumpyOps nodes run their matmuls on torch's BLAS
    (TorchGemmOps, switched on for the predicting thread only); training runs blis, as
    configured. The outputs agree up to float rounding."""
    from thinc.api import NumpyOps

    from spacy_lisa import patches

    model = make_model()
    batch = make_batch(make_docs()[:4], dep_labels=False)
    model.initialize(X=batch)
    tok2vec = model.layers[0]
    assert all(type(node.ops) is NumpyOps for node in tok2vec.walk())
    on_torch = []  # per tok2vec matmul: did it run on torch?
    gemm = patches.TorchGemmOps.gemm
    monkeypatch.setattr(
        patches.TorchGemmOps,
        "gemm",
        lambda self, *a, **k: on_torch.append(patches._torch_gemm_on()) or gemm(self, *a, **k),
    )
    fast = model.predict(batch)
    assert on_torch and all(on_torch)
    assert all(isinstance(node.ops, NumpyOps) for node in tok2vec.walk())
    on_torch.clear()
    model.begin_update(batch)
    assert on_torch and not any(on_torch)  # training: blis, as configured
    with monkeypatch.context() as patch:  # the reference: blis at prediction too
        patch.setattr(patches, "_torch_gemm_on", lambda: False)
        slow = model.predict(batch)
    for name in ("tag_scores", "role_scores", "dep_scores"):
        numpy.testing.assert_allclose(
            getattr(fast, name), getattr(slow, name), rtol=1e-4, atol=1e-4
        )


@pytest.mark.parametrize("trans1", [False, True])
@pytest.mark.parametrize("trans2", [False, True])
@pytest.mark.parametrize("into", [False, True])
def test_torch_gemm_ops_equals_numpy(trans1, trans2, into):
    from spacy_lisa.patches import TorchGemmOps, torch_gemm

    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(7, 5) if not trans1 else (5, 7)).astype("f")
    y = rng.normal(size=(5, 3) if not trans2 else (3, 5)).astype("f")
    expected = (x.T if trans1 else x) @ (y.T if trans2 else y)
    for on in (False, True):  # blis outside the block, torch inside
        out = numpy.zeros((7, 3), dtype="f") if into else None
        with torch_gemm(Model("empty", lambda model, X, is_train: (X, None)), enabled=on):
            got = TorchGemmOps().gemm(x, y, out=out, trans1=trans1, trans2=trans2)
        numpy.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        assert isinstance(got, numpy.ndarray) and got.shape == (7, 3)
        if into:
            assert got is out


def test_torch_gemm_is_switched_per_thread():
    """One thread inside torch_gemm does not switch another thread's matmuls (two
    threads sharing a pipeline, one predicting and one training, each get their own)."""
    import threading

    from spacy_lisa import patches

    seen = {}
    inside = threading.Event()
    done = threading.Event()

    def predicting():
        with patches.torch_gemm(Model("empty", lambda model, X, is_train: (X, None))):
            seen["predicting"] = patches._torch_gemm_on()
            inside.set()
            done.wait(10)

    thread = threading.Thread(target=predicting)
    thread.start()
    inside.wait(10)
    seen["other"] = patches._torch_gemm_on()
    done.set()
    thread.join()
    assert seen == {"predicting": True, "other": False}


def test_given_parse_without_labels_skips_head_scores_at_prediction_only():
    """The component's batches on docs with their own parse (given, no labels): no
    parent scores at prediction (zeros), the same other outputs; training scores them."""
    model = make_model()
    docs = make_docs()[:3]
    lean_batch = make_batch(docs, dep_labels=False)
    model.initialize(X=lean_batch)
    lean = model.predict(lean_batch)
    full = model.predict(make_batch(docs))
    assert not lean.head_scores.any() and lean.head_scores.shape == full.head_scores.shape
    assert full.head_scores.any()
    numpy.testing.assert_array_equal(lean.used_heads, full.used_heads)
    numpy.testing.assert_allclose(lean.role_scores, full.role_scores, rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(lean.tag_scores, full.tag_scores, rtol=1e-5, atol=1e-5)
    trained, _ = model.begin_update(lean_batch)
    assert trained.head_scores.any()  # the head's loss needs them
    own = model.predict(make_batch(docs, mode="argmax", dep_labels=False))
    assert own.head_scores.any()  # the model's own parse: needed
