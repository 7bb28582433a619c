"""Options that were removed (tried and not kept, docs/benchmarks/levers.md, or set by no
config and named in no doc): a config that uses one fails with the option's numbered
error, as a config error that ``spacy train`` prints without a traceback; a config that
names one with the value that meant the behaviour kept, as every pipeline saved before
does, builds and loads as before."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any, Dict

import pytest
import spacy
from spacy.cli._util import show_validation_error
from thinc.api import ConfigValidationError

from spacy_lisa.pipeline.srl_component import DEFAULT_LISA_MODEL

FIXTURE = Path(__file__).parents[1] / "fixtures" / "saved_pipeline" / "pipeline"
TRANSFORMER = "spacy-lisa.TransformerTok2Vec.v1"


def model(**options: Any) -> Dict[str, Any]:
    """A ``[components.lisa_srl.model]`` override."""
    return {"model": options}


REMOVED = [
    ({"teacher_forcing": "scheduled"}, "E050"),
    (model(detach_frame_heads=True), "E051"),
    (
        model(
            **{"@architectures": "spacy-lisa.PredicateAwareLISA.v1"},
            tok2vec=copy.deepcopy(DEFAULT_LISA_MODEL["tok2vec"]),
            detach_frame_heads=True,
        ),
        "E051",
    ),
    (
        model(
            role_scorer={"@architectures": "spacy-lisa.BilinearRoleScorer.v1", "max_distance": 8}
        ),
        "E052",
    ),
    (
        model(
            top_layer={
                "@architectures": "spacy-lisa.LabelAttentionLayer.v1",
                "residual_dropout": 0.1,
            }
        ),
        "E053",
    ),
    (model(tok2vec={"@architectures": TRANSFORMER, "pooling": "first"}), "E054"),
    (model(tok2vec={"@architectures": TRANSFORMER, "layer_decay": 0.8}), "E055"),
]


@pytest.mark.parametrize("config, code", REMOVED)
def test_a_removed_option_fails_with_its_code(config, code):
    with pytest.raises(ConfigValidationError, match=rf"\[{code}\].* removed"):
        spacy.blank("en").add_pipe("lisa_srl", config=config)


def test_spacy_train_prints_it_without_a_traceback(capsys):
    """``spacy train`` builds the pipeline inside ``show_validation_error``."""
    with pytest.raises(SystemExit), show_validation_error(hint_fill=False):
        spacy.blank("en").add_pipe("lisa_srl", config={"teacher_forcing": "scheduled"})
    out = capsys.readouterr().out
    assert "[E050]" in out and "Traceback" not in out


def test_the_kept_values_build_as_before():
    """What a config saved before names: every removed option at the value it had when
    the behaviour now kept was used."""
    config = {
        "teacher_forcing": "gold",
        "gold_parse_prob": 0.5,
        **model(
            detach_frame_heads=False,
            role_scorer={"@architectures": "spacy-lisa.BilinearRoleScorer.v1", "max_distance": 0},
            top_layer={
                "@architectures": "spacy-lisa.LabelAttentionLayer.v1",
                "residual_dropout": 0.0,
            },
            tok2vec={"@architectures": TRANSFORMER, "pooling": "mean", "layer_decay": 1.0},
        ),
    }
    srl = spacy.blank("en").add_pipe("lisa_srl", config=config)
    assert srl.options.teacher_forcing == "gold"


def test_the_default_config_builds_and_round_trips():
    nlp = spacy.blank("en")
    nlp.add_pipe("lisa_srl")
    again = spacy.util.load_model_from_config(nlp.config, auto_fill=False)
    assert again.get_pipe("lisa_srl").options == nlp.get_pipe("lisa_srl").options


def test_a_pipeline_saved_before_loads_unless_it_used_a_removed_option(tmp_path):
    """The saved fixture names gold_parse_prob and detach_frame_heads (in its config and
    in its model's saved attrs): it loads and labels. The same pipeline trained with
    scheduled teacher forcing fails with E050, and loads with the override E050 gives."""
    text = "John sold the car to Mary."
    assert spacy.load(FIXTURE)(text)._.srl_frames is not None
    pipeline = tmp_path / "scheduled"
    shutil.copytree(FIXTURE, pipeline)
    config = pipeline / "config.cfg"
    saved = config.read_text(encoding="utf8")
    assert 'teacher_forcing = "gold"' in saved and "gold_parse_prob = 0.5" in saved
    config.write_text(saved.replace('teacher_forcing = "gold"', 'teacher_forcing = "scheduled"'))
    with pytest.raises(ConfigValidationError, match=r"\[E050\]"):
        spacy.load(pipeline)
    override = {"components": {"lisa_srl": {"teacher_forcing": "gold"}}}
    assert spacy.load(pipeline, config=override)(text)._.srl_frames is not None
