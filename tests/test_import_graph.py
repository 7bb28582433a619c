"""The package's import graph: no circle between spacy_lisa's modules (imports inside
functions count: they run too), and the layers import downwards only."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

PACKAGE = Path(__file__).parents[1] / "spacy_lisa"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, modules: Set[str]) -> Set[str]:
    """The spacy_lisa modules ``path`` imports at run time (not under TYPE_CHECKING)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: Set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            if target in modules:
                found.add(target)
            for alias in node.names:
                if f"{target}.{alias.name}" in modules:
                    found.add(f"{target}.{alias.name}")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    found.discard(name)
    return found


def import_graph() -> Dict[str, Set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): _imports(p, modules) for p in paths}


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return found


def test_no_import_circle_in_the_package():
    assert cycles(import_graph()) == []


def test_a_circle_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def folder(module: str) -> str:
    """The folder of a spacy_lisa module: the first part of its name under spacy_lisa
    (``spacy_lisa.corpus.conllu`` -> ``corpus``); a top-level module is its own folder,
    the package's ``__init__`` is ``spacy_lisa``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def folder_graph(graph: Dict[str, Set[str]]) -> Dict[str, Set[str]]:
    """``graph`` between folders: a folder imports another where one of its modules
    imports one of the other's."""
    folders: Dict[str, Set[str]] = {}
    for module, targets in graph.items():
        here = folder(module)
        folders.setdefault(here, set()).update(folder(t) for t in targets if folder(t) != here)
    return folders


def test_no_import_circle_between_folders():
    # the folders are layers (the corpus readers below the component, ...): no folder
    # imports one that imports it back, even through modules that form no circle
    graph = import_graph()
    circles = cycles(folder_graph(graph))
    imports = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if folder(module) != folder(target)
        and any({folder(module), folder(target)} <= set(circle) for circle in circles)
    )
    assert circles == [], "imports between the folders of a circle:\n" + "\n".join(imports)


def test_a_circle_between_folders_is_found():
    # no circle between the modules, one between their folders
    graph = {
        "spacy_lisa.a.x": {"spacy_lisa.b.y"},
        "spacy_lisa.b.y": set(),
        "spacy_lisa.b.z": {"spacy_lisa.a.w"},
        "spacy_lisa.a.w": set(),
        "spacy_lisa.c": {"spacy_lisa.a.x", "spacy_lisa"},
        "spacy_lisa": set(),
    }
    assert cycles(graph) == []
    assert cycles(folder_graph(graph)) == [["a", "b"]]


def test_models_know_nothing_of_the_component_and_the_library_nothing_of_its_cli():
    graph = import_graph()
    upward = [
        (module, target)
        for module, targets in graph.items()
        for target in targets
        if (module.startswith("spacy_lisa.models") and target.startswith("spacy_lisa.pipeline"))
        or (
            not module.startswith("spacy_lisa.cli")
            and target.startswith("spacy_lisa.cli")
            and module != "spacy_lisa.__main__"
        )
    ]
    assert upward == []


def test_decoding_sits_below_the_component_the_models_and_the_corpus():
    # so that pipeline/, corpus/, formats.py (and models/, should they need it) can use it
    below = ("spacy_lisa.pipeline", "spacy_lisa.models", "spacy_lisa.corpus")
    upward = [
        (module, target)
        for module, targets in import_graph().items()
        if module.startswith("spacy_lisa.decoding")
        for target in targets
        if target.startswith(below)
    ]
    assert upward == []


# catalogues, not logic: one entry per code
LONG_MODULES_ALLOWED = {"spacy_lisa/errors.py"}
MAX_MODULE_LINES = 500


def long_modules(root: Path) -> List[str]:
    """The modules under ``root`` over MAX_MODULE_LINES lines, catalogues excepted."""
    found = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root.parent).as_posix()
        n_lines = len(path.read_text(encoding="utf8").splitlines())
        if n_lines > MAX_MODULE_LINES and name not in LONG_MODULES_ALLOWED:
            found.append(f"{name}: {n_lines} lines")
    return found


def test_no_module_is_over_500_lines():
    # one concern per module: a module this long holds two; split it along them
    assert long_modules(PACKAGE) == []


def test_a_long_module_is_found(tmp_path):
    package = tmp_path / "spacy_lisa"
    package.mkdir()
    (package / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    (package / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    (package / "errors.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert long_modules(package) == [f"spacy_lisa/long.py: {MAX_MODULE_LINES + 1} lines"]
