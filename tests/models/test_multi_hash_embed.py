"""spacy-lisa.MultiHashEmbed.v1: the static vectors travel inside lisa_srl, so it can be
sourced into any spaCy pipeline (other vectors, or none) and predicts what it predicted
in its own."""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace
from typing import Any, List

import numpy
import pytest
import spacy
from srl_testing import TEXT_SENTENCES, TINY_MODEL, gold_examples, overfit

from spacy_lisa.models.multi_hash_embed import component_vectors

WORDS = "John sold the car to Mary . bought a book yesterday She said she would come Tom gave"


def vectors_pipeline(path: Path, width: int, seed: int) -> Path:
    """A pipeline holding only a vectors table of the training words (as the project's
    `vectors` step writes one)."""
    nlp = spacy.blank("en")
    rng = numpy.random.default_rng(seed)
    for word in WORDS.split():
        nlp.vocab.set_vector(word, rng.normal(size=width).astype("float32"))
    nlp.to_disk(path)
    return path


def own_vectors_model(vectors: Any) -> dict:
    model = copy.deepcopy(TINY_MODEL)
    model["tok2vec"]["embed"] = {
        "@architectures": "spacy-lisa.MultiHashEmbed.v1",
        "width": 32,
        "attrs": ["ORTH", "NORM", "SHAPE"],
        "rows": [500, 500, 100],
        "include_static_vectors": True,
        "vectors": vectors,
    }
    return model


def frames(nlp: Any, texts: List[str]) -> List[Any]:
    return [
        [(f.predicate.start, [(r.start, r.end, r.label_) for r in f.roles]) for f in d._.srl_frames]
        for d in nlp.pipe(texts)
    ]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("own_vectors")
    path = vectors_pipeline(tmp / "vectors", width=16, seed=0)
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": own_vectors_model(str(path))})
    overfit(nlp, gold_examples(nlp, TEXT_SENTENCES), steps=30)
    nlp.to_disk(tmp / "lisa")
    return tmp / "lisa"


def test_the_table_is_in_the_component_not_the_vocab(trained: Path) -> None:
    nlp = spacy.load(trained)
    assert nlp.vocab.vectors.shape[0] == 0  # no vectors in the pipeline
    layer = next(n for n in nlp.get_pipe("lisa_srl").model.walk() if n.name == "component_vectors")
    assert layer.get_param("V").shape == (len(set(WORDS.split())), 16)
    assert frames(nlp, ["John sold the car to Mary ."])[0][0] == (
        1,
        [(0, 1, "ARG0"), (2, 4, "ARG1"), (4, 6, "ARG2")],
    )


@pytest.mark.parametrize("host_vectors", ["none", "other"])
def test_sourced_into_a_pipeline_with_other_or_no_vectors(
    trained: Path, tmp_path: Path, host_vectors: str
) -> None:
    texts = [t for t, *_ in TEXT_SENTENCES] + ["Mary sold a car yesterday ."]
    source = spacy.load(trained)
    expected = frames(source, texts)
    if host_vectors == "other":
        host = spacy.load(vectors_pipeline(tmp_path / "other", width=8, seed=1))
    else:
        host = spacy.blank("en")
    host.add_pipe("sentencizer")
    host.add_pipe("lisa_srl", source=spacy.load(trained))
    assert frames(host, texts) == expected
    host.to_disk(tmp_path / "host")
    assert frames(spacy.load(tmp_path / "host"), texts) == expected


def test_vocab_vectors_model_in_a_pipeline_without_them_fails_with_a_message(
    tmp_path: Path,
) -> None:
    """A lisa_srl on spaCy's MultiHashEmbed with static vectors (the shared table) in a
    pipeline without vectors: a numbered error that says what to do, not an IndexError."""
    model = copy.deepcopy(TINY_MODEL)
    model["tok2vec"]["embed"]["include_static_vectors"] = True
    nlp = spacy.load(vectors_pipeline(tmp_path / "vectors", width=16, seed=0))
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": model})
    overfit(nlp, gold_examples(nlp, TEXT_SENTENCES), steps=2)
    host = spacy.blank("en")
    host.add_pipe("lisa_srl", source=nlp)
    with pytest.raises(ValueError, match=r"E030.*no vectors.*MultiHashEmbed\.v1"):
        host("John sold the car .")


def test_missing_vectors_fail_at_initialize() -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("lisa_srl", config={"model": own_vectors_model(None)})
    with pytest.raises(ValueError, match="E174"):
        nlp.initialize(lambda: gold_examples(nlp, TEXT_SENTENCES))


class DeviceArray:
    """A GPU array as CuPy behaves: no implicit conversion to numpy, ``.get()`` copies it
    to the host."""

    def __init__(self, data: numpy.ndarray) -> None:
        self._data = data
        self.shape = data.shape

    def __array__(self, *args: Any, **kwargs: Any) -> numpy.ndarray:
        raise TypeError("Implicit conversion to a NumPy array is not allowed.")

    def get(self) -> numpy.ndarray:
        return self._data


def test_a_vectors_table_on_the_gpu_is_copied_to_the_layer() -> None:
    """spacy train --gpu-id 0 moves the vocab's vectors table to the GPU (a CuPy array);
    the layer still takes its own sorted copy of it."""
    data = numpy.arange(12, dtype="float32").reshape(3, 4)
    table = SimpleNamespace(key2row={30: 0, 10: 2, 20: 1}, data=DeviceArray(data))
    doc = SimpleNamespace(vocab=SimpleNamespace(vectors=table))
    layer = component_vectors(5)
    layer.initialize(X=[doc])
    assert list(layer.attrs["keys"]) == [10, 20, 30]
    numpy.testing.assert_array_equal(layer.get_param("V")[layer.attrs["key_rows"]], data[[2, 1, 0]])


def test_keys_sharing_a_row_share_it_in_the_layer_after_saving_too() -> None:
    """The project's table finds a word's row by each of its cases (several keys, one
    row): the layer keeps the row once and gives it to every key, also when reloaded."""
    nlp = spacy.blank("en")
    data = numpy.arange(8, dtype="float32").reshape(2, 4)
    table = spacy.vectors.Vectors(data=data, keys=["car", "book"], strings=nlp.vocab.strings)
    table.add(nlp.vocab.strings.add("Car"), row=0)
    table.add(nlp.vocab.strings.add("CAR"), row=0)
    nlp.vocab.vectors = table
    layer = component_vectors(3)
    docs = [spacy.tokens.Doc(nlp.vocab, words=["CAR", "Car", "car", "book", "Book"])]
    layer.initialize(X=docs)
    assert layer.get_param("V").shape == (2, 4)
    loaded = component_vectors(3).from_bytes(layer.to_bytes())
    for model in (layer, loaded):
        out = model.predict(docs).data
        numpy.testing.assert_allclose(out[0], out[2])
        numpy.testing.assert_allclose(out[1], out[2])
        assert numpy.abs(out[3]).sum() > 0 and numpy.abs(out[4]).sum() == 0  # "Book": no key
