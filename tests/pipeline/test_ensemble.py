"""Output ensembles: ``spacy-lisa ensemble`` / :func:`spacy_lisa.ensemble.join.join_pipelines`
and the ``spacy-lisa.Ensemble.v1`` model it builds."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List

import numpy
import pytest
import spacy
from spacy.util import fix_random_seed
from srl_testing import TEXT_SENTENCES, TINY_MODEL, scoreless, train_tiny_pipeline
from typer.testing import CliRunner

from spacy_lisa.cli import app
from spacy_lisa.ensemble.join import join_pipelines
from spacy_lisa.errors import UserError
from spacy_lisa.loading import srl_component
from spacy_lisa.models.types import LisaBatch
from spacy_lisa.pipeline.labels import PREDICATE_SUFFIX

TEXTS = [text for text, *_ in TEXT_SENTENCES] + ["Bob sold Anna a book .", "Mary came ."]


def _member(seed: int, steps: int) -> Any:
    fix_random_seed(seed)
    return train_tiny_pipeline(TEXT_SENTENCES, TINY_MODEL, steps=steps)


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> List[str]:
    """Three members of one config: two trained well from different seeds, one barely
    (it finds other predicates than the rest)."""
    paths = []
    for seed, steps in ((0, 40), (1, 40), (2, 4)):
        path = tmp_path_factory.mktemp(f"member{seed}")
        _member(seed, steps).to_disk(path)
        paths.append(str(path))
    return paths


def _softmax(x: numpy.ndarray) -> numpy.ndarray:
    e = numpy.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _batch(nlp: Any, predicates: Any = None) -> LisaBatch:
    docs = [nlp.make_doc(text) for text in TEXTS]
    for doc in docs:
        for token in doc:
            token.is_sent_start = token.i == 0
    windows = [[(0, len(doc))] for doc in docs]
    return LisaBatch(docs=docs, windows=windows, predicates=predicates, parse_mode="argmax")


def _frames(doc: Any) -> List[Any]:
    return scoreless([frame.to_frame_data() for frame in doc._.srl_frames])


def test_the_ensemble_averages_the_members_distributions(members: List[str]) -> None:
    """With the predicates given, the ensemble's role, tag and roleset scores are the
    log of the members' mean probabilities."""
    nlp = join_pipelines(members)
    ensemble = srl_component(nlp).model
    given = [numpy.asarray([1], dtype="i") for _ in TEXTS]
    batch = _batch(nlp, given)
    out = ensemble.predict(batch)
    singles = [srl_component(spacy.load(m)).model.predict(batch) for m in members]
    for field in ("role_scores", "tag_scores", "sense_scores"):
        expected = numpy.mean([_softmax(getattr(s, field)) for s in singles], axis=0)
        got = numpy.exp(getattr(out, field))
        valid = getattr(singles[0], field) > -1e3
        numpy.testing.assert_allclose(got[valid], expected[valid], atol=1e-5)


def test_predicates_are_agreed_before_the_roles_are_averaged(members: List[str]) -> None:
    """The frames are the tokens whose averaged tag is a predicate tag; a member that
    found others scores those frames again, so every member's roles of a frame are its
    roles with that predicate given."""
    nlp = join_pipelines(members)
    component = srl_component(nlp)
    ensemble = component.model
    batch = _batch(nlp)
    singles = [srl_component(spacy.load(m)).model for m in members]
    outs = [model.predict(batch) for model in singles]
    tag_probs = numpy.mean([_softmax(o.tag_scores) for o in outs], axis=0)
    tags = component.cfg["labels"]["tags"]
    argmax = tag_probs.argmax(-1)
    agreed_tokens = [i for i, t in enumerate(argmax) if tags[t].endswith(PREDICATE_SUFFIX)]
    own = [sorted(int(w) * 100 + int(t) for w, t in o.frames) for o in outs]
    assert len({tuple(frames) for frames in own}) > 1, "the members should disagree"
    out = ensemble.predict(batch)
    starts = numpy.cumsum([0] + [len(d) for d in batch.docs])
    assert sorted(int(starts[w] + t) for w, t in out.frames) == agreed_tokens
    # the same frames given to every member
    predicates = [[] for _ in batch.docs]
    for w, t in out.frames:
        predicates[int(w)].append(int(t))
    given = _batch(nlp, [numpy.asarray(p, dtype="i") for p in predicates])
    expected = numpy.mean([_softmax(m.predict(given).role_scores) for m in singles], axis=0)
    valid = out.role_scores > -1e3
    numpy.testing.assert_allclose(numpy.exp(out.role_scores)[valid], expected[valid], atol=1e-5)


def test_an_ensemble_of_one_model_labels_as_that_model(members: List[str]) -> None:
    single = spacy.load(members[0])
    joined = join_pipelines([members[0], members[0]])
    for a, b in zip(single.pipe(TEXTS), joined.pipe(TEXTS), strict=True):
        assert _frames(a) == _frames(b)


def test_the_joined_pipeline_saves_and_loads(members: List[str], tmp_path: Path) -> None:
    joined = join_pipelines(members)
    expected = [_frames(doc) for doc in joined.pipe(TEXTS)]
    assert any(expected)
    joined.to_disk(tmp_path / "ensemble")
    loaded = spacy.load(tmp_path / "ensemble")
    assert [_frames(doc) for doc in loaded.pipe(TEXTS)] == expected
    assert [m.name for m in srl_component(loaded).model.layers] == ["lisa"] * 3


def test_the_cli_writes_a_pipeline(members: List[str], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["ensemble", *members[:2], "--output", str(tmp_path / "e")])
    assert result.exit_code == 0, result.output
    doc = spacy.load(tmp_path / "e")("John sold the car to Mary .")
    assert doc._.srl_frames is not None
    assert "ensemble2" in spacy.load(tmp_path / "e").meta["name"]


def test_members_with_other_labels_are_refused(members: List[str], tmp_path: Path) -> None:
    fix_random_seed(0)
    other = train_tiny_pipeline(TEXT_SENTENCES[:2], TINY_MODEL, steps=2)
    other.to_disk(tmp_path / "other")
    with pytest.raises(UserError, match="E034"):
        join_pipelines([members[0], str(tmp_path / "other")])
    with pytest.raises(UserError, match="E036"):
        join_pipelines([members[0]])


def test_the_ensemble_does_not_train(members: List[str]) -> None:
    from srl_testing import gold_examples

    nlp = join_pipelines(members[:2])
    examples = gold_examples(nlp, TEXT_SENTENCES)
    with pytest.raises(ValueError, match="E183"):
        srl_component(nlp).model.begin_update(_batch(nlp))
    with pytest.raises(ValueError, match="E183"):
        nlp.initialize(lambda: examples)
