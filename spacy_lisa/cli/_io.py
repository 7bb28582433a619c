"""Messages and user-facing errors of the commands: messages on stderr (stdout carries
the output), the exit on an error. Writing the output is
:func:`spacy_lisa.predict.open_output`, reading the inputs :mod:`spacy_lisa.input_docs`,
loading the pipeline :mod:`spacy_lisa.loading` (none of them needs typer). Before any
work, :func:`check_output_paths` and :func:`check_writable` refuse outputs that would
write over an input or another output, or that cannot be written."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, Optional, Sequence, Tuple

import typer
from spacy.util import get_package_path, is_package

from ..errors import Errors, UserError


def stderr(message: str) -> None:
    """Messages go to stderr: stdout carries the output."""
    typer.echo(message, err=True)


def fail(error: object) -> NoReturn:
    """How every command stops on bad input: "✘ <message>" on stderr, exit status 1."""
    stderr(f"✘ {error}")
    raise typer.Exit(1)


# --- where the outputs may go: checked before any work, so a refusal costs nothing ----------


@dataclass(frozen=True)
class Input:
    """A path a command reads, for :func:`check_output_paths`: a file, or a folder. A
    folder is either a pipeline (``suffixes=None``: no output may lie in it) or a folder
    the command reads the files named ``*<suffix>`` of (any depth, any case)."""

    option: str
    path: Path
    suffixes: Optional[Tuple[str, ...]] = None


def check_output_paths(
    outputs: Sequence[Tuple[str, Optional[Path]]], inputs: Sequence[Input]
) -> None:
    """Refuse outputs (``(option, path)``; ``None``: not given) that would write over
    an input or another output: E037 (the same file as an input, links and relative
    paths resolved), E038 (inside an input pipeline), E039 (two outputs one file), each
    a :class:`~spacy_lisa.input_docs.UserError`."""
    given = [(option, path) for option, path in outputs if path is not None]
    for i, (option, path) in enumerate(given):
        for other_option, other in given[:i]:
            if _same_file(path, other):
                raise UserError(Errors.E039.format(path=path, first=other_option, second=option))
        for source in inputs:
            _check_apart(option, path, source)


def _check_apart(option: str, output: Path, source: Input) -> None:
    values = dict(output=output, option=option, input=source.path, source=source.option)
    inside = source.path.is_dir() and _inside(output, source.path)  # the folder itself too
    if inside and source.suffixes is None:
        raise UserError(Errors.E038.format(**values))
    if _same_file(output, source.path):
        raise UserError(Errors.E037.format(**values))
    name = os.path.basename(os.path.realpath(output)).lower()  # a link's target's name
    if inside and name.endswith(tuple(s.lower() for s in source.suffixes or ())):
        raise UserError(Errors.E037.format(**values))


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file: the same path once links and ``..`` are
    resolved, or (hard links) the same inode."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def _inside(path: Path, folder: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))


def check_writable(option: str, path: Path, *, folder: bool = False) -> None:
    """E318 (a :class:`~spacy_lisa.input_docs.UserError`) where the output ``path`` (a file,
    or with ``folder`` a folder to write into) cannot be written: a file where a folder
    must be, a folder where the file must be, no permission. Checked before the work,
    so that the work is not lost at its end."""
    target = Path(os.path.realpath(path))
    if target.exists():
        detail = _existing_problem(target, folder)
    else:
        ancestor = target.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        detail = _ancestor_problem(ancestor)
    if detail is not None:
        raise UserError(Errors.E318.format(path=f"{path} ({option})", detail=detail))


def _existing_problem(target: Path, folder: bool) -> Optional[str]:
    if folder and not target.is_dir():
        return f"{target} is a file, not a folder"
    if not folder and target.is_dir():
        return f"{target} is a folder, not a file"
    if not os.access(target, os.W_OK | (os.X_OK if folder else 0)):
        return f"no permission to write {target}"
    return None


def _ancestor_problem(ancestor: Path) -> Optional[str]:
    """What keeps a path from being created under its nearest existing ``ancestor``."""
    if not ancestor.is_dir():
        return f"{ancestor} is a file, not a folder"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"no permission to create files in {ancestor}"
    return None


def pipeline_dir(model: str) -> Optional[Path]:
    """The folder of the pipeline ``model`` (a path or an installed package name), or
    ``None`` where it names neither (loading it then fails with its own error)."""
    path = Path(model)
    if path.is_dir():
        return path
    if is_package(model):
        return Path(get_package_path(model))
    return None


__all__ = ["Input", "check_output_paths", "check_writable", "fail", "pipeline_dir", "stderr"]
