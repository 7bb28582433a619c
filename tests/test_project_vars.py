"""The spaCy project's variables as `spacy project run` resolves them: `all` trained on
another transformer config keeps its model apart from the quickstart's."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from project_testing import copy_project
from weasel.util import load_project_config


def commands(tmp_path: Path, overrides: Dict[str, str]) -> Dict[str, List[str]]:
    """Each command's script in a copy of the project, its variables resolved with
    ``overrides`` as `--vars.NAME VALUE` resolves them."""
    project = copy_project(tmp_path / "project")
    config = load_project_config(project, overrides=overrides)
    return {command["name"]: command["script"] for command in config["commands"]}


def test_the_short_schedule_model_is_named_after_its_config(tmp_path: Path) -> None:
    quickstart = commands(tmp_path / "quickstart", {})
    assert "--output training/lisa_trf_short " in quickstart["train-trf-short"][-1]
    base = commands(tmp_path / "base", {"vars.trf_config": "lisa_trf_base"})
    train = base["train-trf-short"][-1]
    assert "configs/lisa_trf_base.cfg" in train
    assert "--output training/lisa_trf_base_short " in train
    evaluate = " ".join(base["evaluate-trf-short"])
    assert "training/lisa_trf_short" not in evaluate
    assert "training/pipelines/lisa_trf_base_short" in evaluate
    assert "training/pipelines/lisa_trf_base_short " in base["package-trf-short"][-1]
