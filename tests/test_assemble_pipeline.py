"""scripts/assemble_pipeline.py: the static vectors the sourced Tok2Vecs read."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy
import pytest
import spacy

REPO = Path(__file__).parents[1]


def _script():
    spec = importlib.util.spec_from_file_location(
        "assemble", REPO / "scripts" / "assemble_pipeline.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _with_vectors(rows):
    nlp = spacy.blank("en")
    for word, row in rows.items():
        nlp.vocab.set_vector(word, numpy.asarray(row, dtype="f"))
    return nlp


def test_a_pipeline_without_vectors_takes_the_parsers():
    srl, parser = spacy.blank("en"), _with_vectors({"cat": [1.0, 2.0], "dog": [3.0, 4.0]})
    _script().share_vectors(srl, parser)
    assert srl.vocab.vectors.n_keys == 2
    assert srl.vocab.get_vector("dog").tolist() == [3.0, 4.0]


def test_the_same_vectors_are_kept_and_different_ones_refused():
    rows = {"cat": [1.0, 2.0]}
    srl, parser = _with_vectors(rows), _with_vectors(rows)
    _script().share_vectors(srl, parser)
    assert srl.vocab.get_vector("cat").tolist() == [1.0, 2.0]
    with pytest.raises(SystemExit, match="same --paths.vectors"):
        _script().share_vectors(srl, _with_vectors({"cat": [1.0, 2.5]}))


def test_a_parser_without_vectors_changes_nothing():
    srl = _with_vectors({"cat": [1.0, 2.0]})
    _script().share_vectors(srl, spacy.blank("en"))
    assert srl.vocab.vectors.n_keys == 1


def test_assembled_parse_source_is_in_the_config_and_the_component(tmp_path: Path) -> None:
    """--parse-source model: the assembled pipeline's config.cfg and its lisa_srl agree,
    before and after saving, and the reloaded pipeline follows its own parse."""
    import srsly
    from srl_testing import TEXT_SENTENCES, TINY_MODEL, train_tiny_pipeline

    srl = train_tiny_pipeline(TEXT_SENTENCES, TINY_MODEL, steps=2)
    srl.to_disk(tmp_path / "srl")
    parser = spacy.blank("en")
    parser.add_pipe("sentencizer")
    parser.to_disk(tmp_path / "parser")
    nlp = _script().assemble(tmp_path / "srl", tmp_path / "parser", parse_source="model")
    assert nlp.get_pipe("lisa_srl").parse_source == "model"
    assert nlp.config["components"]["lisa_srl"]["parse_source"] == "model"
    nlp.to_disk(tmp_path / "assembled")
    config = spacy.util.load_config(tmp_path / "assembled" / "config.cfg")
    assert config["components"]["lisa_srl"]["parse_source"] == "model"
    # the component's options are its config's; its saved cfg holds only what it learned
    assert "parse_source" not in srsly.read_json(tmp_path / "assembled" / "lisa_srl" / "cfg")
    reloaded = spacy.load(tmp_path / "assembled")
    assert reloaded.get_pipe("lisa_srl").parse_source == "model"
    assert reloaded("John sold the car to Mary .")._.srl_parse_source == "model"


def test_a_senter_pipeline_splits_raw_text_in_front_of_lisa_srl(tmp_path: Path) -> None:
    """The `all` workflow's pipeline: configs/senter.cfg's senter and lemmatizer, trained
    a few steps, sourced in front of lisa_srl; the assembled pipeline sets sentence starts
    and lemmas on raw text, and its meta names what is in front."""
    from spacy.training import Example
    from srl_testing import TEXT_SENTENCES, TINY_MODEL, train_tiny_pipeline

    srl = train_tiny_pipeline(TEXT_SENTENCES, TINY_MODEL, steps=2)
    if "sentencizer" in srl.pipe_names:  # the senter alone must split the text
        srl.remove_pipe("sentencizer")
    srl.to_disk(tmp_path / "srl")
    config = spacy.util.load_config(REPO / "configs" / "senter.cfg")
    senter = spacy.util.load_model_from_config(config, auto_fill=True)
    words = ["John", "sold", "cars", ".", "Mary", "bought", "them", "."]
    reference = spacy.tokens.Doc(
        senter.vocab,
        words=words,
        sent_starts=[True, False, False, False, True, False, False, False],
        lemmas=["John", "sell", "car", ".", "Mary", "buy", "they", "."],
    )
    examples = [Example(senter.make_doc(" ".join(words)), reference)]
    optimizer = senter.initialize(lambda: examples)
    for _ in range(30):
        senter.update(examples, sgd=optimizer)
    senter.to_disk(tmp_path / "senter")
    nlp = _script().assemble(tmp_path / "srl", tmp_path / "senter", parse_source="model")
    assert nlp.pipe_names == [
        "lisa_split_its",
        "tok2vec",
        "senter",
        "trainable_lemmatizer",
        "lisa_srl",
    ]
    doc = nlp("John sold cars. Mary bought them.")
    assert doc.has_annotation("SENT_START") and doc.has_annotation("LEMMA")
    assert [s.text for s in doc.sents] == ["John sold cars.", "Mary bought them."]
    assert isinstance(doc._.srl_frames, list)
    assert "sentence segmenter and lemmatizer" in _script().description(nlp.pipe_names)
