"""The library sits below its command line: nothing outside ``spacy_lisa/cli/`` imports
``spacy_lisa.cli``, and the server's app loads without it (and its six commands)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Iterator, Tuple

import spacy_lisa

PACKAGE = Path(spacy_lisa.__file__).parent


def imported_modules(path: Path) -> Iterator[Tuple[int, str]]:
    """(line, absolute module name) of every import in the module at ``path``
    (``from . import x`` counts as importing ``package.x``)."""
    # the package a relative import starts from (for __init__.py, its own)
    package = list(path.relative_to(PACKAGE.parent).parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module or "").split(".")]).strip(".")
            yield node.lineno, module
            yield from ((node.lineno, f"{module}.{alias.name}") for alias in node.names)


def test_imported_modules_resolves_relative_imports() -> None:
    names = {name for _, name in imported_modules(PACKAGE / "serve" / "app.py")}
    assert {"spacy_lisa.errors", "spacy_lisa.serve.batcher", "fastapi"} <= names
    names = {name for _, name in imported_modules(PACKAGE / "cli" / "__init__.py")}
    assert "spacy_lisa.cli._app.app" in names


def test_no_module_outside_cli_imports_cli() -> None:
    cli = PACKAGE / "cli"
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        # __main__ (python -m spacy_lisa) is the command line's entry point
        if cli not in path.parents and path != PACKAGE / "__main__.py"
        for line, name in imported_modules(path)
        if name == "spacy_lisa.cli" or name.startswith("spacy_lisa.cli.")
    ]
    assert not found, "library code must not import the command line:\n" + "\n".join(found)


def test_server_app_loads_without_the_command_line() -> None:
    # not "typer" itself: spaCy imports it (spacy/__init__.py loads spacy.cli)
    code = (
        "import spacy_lisa.serve.app, sys; "
        "cli = sorted(m for m in sys.modules if m.startswith('spacy_lisa.cli')); "
        "assert not cli, f'spacy_lisa.serve.app loaded {cli}'"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_benchmarks_and_scripts_use_the_public_library() -> None:
    repo = PACKAGE.parent
    found = [
        f"{path.relative_to(repo)}:{line} imports {name}"
        for path in sorted([*repo.glob("benchmarks/*.py"), *repo.glob("scripts/*.py")])
        for line, name in imported_modules(path)
        if name.startswith("spacy_lisa.")
        and (name.startswith("spacy_lisa.cli") or any(_private(p) for p in name.split(".")))
    ]
    assert not found, "use the library's public names:\n" + "\n".join(found)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")
