"""Every shipped config passes `spacy debug config` (as the project commands use them)."""

from pathlib import Path

import pytest
from spacy.cli.debug_config import debug_config

CONFIGS = sorted((Path(__file__).resolve().parents[1] / "configs").glob("*.cfg"))


def test_configs_are_found():
    names = {path.stem for path in CONFIGS}
    assert {
        "lisa_cpu",
        "lisa_trf",
        "lisa_trf_marked",
        "sa_cpu",
        "parser",
        "lisa_lan",
        "lisa_lal",
        "lisa_rel",
    } <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_is_valid(path, capsys):
    # debug_config exits (SystemExit) on a validation error; paths need not exist for it
    debug_config(
        path, overrides={"paths.train": "corpus/train.spacy", "paths.dev": "corpus/dev.spacy"}
    )
    assert "Config is valid" in capsys.readouterr().out
