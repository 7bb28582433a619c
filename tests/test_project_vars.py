"""The spaCy project's variables as `spacy project run` resolves them: `all` trained on
another transformer config keeps its model apart from the quickstart's."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from project_testing import REPO, copy_project
from spacy.util import load_config
from weasel.util import load_project_config

from spacy_lisa.models.pretrained import DEFAULT_ENCODER


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


def test_the_project_and_the_transformer_configs_name_the_default_encoder(tmp_path: Path) -> None:
    """lisa_cpu's vectors and the MiniLM transformer models come from the encoder the
    package falls back on: a config or the project naming another would train on weights
    `make install` may not have put there."""
    vectors = commands(tmp_path, {})["vectors"]
    assert vectors[-1].endswith(f"--model {DEFAULT_ENCODER}")
    for name in ("lisa_trf", "lisa_trf_marked", "lisa_trf_frozen"):
        config = load_config(REPO / "configs" / f"{name}.cfg", interpolate=False)
        assert config["paths"]["transformer_model"] == DEFAULT_ENCODER, name
