"""spacy-lisa: syntax-aware semantic role labelling (LISA, LAN, LAL) for spaCy v3.

Importing the package installs the Doc extensions (``doc._.srl_frames`` and friends).
The ``lisa_srl`` factory, the architectures and the scorer are found by spaCy through
entry points, so ``nlp.add_pipe("lisa_srl")`` works without importing anything.
"""

from typing import Any

from .about import __version__
from .frames import SRLFrame, install_extensions, set_srl_frames
from .render import render  # binds the function over the subpackage of the same name

__all__ = [
    "__version__",
    "SRLFrame",
    "install_extensions",
    "set_srl_frames",
    "render",
    "annotate_ray",
]


def annotate_ray(model: str, inputs: Any, output: Any, **kwargs: Any) -> Any:
    """Label a corpus with a pool of Ray actors and write ``predict``'s JSON records per
    shard (see :func:`spacy_lisa.ray_annotate.annotate_ray`; needs ``spacy-lisa[ray]``)."""
    from .ray_annotate import annotate_ray as _annotate_ray

    return _annotate_ray(model, inputs, output, **kwargs)
