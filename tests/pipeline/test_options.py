"""The component's options are declared once (``SRLOptions``): a plain ``add_pipe``, the
factory's default config and the object agree; bad values fail at construction; the
helpers read the object, never a cfg key with a fallback of their own."""

from __future__ import annotations

import copy
import inspect
import json
import pickle
import re
import shutil
from pathlib import Path

import pytest
import spacy
from confection import ConfigValidationError
from spacy.language import Language

from spacy_lisa.errors import UserError
from spacy_lisa.loading import load_pipeline
from spacy_lisa.models.types import LossWeights
from spacy_lisa.pipeline.options import OPTION_NAMES, SRLOptions
from spacy_lisa.pipeline.srl_component import LisaSRL, make_lisa_srl

PACKAGE = Path(__file__).parents[2] / "spacy_lisa"
SAVED_PIPELINE = Path(__file__).parents[1] / "fixtures" / "saved_pipeline" / "pipeline"
TEXT = "John sold the car to Mary."


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
        ("predicate_pos", ["VERB", "VERBS"], "E042"),
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


def test_predicate_pos_takes_upos_tags_only():
    assert SRLOptions(predicate_pos=["VERB", "AUX"]).predicate_pos == ("VERB", "AUX")
    assert SRLOptions(predicate_pos="VERB").predicate_pos == ("VERB",)  # not V, E, R, B
    # a typo would keep no frame at all: it is refused, naming the tags
    with pytest.raises(ValueError, match=r"\[E042\] .*'verb'.*NOUN, NUM"):
        SRLOptions(predicate_pos=["verb"])


def test_an_option_set_in_cfg_is_the_one_the_component_reads(tmp_path):
    """As in spaCy's own components, ``srl.cfg[option] = value`` takes effect, checked as
    a config value is, and reads back; it is not saved (the config's options load)."""
    nlp = spacy.load(SAVED_PIPELINE)
    srl = nlp.get_pipe("lisa_srl")
    assert [f.predicate.text for f in nlp(TEXT)._.srl_frames] == ["sold"]
    srl.cfg["predicate_pos"] = ["NOUN"]  # the fixture's model finds verbs only
    assert srl.options.predicate_pos == ("NOUN",) and srl.cfg["predicate_pos"] == ["NOUN"]
    assert "predicate_pos" in srl.cfg and srl.cfg.get("predicate_pos") == ["NOUN"]
    assert nlp(TEXT)._.srl_frames == []
    srl.cfg.update({"decoding": "greedy", "predicate_pos": None})
    assert srl.decoding == "greedy" and len(nlp(TEXT)._.srl_frames) == 1
    with pytest.raises(ValueError, match="E024"):
        srl.cfg["decoding"] = "beam"
    with pytest.raises(ValueError, match="E042"):
        srl.cfg["predicate_pos"] = ["VERBS"]
    assert srl.options.decoding == "greedy" and srl.options.predicate_pos is None
    nlp.to_disk(tmp_path / "saved")
    saved = json.loads((tmp_path / "saved" / "lisa_srl" / "cfg").read_text())
    assert not set(OPTION_NAMES) & set(saved)
    assert spacy.load(tmp_path / "saved").get_pipe("lisa_srl").decoding == "viterbi"


def test_a_cfg_key_that_is_neither_an_option_nor_learned_is_refused():
    srl = spacy.blank("en").add_pipe("lisa_srl")
    with pytest.raises(KeyError, match=r"\[E043\] 'predicate_poss'.*predicate_pos"):
        srl.cfg["predicate_poss"] = ["VERB"]
    assert "predicate_poss" not in srl.cfg
    srl.cfg["transitions"] = None  # what initialize learns is set as before
    assert srl.cfg["transitions"] is None


def test_the_options_load_from_the_config_not_from_a_saved_cfg(tmp_path):
    """A saved cfg that holds an option (hand-edited, or of another version) loads with
    the config's value; keys of other versions are kept, and survive pickling."""
    shutil.copytree(SAVED_PIPELINE, tmp_path / "pipeline")
    path = tmp_path / "pipeline" / "lisa_srl" / "cfg"
    path.write_text(json.dumps({**json.loads(path.read_text()), "decoding": "greedy", "new": 1}))
    nlp = spacy.load(tmp_path / "pipeline")
    srl = nlp.get_pipe("lisa_srl")
    assert srl.decoding == "viterbi" and srl.cfg["new"] == 1
    copied = pickle.loads(pickle.dumps(nlp)).get_pipe("lisa_srl")
    assert copied.cfg["new"] == 1
    copied.cfg["predicate_pos"] = ["NOUN"]  # the copy's options, not the original's
    assert copied.options.predicate_pos == ("NOUN",) and srl.options.predicate_pos is None
    plain = copy.deepcopy(srl.cfg)  # the data alone (the component is not copied)
    assert type(plain) is dict and plain["labels"] == srl.cfg["labels"]


def test_load_pipeline_sets_the_options_of_a_run():
    nlp = load_pipeline(str(SAVED_PIPELINE), -1, {"predicate_pos": ["NOUN"]})
    assert nlp.get_pipe("lisa_srl").options.predicate_pos == ("NOUN",)
    assert nlp(TEXT)._.srl_frames == []
    with pytest.raises(UserError, match="E043.*predicate_poss"):
        load_pipeline(str(SAVED_PIPELINE), -1, {"predicate_poss": ["NOUN"]})
    with pytest.raises(UserError, match="E042.*'VERBS'"):
        load_pipeline(str(SAVED_PIPELINE), -1, {"predicate_pos": ["VERBS"]})
