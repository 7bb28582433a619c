"""The saved-pipeline fixture (tests/fixtures/saved_pipeline, made by its script with the
code of 0.1.0): a pipeline saved by 0.1.0 loads in every later 0.x release and writes
exactly the same frames, senses, lemmas, parse, POS and spans, with either decoding and
with the one-span-per-numbered-argument rule on or off."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any, Dict

import pytest
import spacy
from srl_testing import scoreless

HERE = Path(__file__).parents[1] / "fixtures" / "saved_pipeline"
EXPECTED: Dict[str, Any] = json.loads((HERE / "expected.json").read_text())


def _outputs(nlp, texts):
    spec = importlib.util.spec_from_file_location("mk", HERE / "make_saved_pipeline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return scoreless(module.outputs(nlp, texts))


@pytest.mark.parametrize("decoding", ["viterbi", "greedy"])
@pytest.mark.parametrize("unique", [True, False])
def test_a_pipeline_saved_by_0_1_predicts_the_same(decoding, unique):
    options = {"decoding": decoding, "unique_core_roles": unique}
    nlp = spacy.load(HERE / "pipeline", config={"components": {"lisa_srl": options}})
    got = _outputs(nlp, EXPECTED["texts"])
    assert got == EXPECTED[f"{decoding}, unique_core_roles={unique}"]
    frames = [f for doc in got for f in doc["frames"]]
    assert len(frames) > 10 and all(f["roleset"] and f["lemma"] for f in frames)


def _repeats_a_core_role(frame) -> bool:
    labels = [r["label"] for r in frame["roles"] if re.fullmatch(r"ARG[0-9A]", r["label"])]
    return len(labels) != len(set(labels))


@pytest.mark.parametrize("decoding", ["viterbi", "greedy"])
def test_unique_core_roles_changes_only_the_frames_that_repeat_one(decoding):
    """With the rule on no frame repeats a numbered argument, and the frames that did not
    repeat one are decoded as without it (the fixture's small model repeats some)."""
    on = [f for doc in EXPECTED[f"{decoding}, unique_core_roles=True"] for f in doc["frames"]]
    off = [f for doc in EXPECTED[f"{decoding}, unique_core_roles=False"] for f in doc["frames"]]
    assert len(on) == len(off)
    assert not any(_repeats_a_core_role(f) for f in on)
    repeated = [_repeats_a_core_role(f) for f in off]
    assert any(repeated)
    for new, old, changed in zip(on, off, repeated, strict=True):
        assert new["predicate"] == old["predicate"] and new["roleset"] == old["roleset"]
        if not changed:
            assert new == old


def test_saved_again_it_predicts_the_same(tmp_path):
    nlp = spacy.load(HERE / "pipeline")
    nlp.to_disk(tmp_path / "again")
    again = spacy.load(tmp_path / "again")
    texts = EXPECTED["texts"]
    assert _outputs(again, texts) == EXPECTED["viterbi, unique_core_roles=True"]
