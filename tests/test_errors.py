"""The message catalogue (``spacy_lisa/errors.py``) kept as spaCy keeps its own: one
``Errors`` and one ``Warnings`` class, codes in numeric order, each code raised or warned
somewhere in the package and each meaning once; user errors raised with a coded message,
never a bare string. Everything here reads the source (``ast``), nothing is imported but
the catalogue itself."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

from spacy_lisa import errors

PACKAGE = Path(errors.__file__).resolve().parent
ERRORS_PY = PACKAGE / "errors.py"
CODE = re.compile(r"[EW]\d{3}")
CLASSES = {"Errors": "E", "Warnings": "W"}

# Literal messages that are not user errors, by (file, exception): why each may stay plain
ALLOWED_LITERAL_RAISES: Dict[Tuple[str, str], str] = {
    ("serve/__init__.py", "AttributeError"): (
        "the module __getattr__ of the lazy imports: Python's own wording for a missing "
        "attribute, which hasattr() and import machinery rely on"
    ),
}


def _sources() -> Iterator[Tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != ERRORS_PY:
            yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text("utf8"))


def _catalogue() -> Dict[str, List[Tuple[str, str, int]]]:
    """Class name -> its codes as (code, message, line), in file order."""
    classes: Dict[str, List[Tuple[str, str, int]]] = {}
    for node in ast.parse(ERRORS_PY.read_text("utf8")).body:
        if not isinstance(node, ast.ClassDef):
            continue
        codes = []
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Name) and CODE.fullmatch(target.id):
                    codes.append((target.id, ast.literal_eval(stmt.value), stmt.lineno))
        if codes:
            classes[node.name] = codes
    return classes


def _script_sources() -> Iterator[Tuple[str, ast.Module]]:
    """The project's scripts (scripts/*.py), which raise the package's errors too."""
    for path in sorted((PACKAGE.parent / "scripts").glob("*.py")):
        yield f"scripts/{path.name}", ast.parse(path.read_text("utf8"))


def _uses() -> Dict[str, Set[str]]:
    """``Errors.E123`` / ``Warnings.W001`` (the code) -> the files (of the package or the
    project's scripts) that use it."""
    uses: Dict[str, Set[str]] = defaultdict(set)
    for name, tree in [*_sources(), *_script_sources()]:
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in CLASSES
                and CODE.fullmatch(node.attr)
            ):
                uses[f"{node.value.id}.{node.attr}"].add(name)
    return uses


def _defined() -> Set[str]:
    """``Errors.E123`` / ``Warnings.W001`` for each code of the catalogue."""
    owner = {prefix: cls for cls, prefix in CLASSES.items()}
    return {f"{owner[code[0]]}.{code}" for codes in _catalogue().values() for code, _, _ in codes}


def test_one_errors_and_one_warnings_class() -> None:
    catalogue = _catalogue()
    assert set(catalogue) == set(CLASSES), (
        f"codes live in exactly the classes Errors and Warnings, found them in "
        f"{sorted(catalogue)}: move every code into one of the two"
    )
    for cls, prefix in CLASSES.items():
        wrong = [code for code, _, _ in catalogue[cls] if not code.startswith(prefix)]
        assert not wrong, f"{cls} holds {wrong}: its codes start with {prefix}"
        assert getattr(errors, cls).__class__.__name__ == "ErrorsWithCodes"


def test_codes_in_numeric_order() -> None:
    out_of_order = [
        f"{cls}.{codes[i][0]} (line {codes[i][2]}) after {codes[i - 1][0]}"
        for cls, codes in _catalogue().items()
        for i in range(1, len(codes))
        if int(codes[i][0][1:]) <= int(codes[i - 1][0][1:])
    ]
    assert not out_of_order, f"codes out of numeric order in errors.py: {out_of_order}"


def test_every_code_is_used() -> None:
    unused = sorted(_defined() - set(_uses()))
    assert not unused, (
        f"codes defined in errors.py but raised or warned nowhere in spacy_lisa or scripts: "
        f"{unused}. "
        "Delete them (their numbers are not reused)"
    )


def test_every_used_code_is_defined() -> None:
    missing = {code: sorted(files) for code, files in _uses().items() if code not in _defined()}
    assert not missing, f"codes used but not defined in errors.py: {missing}"


def test_each_message_once() -> None:
    by_text: Dict[str, List[str]] = defaultdict(list)
    for codes in _catalogue().values():
        for code, message, _ in codes:
            by_text[" ".join(message.split()).lower()].append(code)
    duplicates = [codes for codes in by_text.values() if len(codes) > 1]
    assert not duplicates, f"codes with the same message: {duplicates}; keep one"


def _literal_message(node: ast.expr) -> bool:
    """A message written out in place: "...", f"...", "..." % x or "...".format(...)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _literal_message(node.left)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "format" and _literal_message(node.func.value)
    return False


def _exception_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _literal_raises() -> Iterator[Tuple[str, int, str]]:
    """(file, line, exception) of each raise or warnings.warn with a literal message."""
    for name, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                call, exc = node.exc, _exception_name(node.exc.func)
                if not exc.endswith(("Error", "Exception", "Warning")):
                    continue  # e.g. typer.Exit(1), or a helper that builds a coded error
            elif isinstance(node, ast.Call) and ast.unparse(node.func) == "warnings.warn":
                call, exc = node, "warnings.warn"
            else:
                continue
            message = call.args[0] if call.args else None
            if message is not None and _literal_message(message):
                yield name, call.lineno, exc


def test_no_bare_string_user_errors() -> None:
    found = [
        f"{name}:{line} {exc}"
        for name, line, exc in _literal_raises()
        if (name, exc) not in ALLOWED_LITERAL_RAISES
    ]
    assert not found, (
        f"errors or warnings raised with a literal message: {found}. Add a numbered "
        "message to spacy_lisa/errors.py (what was wrong and what to do) and raise "
        "Errors.E... / warn Warnings.W...; internal invariants that no user can reach "
        "belong in ALLOWED_LITERAL_RAISES with the reason"
    )


@pytest.mark.parametrize("key", sorted(ALLOWED_LITERAL_RAISES))
def test_allow_list_is_current(key: Tuple[str, str]) -> None:
    """Each allowed literal raise still exists, so the list does not go stale."""
    assert key in {(name, exc) for name, _, exc in _literal_raises()}, (
        f"{key} is allowed a literal message but raises none now: remove it from "
        "ALLOWED_LITERAL_RAISES"
    )


def test_codes_are_prefixed() -> None:
    assert errors.Errors.E002.startswith("[E002] ")
    assert errors.Warnings.W001.startswith("[W001] ")
