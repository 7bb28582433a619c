"""A pipeline built from a training config as ``spacy train`` builds it, for the
benchmarks that time ``nlp.update`` and ``nlp.pipe`` outside ``spacy train``. Imported by
the scripts of this folder, run as ``python benchmarks/NAME.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional, Tuple, Union

from spacy.language import Language
from spacy.util import load_config, load_model_from_config
from thinc.api import Config


def pipeline_from_config(
    path: Union[str, Path], overrides: Optional[Dict[str, Any]] = None
) -> Tuple[Language, Config]:
    """The untrained pipeline of the config at ``path`` (with ``overrides``) and the
    config filled with spaCy's defaults, then interpolated: the project's configs state
    only what differs from the defaults (``training.max_steps`` among them), so the file
    alone cannot be interpolated."""
    config = Config(Language.default_config).merge(load_config(path, overrides=overrides or {}))
    config = config.interpolate()
    return load_model_from_config(config, auto_fill=True), config
