"""The component's options are declared once (``SRLOptions``): a plain ``add_pipe``, the
factory's default config and the object agree; bad values fail at construction; the
helpers read the object, never a cfg key with a fallback of their own."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import spacy
from confection import ConfigValidationError
from spacy.language import Language

from spacy_lisa.models.types import LossWeights
from spacy_lisa.pipeline.options import OPTION_NAMES, SRLOptions
from spacy_lisa.pipeline.srl_component import LisaSRL, make_lisa_srl

PACKAGE = Path(__file__).parents[2] / "spacy_lisa"


def test_add_pipe_the_factory_defaults_and_the_options_object_agree():
    srl = spacy.blank("en").add_pipe("lisa_srl")
    assert srl.options == SRLOptions()
    defaults = Language.get_factory_meta("lisa_srl").default_config
    options = {k: v for k, v in defaults.items() if k not in ("model", "scorer")}
    assert options == SRLOptions().to_config()
    assert set(options) == set(OPTION_NAMES)
    assert SRLOptions().loss_weights == LossWeights()


def test_the_factory_and_the_component_declare_no_default_of_their_own():
    """The factory's signature names every option (spaCy validates configs against it)
    without a default; the component takes them as keywords, without defaults."""
    factory = inspect.signature(make_lisa_srl).parameters
    assert set(OPTION_NAMES) <= set(factory)
    assert all(factory[name].default is inspect.Parameter.empty for name in OPTION_NAMES)
    component = inspect.signature(LisaSRL.__init__).parameters
    assert not set(OPTION_NAMES) & set(component)


def test_config_values_reach_the_component():
    config = {"decoding": "greedy", "max_length": 64, "loss_weights": {"head": 0.5}}
    srl = spacy.blank("en").add_pipe("lisa_srl", config=config)
    assert srl.options.decoding == "greedy" and srl.options.max_length == 64
    # a partial loss_weights block keeps the other weights' defaults
    assert srl.options.loss_weights == LossWeights(head=0.5)


@pytest.mark.parametrize(
    "option, value, code",
    [
        ("decoding", "beam", "E024"),
        ("parse_source", "gold", "E024"),
        ("max_length", 0, "E031"),
        ("loss_weights", {"roles": 1.0}, "E027"),
        ("loss_weights", {"teacher": 2.0}, "E027"),
    ],
)
def test_a_bad_option_fails_at_add_pipe_with_its_code(option, value, code):
    with pytest.raises(ValueError, match=rf"\[{code}\].*{next(iter(option.split('_')))}"):
        spacy.blank("en").add_pipe("lisa_srl", config={option: value})


def test_an_unknown_option_fails_config_validation():
    with pytest.raises(ConfigValidationError, match="transition_weigth"):
        spacy.blank("en").add_pipe("lisa_srl", config={"transition_weigth": 0.1})


def test_setting_an_option_validates_it():
    srl = spacy.blank("en").add_pipe("lisa_srl")
    srl.parse_source = "model"
    assert srl.options.parse_source == "model"
    with pytest.raises(ValueError, match="E024"):
        srl.decoding = "beam"
    assert srl.decoding == "viterbi"


def test_no_module_reads_an_option_from_cfg():
    """cfg holds what initialize learned; an option read from it (or a .get with a
    fallback of its own) would run with a default the factory does not declare."""
    options = "|".join(OPTION_NAMES)
    pattern = re.compile(rf"""cfg(\.get\(|\[)["'](?:{options})["']""")
    found = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in PACKAGE.rglob("*.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line) or re.search(r"\bcfg\.get\(", line)
    ]
    assert found == []


def test_every_option_is_documented():
    """Every option is a supported one: the usage page's table lists it."""
    usage = (Path(__file__).parents[2] / "docs" / "usage.md").read_text()
    assert [name for name in OPTION_NAMES if f"`{name}`" not in usage] == []
