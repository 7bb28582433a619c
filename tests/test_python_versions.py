"""The Python versions the package admits: 3.11 to 3.14. CI runs the suite on 3.11;
`make test-python313` runs it on a CPython 3.13 built from source; for every admitted
version, the hard dependencies and every extra resolve to wheels (no compiler needed),
and no module or name removed up to 3.14 is used (README, Set-up)."""

from __future__ import annotations

import ast
import configparser
import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("spacy_lisa", "scripts", "benchmarks", "tests")
ADMITTED = ("3.11", "3.12", "3.13", "3.14")
# the torch of `make install`, pinned in the same pip command (Makefile, TORCH)
TORCH = "torch==2.13.0"
# modules removed in 3.12 (PEP 632, asynchat/asyncore/smtpd, imp) and 3.13 (PEP 594)
REMOVED_MODULES = {
    "distutils", "imp", "asynchat", "asyncore", "smtpd",
    "aifc", "audioop", "cgi", "cgitb", "chunk", "crypt", "imghdr", "mailcap", "msilib",
    "nis", "nntplib", "ossaudiodev", "pipes", "sndhdr", "spwd", "sunau", "telnetlib", "uu",
    "xdrlib", "lib2to3",
}  # fmt: skip
# names removed in 3.12 to 3.14 whose use would fail there ("What's New in Python 3.1x")
REMOVED_NAMES = {
    "SafeConfigParser", "readfp", "wrap_socket", "ImpImporter", "ImpLoader", "find_loader",
    "assertEquals", "assertNotEquals", "assertRegexpMatches", "assertNotRegexpMatches",
    "assertDictContainsSubset", "failUnless", "failIf", "findTestCases", "makeSuite",
    "getTestCaseNames", "LegacyInterpolation", "resetlocale", "get_loader",
    "Num", "Str", "Bytes", "NameConstant", "Ellipsis",  # ast node classes, removed in 3.14
}  # fmt: skip


def setup_cfg() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return config


def requirement_lines(text: str) -> List[str]:
    lines = (line.split("#")[0].strip() for line in text.splitlines())
    return [line for line in lines if line]


def test_python_requires_and_classifiers_admit_311_to_314():
    metadata = setup_cfg()
    specifier = SpecifierSet(metadata["options"]["python_requires"])
    assert all(version in specifier for version in ADMITTED)
    assert "3.10" not in specifier  # older than the code allows
    classifiers = metadata["metadata"]["classifiers"]
    for version in ADMITTED:
        assert f"Programming Language :: Python :: {version}" in classifiers


def test_no_api_removed_up_to_python_314_is_used():
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


def requirements_for(python_version: str) -> Dict[str, List[str]]:
    """install_requires and each extra of setup.cfg, as they apply on ``python_version``.

    pip evaluates environment markers against the interpreter that runs it, not against
    ``--python-version``, so the markers of setup.cfg's own lines are evaluated here and
    pip gets the requirements that apply, without their markers."""
    options = setup_cfg()
    groups = {"install_requires": options["options"]["install_requires"]}
    groups.update(options["options.extras_require"])
    environment = {"python_version": python_version, "python_full_version": f"{python_version}.0"}
    applying: Dict[str, List[str]] = {}
    for group, text in groups.items():
        applying[group] = []
        for line in requirement_lines(text):
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate(environment):
                requirement.marker = None
                applying[group].append(str(requirement))
    return applying


def test_each_extra_has_a_line_for_every_admitted_python():
    """A marker never leaves an extra empty on an admitted version (cuda12x: 13.x up to
    3.13, 14.x from 3.14, which 13.x has no wheel for)."""
    for version in ADMITTED:
        groups = requirements_for(version)
        assert all(groups.values()), (version, groups)
    assert requirements_for("3.13")["cuda12x"] == ["cupy-cuda12x<14,>=13.6"]
    assert requirements_for("3.14")["cuda12x"] == ["cupy-cuda12x<15,>=14.2"]


def test_spacy_transformers_is_an_extra_not_a_dependency():
    """Its transformers cap (< 4.53.3) would hold back every user's transformers."""
    core = {Requirement(r).name for r in requirements_for("3.11")["install_requires"]}
    assert "spacy-transformers" not in core and "transformers" in core
    assert "ufal.chu_liu_edmonds" not in core  # no wheels past CPython 3.12
    groups = requirements_for("3.11")
    assert any(r.startswith("spacy-transformers") for r in groups["spacy-transformers"])
    assert any(r.startswith("spacy-transformers") for r in groups["dev"])


@pytest.mark.slow
@pytest.mark.parametrize("python_version", ADMITTED)
def test_the_dependencies_and_every_extra_resolve_to_wheels(tmp_path, python_version):
    """pip resolves the hard dependencies and all extras together (torch pinned as `make
    install` pins it) for CPython ``python_version`` on this platform from wheels only,
    without an interpreter of that version (metadata only: nothing is installed).

    Caveat: the markers of the dependencies' own requirements are evaluated by pip against
    the interpreter running the test (pip's behaviour), so a backport needed only on an
    older Python may be pulled in; what matters here, a wheel for every package on this
    version, is checked for each package pip picks."""
    groups = requirements_for(python_version)
    wanted = [TORCH] + [line for lines in groups.values() for line in lines]
    report = tmp_path / "report.json"
    command = [
        sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
        "--only-binary=:all:", "--python-version", python_version,
        "--target", str(tmp_path / "t"), "--quiet", "--report", str(report), *wanted,
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    resolved = {
        item["metadata"]["name"].lower(): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }
    expected = {"torch", "spacy", "thinc", "transformers", "numba", "ray", "spacy-transformers"}
    expected |= {"cupy-cuda12x", "cupy-cuda13x", "fastapi", "tokenizers", "model2vec"}
    assert expected <= set(resolved), expected - set(resolved)
    assert resolved["torch"].startswith("2.13.0")
