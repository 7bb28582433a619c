"""spacy-lisa.release_memory.v1: the training callback that returns freed memory to the OS."""

from __future__ import annotations

import pytest
from spacy.util import registry

from spacy_lisa import memory


def test_release_memory_trims_every_n_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    real = memory._malloc_trim()
    assert real is not None, "glibc's malloc_trim should be found on Linux"
    calls = []
    monkeypatch.setattr(memory, "_malloc_trim", lambda: lambda pad: calls.append(pad) or real(pad))
    callback = registry.callbacks.get("spacy-lisa.release_memory.v1")(every=3)
    for step in range(10):
        callback(None, {"step": step, "epoch": 0})
    assert calls == [0, 0, 0, 0]  # steps 0, 3, 6, 9


def test_release_memory_checks_its_argument() -> None:
    with pytest.raises(ValueError, match="E175"):
        memory.release_memory(every=0)


def test_marked_config_releases_memory() -> None:
    from pathlib import Path

    from spacy.util import load_config

    config = load_config(Path(__file__).parents[1] / "configs" / "lisa_trf_marked.cfg")
    assert config["training"]["before_update"]["@callbacks"] == "spacy-lisa.release_memory.v1"
