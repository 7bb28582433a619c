"""Fixtures of the corpus tests: small hand-written files in a temporary folder."""

from pathlib import Path
from typing import Callable, Union

import pytest


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, Union[str, bytes]], Path]:
    """``write(name, content)``: text written as UTF-8 (bytes as they are) to
    ``tmp_path / name``, parent folders created."""

    def _write(name: str, content: Union[str, bytes]) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write
