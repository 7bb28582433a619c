"""Measurements belong in BENCHMARKS.md and docs/benchmarks/, dated there: the library
and the configs carry no dated figure and no commit hash (a comment may say why, not
when or at which commit)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
# "commit 1a2b3c4", "at 1a2b3c4", "(1a2b3c4)": a short or full hash after a word that
# introduces one
COMMIT = re.compile(r"\b(?:commit|commits|at|before|after)\s+[0-9a-f]{7,40}\b")


def test_no_date_or_commit_hash_in_the_library_or_the_configs():
    files = sorted((ROOT / "spacy_lisa").rglob("*.py")) + sorted((ROOT / "configs").glob("*.cfg"))
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in files
        for number, line in enumerate(path.read_text("utf8").splitlines(), start=1)
        if DATE.search(line) or COMMIT.search(line)
    ]
    assert not found, "dated figures or commit hashes (move them to BENCHMARKS.md):\n" + "\n".join(
        found
    )
