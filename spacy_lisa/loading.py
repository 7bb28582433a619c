"""Loading a trained pipeline for labelling (``predict``, ``render``, ``evaluate``, the
server, the Ray workers) or for parsing given words (``--parser``), finding its
``lisa_srl`` component, and telling two pipelines apart without loading them."""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Tuple

import spacy
from spacy.language import Language

from .device import select_device
from .errors import Errors, UserError

if TYPE_CHECKING:
    from .pipeline.srl_component import LisaSRL

SRL_FACTORY = "lisa_srl"


def load_model(model: str, gpu_id: int) -> Language:
    """Load ``model`` (on GPU ``gpu_id`` when >= 0); a UserError if it cannot be: E317,
    or :class:`~.device.DeviceError` (E450-E454) when the GPU cannot be used."""
    select_device(gpu_id)
    try:
        return spacy.load(model)
    except (OSError, ValueError) as err:
        raise UserError(Errors.E317.format(model=model, detail=str(err).splitlines()[0])) from None


def load_pipeline(
    model: str, gpu_id: int, srl_options: Optional[Mapping[str, Any]] = None
) -> Language:
    """:func:`load_model`, then check the pipeline has a ``lisa_srl`` (E314) and set
    ``srl_options`` on it: options of this run (e.g. ``{"predicate_pos": ["VERB"]}``,
    from ``--predicate-pos``) over the pipeline's config, not saved. A UserError for an
    unknown option (E043) or value (E024, E031, E042)."""
    nlp = load_model(model, gpu_id)
    component = srl_component(nlp, model)
    if srl_options:
        from .pipeline.options import OPTION_NAMES

        unknown = [key for key in srl_options if key not in OPTION_NAMES]
        if unknown:
            raise UserError(Errors.E043.format(key=unknown[0], options=", ".join(OPTION_NAMES)))
        try:
            component.options = component.options.replace(**srl_options)
        except ValueError as err:
            raise UserError(str(err)) from None
    return nlp


def load_parser(model: str) -> Tuple[Language, List[str]]:
    """A spaCy pipeline to parse given words with (``evaluate --parser``, ``convert
    --parser``), loaded on the current device (E317), and the components to disable when
    it runs: those after its last parser or tagger (tok2vec/transformer listeners they
    depend on come before them; later components, ner and the like, are not needed).
    E255 when it has no parser."""
    nlp = load_model(model, -1)
    names = nlp.pipe_names
    wanted = [i for i, n in enumerate(names) if nlp.get_pipe_meta(n).factory == "parser"]
    if not wanted:
        raise UserError(Errors.E255.format(path=model, pipes=names))
    wanted += [i for i, n in enumerate(names) if nlp.get_pipe_meta(n).factory == "tagger"]
    return nlp, names[max(wanted) + 1 :]


def srl_component(nlp: Language, model: Optional[str] = None) -> LisaSRL:
    """The pipeline's ``lisa_srl`` component, found by its factory whatever its name
    (``component.name`` is the pipe's); E314, naming the pipeline's pipes, when it has
    none (``model``: the pipeline's name in that message)."""
    for name in nlp.pipe_names:
        if nlp.get_pipe_meta(name).factory == SRL_FACTORY:
            return nlp.get_pipe(name)  # type: ignore[return-value]
    model = model or f"{nlp.lang}_{nlp.meta.get('name') or 'pipeline'}"
    raise UserError(Errors.E314.format(model=model, pipes=", ".join(nlp.pipe_names) or "none"))


def pipeline_fingerprint(model: str) -> str:
    """What ``model`` names, as a string that changes when the pipeline does: for a
    directory, a hash of its files' names and contents (the same pipeline copied
    elsewhere keeps it, a retrained one does not); for an installed package, its name
    and version; else the name itself."""
    path = Path(model).expanduser()
    if path.is_dir():
        digest = hashlib.blake2b(digest_size=16)
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            # name and size first: the files' bytes cannot run into one another
            name = file.relative_to(path).as_posix().encode("utf8")
            digest.update(name + b"\0" + file.stat().st_size.to_bytes(8, "little"))
            with open(file, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    digest.update(chunk)
        return f"directory:{digest.hexdigest()}"
    try:
        return f"package:{model}=={metadata.version(model)}"
    except metadata.PackageNotFoundError:
        return f"name:{model}"


__all__ = [
    "SRL_FACTORY",
    "load_model",
    "load_parser",
    "load_pipeline",
    "pipeline_fingerprint",
    "srl_component",
]
