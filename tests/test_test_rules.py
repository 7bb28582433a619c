"""Rules the test suite keeps, checked on its source.

Everything ``make install`` provides (torch, the MiniLM package, Ray, the serve
libraries: setup.cfg's ``dev`` extra) is imported plainly: missing, the module fails
to collect, loudly, instead of skipping in silence. Only what ``make install`` cannot
provide may skip, and then it fails in CI (``CI=true``) as ``conftest.py``'s EWT and
Chromium fixtures do; the GPU tests (marked ``gpu``) skip with their reason where there
is no CUDA GPU. An optional extra that an install of the package may lack by design
or on some Pythons (:data:`OPTIONAL_EXTRAS`: spacy-transformers, which transformers 5
rules out; ufal.chu_liu_edmonds, the spanning-tree reference, with no wheels past CPython
3.12) may be ``importorskip``-ed, with its reason."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, List, Tuple

TESTS = Path(__file__).resolve().parent
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}
# what `make install` provides but a supported install lacks (one with transformers 5
# cannot have spacy-transformers 1.4; dev has ufal only below CPython 3.13): their tests
# may skip, saying why
OPTIONAL_EXTRAS = {"spacy_transformers", "ufal.chu_liu_edmonds"}


def _modules() -> Iterator[Tuple[str, ast.Module]]:
    for path in sorted(TESTS.rglob("*.py")):
        yield path.relative_to(TESTS).as_posix(), ast.parse(path.read_text("utf8"))


def _calls(node: ast.AST, name: str) -> Iterator[ast.Call]:
    """Calls of ``pytest.<name>`` (or a bare ``<name>``) inside ``node``."""
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            if (isinstance(func, ast.Attribute) and func.attr == name) or (
                isinstance(func, ast.Name) and func.id == name
            ):
                yield call


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in IMPORT_ERRORS for n in names)


def _importorskips(tree: ast.Module) -> List[int]:
    """Lines of importorskip calls, but an optional extra's that gives its reason."""
    return [call.lineno for call in _calls(tree, "importorskip") if not _optional(call)]


def _optional(call: ast.Call) -> bool:
    module = call.args[0] if call.args else None
    named = isinstance(module, ast.Constant) and module.value in OPTIONAL_EXTRAS
    return named and any(keyword.arg == "reason" for keyword in call.keywords)


def _skips_on_import_error(tree: ast.Module) -> List[int]:
    return [
        call.lineno
        for handler in ast.walk(tree)
        if isinstance(handler, ast.ExceptHandler) and _catches_import_error(handler)
        for stmt in handler.body
        for call in _calls(stmt, "skip")
    ]


def test_no_importorskip() -> None:
    found = [f"{name}:{line}" for name, tree in _modules() for line in _importorskips(tree)]
    assert not found, (
        f"pytest.importorskip in {found}: import the package plainly. `make install` "
        "provides every dependency of the tests, and one that is missing must fail the "
        "module, not skip it"
    )


def test_no_skip_on_a_failed_import() -> None:
    found = [f"{name}:{line}" for name, tree in _modules() for line in _skips_on_import_error(tree)]
    assert not found, (
        f"pytest.skip on an ImportError in {found}: import the package plainly (a missing "
        "package must fail the module)"
    )


def test_the_rules_see_what_they_forbid() -> None:
    """The two scans find the patterns they are for (the suite itself has none left)."""
    source = """
import pytest
ray = pytest.importorskip("ray")
try:
    import fastapi
except (ModuleNotFoundError, OSError):
    pytest.skip("no fastapi", allow_module_level=True)
pytest.importorskip("spacy_transformers")
pytest.importorskip("spacy_transformers", reason="an optional extra")
pytest.importorskip("ray", reason="not an optional extra")
"""
    tree = ast.parse(source)
    assert _importorskips(tree) == [3, 8, 10]
    assert _skips_on_import_error(tree) == [7]
