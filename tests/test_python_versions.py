"""The Python versions the package admits: 3.11 is tested (CI), 3.12 is allowed because
every dependency of the development install resolves to CPython 3.12 wheels and no API
removed in 3.12 is used (README, Set-up)."""

from __future__ import annotations

import ast
import configparser
import json
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("spacy_lisa", "scripts", "benchmarks", "tests")
# modules removed in Python 3.12 (PEP 594 and 632, "What's New in Python 3.12")
REMOVED_MODULES = {"distutils", "imp", "asynchat", "asyncore", "smtpd"}
# names removed in 3.12 whose use would fail there
REMOVED_NAMES = {
    "SafeConfigParser", "readfp", "wrap_socket", "ImpImporter", "ImpLoader", "find_loader",
    "assertEquals", "assertNotEquals", "assertRegexpMatches", "assertNotRegexpMatches",
    "assertDictContainsSubset", "failUnless", "failIf", "findTestCases", "makeSuite",
}  # fmt: skip


def setup_cfg() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return config


def test_python_requires_admits_the_tested_and_the_resolved_versions():
    specifier = SpecifierSet(setup_cfg()["options"]["python_requires"])
    assert "3.11" in specifier and "3.12" in specifier and "3.10" not in specifier


def test_no_api_removed_in_python_312_is_used():
    found = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf8"))):
                modules: List[str] = []
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    modules = [node.module]
                if any(m.split(".")[0] in REMOVED_MODULES for m in modules):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {modules}")
                if isinstance(node, ast.Attribute) and node.attr in REMOVED_NAMES:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} uses {node.attr}")
    assert not found, found


def development_requirements() -> List[str]:
    """install_requires and the dev extra of setup.cfg (what `make install` asks for)."""
    options = setup_cfg()
    lines = options["options"]["install_requires"] + options["options.extras_require"]["dev"]
    return [line.strip() for line in lines.splitlines() if line.strip()]


@pytest.mark.slow
def test_the_dependencies_resolve_to_cpython_312_wheels(tmp_path):
    """pip resolves `make install`'s set (torch pinned as there) for CPython 3.12 on this
    platform from wheels only, without an interpreter of that version (metadata only:
    nothing is downloaded in full or installed)."""
    report = tmp_path / "report.json"
    command = [
        sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
        "--only-binary=:all:", "--python-version", "3.12", "--target", str(tmp_path / "t"),
        "-c", str(ROOT / "constraints.txt"), "--quiet", "--report", str(report),
        "torch==2.13.0", *development_requirements(),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    resolved = {
        item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]
    }
    assert {"torch", "spacy", "thinc", "spacy-transformers", "transformers"} <= resolved
