"""The shipped configs: each passes `spacy debug config` once filled (as `spacy train`
fills it), and each states only what differs from the defaults (the factories' options and
default models, the registered functions' keyword defaults, spaCy's training defaults),
with no component option the factory does not know."""

from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
import spacy
from spacy.cli.debug_config import debug_config
from spacy.cli.init_config import fill_config
from spacy.language import Language
from spacy.util import combine_score_weights, load_config, registry
from thinc.api import Config

from spacy_lisa.pipeline.options import OPTION_NAMES

CONFIGS = sorted((Path(__file__).resolve().parents[1] / "configs").glob("*.cfg"))
# `spacy train` reads these before it fills the config (spaCy's init_nlp, E1015): every
# config states them, defaults or not
REQUIRED = ("system.seed", "system.gpu_allocator", "training.seed", "training.gpu_allocator")
Path_ = Tuple[str, ...]


def test_configs_are_found():
    names = {path.stem for path in CONFIGS}
    assert {
        "lisa_cpu",
        "lisa_trf",
        "lisa_trf_marked",
        "sa_cpu",
        "parser",
        "lisa_lan",
        "lisa_lal",
        "lisa_rel",
    } <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_is_valid(path, tmp_path, capsys):
    """Filled as `spacy train` fills it (`spacy init fill-config` writes the same), the
    config passes `spacy debug config`."""
    filled = tmp_path / path.name
    fill_config(filled, path)
    # debug_config exits (SystemExit) on a validation error; paths need not exist for it
    debug_config(
        filled, overrides={"paths.train": "corpus/train.spacy", "paths.dev": "corpus/dev.spacy"}
    )
    assert "Config is valid" in capsys.readouterr().out


def _leaves(node: Dict[str, Any], path: Path_ = ()) -> Iterator[Tuple[Path_, Any]]:
    for key, value in node.items():
        if isinstance(value, dict):
            yield from _leaves(value, path + (key,))
        elif not key.startswith("@") and key != "factory":
            yield path + (key,), value


def _get(node: Any, path: Path_) -> Any:
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return KeyError  # no default there
        node = node[key]
    return node


def _with_factory_defaults(config: Config) -> Config:
    """``config`` as spaCy fills it before resolving: each component's block merged over
    its factory's default config (blocks of the same registered function only), the
    whole merged over spaCy's default config."""
    config = Config(config)
    for name, component in config.get("components", {}).items():
        if "factory" in component:
            meta = Language.get_factory_meta(component["factory"])
            config["components"][name] = Config(meta.default_config).merge(Config(component))
    return Config(Language.default_config).merge(config)


def _skeleton(node: Dict[str, Any]) -> Dict[str, Any]:
    """The blocks and registered-function names of a config, without its values."""
    return {
        key: _skeleton(value) if isinstance(value, dict) else value
        for key, value in node.items()
        if isinstance(value, dict) or key.startswith("@") or key == "factory"
    }


def restated_defaults(config: Config) -> List[str]:
    """The values of ``config`` equal to what the key gets when it is left out, and the
    blocks that name only the function the default names."""
    spacy.blank("en")  # spaCy's own factories are registered lazily
    registry.ensure_populated()
    defaults = registry.fill(_with_factory_defaults(Config(_skeleton(config))), validate=False)
    bare = {
        name: {"factory": c["factory"]}
        for name, c in config.get("components", {}).items()
        if "factory" in c
    }
    base = _with_factory_defaults(Config({"components": bare}))
    found = [
        ".".join(p)
        for p, value in _leaves(config)
        if _get(defaults, p) == value and ".".join(p) not in REQUIRED
    ]
    for p, block in _blocks(config):
        (key, value), *others = block.items() or [("", None)]
        if not others and key.startswith("@") and _get(base, p + (key,)) == value:
            found.append(".".join(p))
    weights = combine_score_weights(
        [
            Language.get_factory_meta(c["factory"]).default_score_weights
            for c in config.get("components", {}).values()
            if "factory" in c
        ]
    )
    stated = config.get("training", {}).get("score_weights", {})
    found += [f"training.score_weights.{k}" for k, v in stated.items() if weights.get(k) == v]
    return found


def _blocks(node: Dict[str, Any], path: Path_ = ()) -> Iterator[Tuple[Path_, Dict[str, Any]]]:
    for key, value in node.items():
        if isinstance(value, dict):
            yield path + (key,), value
            yield from _blocks(value, path + (key,))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_states_only_what_differs_from_the_defaults(path):
    assert restated_defaults(load_config(path, interpolate=False)) == []


def test_a_restated_default_is_found():
    config = load_config(CONFIGS[0], interpolate=False)
    config["training"]["dropout"] = 0.1
    config["components"].setdefault("lisa_srl", {"factory": "lisa_srl"})["max_length"] = 128
    config["components"]["lisa_srl"]["scorer"] = {"@scorers": "spacy-lisa.srl_scorer.v1"}
    found = restated_defaults(config)
    assert {
        "training.dropout",
        "components.lisa_srl.max_length",
        "components.lisa_srl.scorer",
    } <= set(found)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_has_what_spacy_train_reads_before_filling(path):
    config = load_config(path, interpolate=False)
    assert [key for key in REQUIRED if _get(config, tuple(key.split("."))) is KeyError] == []


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_lisa_srl_options_are_the_factorys(path):
    config = load_config(path, interpolate=False)
    for component in config["components"].values():
        if component.get("factory") == "lisa_srl":
            keys = {k for k in component if k not in ("factory", "model", "scorer")}
            assert keys <= set(OPTION_NAMES), keys - set(OPTION_NAMES)
