"""scripts/resume_config.py: a config that continues training a saved lisa_srl."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import spacy
from spacy.util import load_model_from_config

REPO = Path(__file__).parents[1]
PIPELINE = REPO / "tests" / "fixtures" / "saved_pipeline" / "pipeline"


def _script():
    spec = importlib.util.spec_from_file_location("resume", REPO / "scripts" / "resume_config.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_resumed_config_starts_from_the_saved_weights():
    config = _script().resume_config(PIPELINE / "config.cfg", PIPELINE)
    assert dict(config["components"]["lisa_srl"]) == {"source": str(PIPELINE)}
    resumed = load_model_from_config(config, auto_fill=True)
    saved = spacy.load(PIPELINE)
    text = "John sold the car to Mary ."
    frames = [f.to_dict() for f in resumed(text)._.srl_frames]
    assert frames == [f.to_dict() for f in saved(text)._.srl_frames]


def test_resume_config_names_what_is_missing(tmp_path):
    script = _script()
    with pytest.raises(SystemExit, match="no 'lisa_srl' component"):
        script.resume_config(PIPELINE / "config.cfg", tmp_path)
    with pytest.raises(SystemExit, match="defines no component 'parser'"):
        (tmp_path / "parser").mkdir()
        script.resume_config(PIPELINE / "config.cfg", tmp_path, component="parser")
