"""The pre-split fixture (tests/fixtures/presplit, made by its script with the code of
6df31c2, before the component's split and the sense classifier): a pipeline saved then
still loads and writes exactly the same frames, parse, POS and spans (issues 14, 16)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import spacy


def test_presplit_fixture_pipeline_predicts_the_same():
    """A pipeline saved before senses/lemmas existed still loads and writes the same."""
    here = Path(__file__).parents[1] / "fixtures" / "presplit"
    expected = json.loads((here / "expected.json").read_text())
    nlp = spacy.load(here / "pipeline")

    spec = importlib.util.spec_from_file_location("mk", here / "make_presplit_pipeline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.outputs(nlp, expected["texts"]) == expected["viterbi"]
    nlp.get_pipe("lisa_srl").decoding = "greedy"
    assert module.outputs(nlp, expected["texts"]) == expected["greedy"]
