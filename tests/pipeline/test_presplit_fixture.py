"""The pre-split fixture (tests/fixtures/presplit, made by its script with the code of
6df31c2, before the component's split and the sense classifier): a pipeline saved then
still loads and writes exactly the same frames, parse, POS and spans,
except where a bug was fixed since: ``expected_predicate_constraint.json`` holds the
outputs the predicate-token constraint of the decoder changed (roles it used to drop)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import spacy

HERE = Path(__file__).parents[1] / "fixtures" / "presplit"


def _roles(frame):
    return [(r["start"], r["end"], r["label"]) for r in frame["roles"]]


def test_presplit_fixture_pipeline_predicts_the_same():
    """A pipeline saved before senses/lemmas existed still loads and writes the same."""
    expected = json.loads((HERE / "expected.json").read_text())
    fixed = json.loads((HERE / "expected_predicate_constraint.json").read_text())
    nlp = spacy.load(HERE / "pipeline")

    spec = importlib.util.spec_from_file_location("mk", HERE / "make_presplit_pipeline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for decoding in ("viterbi", "greedy"):
        nlp.get_pipe("lisa_srl").decoding = decoding
        got = module.outputs(nlp, expected["texts"])
        changed = {int(i): doc for i, doc in fixed[decoding].items()}
        assert [doc for i, doc in enumerate(got) if i not in changed] == [
            doc for i, doc in enumerate(expected[decoding]) if i not in changed
        ]
        for i, doc in changed.items():
            assert got[i] == doc
            before = expected[decoding][i]
            # same everything but the frames' roles, and those only gained roles
            assert {k: v for k, v in doc.items() if k not in ("frames", "spans")} == {
                k: v for k, v in before.items() if k not in ("frames", "spans")
            }
            assert len(doc["frames"]) == len(before["frames"])
            for new, old in zip(doc["frames"], before["frames"], strict=True):
                assert new["predicate"] == old["predicate"]
                assert new["roleset"] == old["roleset"]
                assert set(_roles(old)) <= set(_roles(new))
