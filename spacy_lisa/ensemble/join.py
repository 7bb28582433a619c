"""Joining trained ``lisa_srl`` pipelines into one whose ``lisa_srl`` averages them
(``spacy-lisa ensemble``; the model is :mod:`spacy_lisa.ensemble.model`).

The joined pipeline is the first member's, tokenizer, parser and options included, with
its ``lisa_srl`` model replaced by ``spacy-lisa.Ensemble.v1`` over every member's model.
It is saved and loaded like any pipeline (``spacy.load``)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Dict, Sequence, cast

from spacy.language import Language

from ..errors import Errors, UserError
from ..loading import SRL_FACTORY, load_model, srl_component

if TYPE_CHECKING:
    from ..pipeline.srl_component import LisaSRL

# the parts of a component's cfg that give its outputs their meaning: members must agree
# on them (transition statistics and sense candidates are the first member's)
LABEL_KEYS = ("labels", "senses", "lemma_trees", "pred_pos_labels")


def join_pipelines(members: Sequence[str], gpu_id: int = -1) -> Language:
    """One pipeline averaging the ``lisa_srl`` models of ``members`` (directories or
    package names of trained pipelines); UserError E036 for fewer than two, E040 for a
    member that is itself an ensemble (join its members instead), E034 when their
    labels differ."""
    if len(members) < 2:
        raise UserError(Errors.E036.format(n=len(members)))
    pipelines = [load_model(member, gpu_id) for member in members]
    components = [
        srl_component(nlp, member) for nlp, member in zip(pipelines, members, strict=True)
    ]
    for member, component in zip(members, components, strict=True):
        # an ensemble's model_dims is one dict per member: its members cannot be nested
        dims = component.cfg["model_dims"] if "model_dims" in component.cfg else None
        if isinstance(dims, list):
            n = len(dims)
            raise UserError(Errors.E040.format(member=member, n=n))
    for member, component in zip(members[1:], components[1:], strict=True):
        for key in LABEL_KEYS:
            if component.cfg[key] != components[0].cfg[key]:
                what = key.replace("_", " ")
                raise UserError(Errors.E034.format(member=member, first=members[0], what=what))
    nlp = pipelines[0]
    name = components[0].name
    config = copy.deepcopy(dict(nlp.config.interpolate()["components"][name]))
    config.pop("factory")
    config["model"] = {
        "@architectures": "spacy-lisa.Ensemble.v1",
        "*": {
            f"member{k}": _model_config(pipeline, component.name)
            for k, (pipeline, component) in enumerate(zip(pipelines, components, strict=True))
        },
    }
    joined = cast("LisaSRL", nlp.replace_pipe(name, SRL_FACTORY, config=config))
    joined.cfg.load(copy.deepcopy(components[0].cfg))  # the data; the options are its config's
    joined.cfg["model_dims"] = [dict(c.cfg["model_dims"]) for c in components]
    from ..pipeline.labels import ensure_model_built

    ensure_model_built(joined.model, joined.cfg)
    for member_model, component in zip(joined.model.layers, components, strict=True):
        member_model.from_bytes(component.model.to_bytes())
    nlp.meta["name"] = f"{nlp.meta.get('name') or 'pipeline'}_ensemble{len(members)}"
    nlp.meta["description"] = f"lisa_srl averaging {len(members)} models: " + ", ".join(
        str(m) for m in members
    )
    return nlp


def _model_config(nlp: Language, name: str) -> Dict[str, Any]:
    return copy.deepcopy(dict(nlp.config.interpolate()["components"][name]["model"]))


__all__ = ["LABEL_KEYS", "join_pipelines"]
