"""``lisa_srl``'s labels: collected from training examples, stored in the component's
cfg, and set as the model's output dimensions."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from spacy.training import Example
from thinc.api import Model

from ..decoding.bio import OUTSIDE, VERB, spans_to_bio
from ..errors import Errors
from ..frames import has_srl_annotation, predicate_starts

if TYPE_CHECKING:
    from spacy.strings import StringStore

    from .senses import LemmaTrees, SenseDecoder

PREDICATE_SUFFIX = ":PREDICATE"
# edit trees seen fewer times than this on training predicates are not lemma classes
MIN_LEMMA_TREE_FREQ = 2


def role_names(role_labels: Sequence[str]) -> Tuple[str, ...]:
    """The role labels of BIO tags (without BIO prefixes, ``V`` excluded)."""
    return tuple(sorted({tag[2:] for tag in role_labels if tag != OUTSIDE and tag[2:] != VERB}))


def collect_label_data(
    examples: Iterable[Example], strings: StringStore
) -> Optional[Dict[str, Any]]:
    """Labels (BIO roles, joint POS/predicate tags, dependency labels), transition
    statistics, rolesets, lemma edit trees and predicate UPOS of the examples' gold
    frames; None when no example has SRL annotation."""
    from ..decoding.viterbi import estimate_transitions
    from .senses import FrameLabelCollector

    frame_labels = FrameLabelCollector(strings)
    tags: set = set()
    deps: set = set()
    sequences: List[List[str]] = []
    role_counts: Counter = Counter()
    n_annotated = 0
    for eg in examples:
        ref = eg.reference
        if not has_srl_annotation(ref):
            continue
        n_annotated += 1
        predicate_tokens = set(predicate_starts(ref))
        for token in ref:
            if token.tag_:
                tags.add(token.tag_)
                if token.i in predicate_tokens:
                    tags.add(token.tag_ + PREDICATE_SUFFIX)
            if token.dep_ and ref.has_annotation("DEP"):
                deps.add(token.dep_)
        for frame in ref._.srl_frames:
            sent = frame.predicate.sent if ref.has_annotation("SENT_START") else ref[:]
            offset = sent.start
            spans = [(r.start - offset, r.end - offset, r.label_) for r in frame.roles]
            pred = (frame.predicate.start - offset, frame.predicate.end - offset)
            bio, _ = spans_to_bio(len(sent), spans, predicate=pred)
            role_counts.update(bio)
            sequences.append(bio)
            frame_labels.add(frame)
    if n_annotated == 0:
        return None
    if not tags:
        # no gold POS: the joint classifier still detects predicates
        tags = {"X", "X" + PREDICATE_SUFFIX}
    role_list = sorted({OUTSIDE, f"B-{VERB}", f"I-{VERB}", *role_counts})
    transitions, start = estimate_transitions(sequences, role_list)
    return {
        "labels": {"roles": role_list, "tags": sorted(tags), "deps": sorted(deps)},
        "transitions": transitions.tolist(),
        "start": start.tolist(),
        **frame_labels.label_data(min_tree_freq=MIN_LEMMA_TREE_FREQ),
        # token counts per BIO role: the LAN decoder starts from their log prior
        "role_counts": dict(role_counts),
    }


# what initialize() learns from the data and the component keeps in its cfg (saved)
LABEL_DATA_KEYS = (
    "labels",
    "transitions",
    "start",
    "role_counts",
    "senses",
    "sense_candidates",
    "lemma_trees",
    "pred_pos_labels",
)


def empty_label_data() -> Dict[str, Any]:
    """The cfg of a component that has not been initialised."""
    return {
        "labels": {"roles": [], "tags": [], "deps": []},
        "transitions": None,
        "start": None,
        "role_counts": {},
        "senses": [],
        "sense_candidates": {},
        "lemma_trees": [],
        "pred_pos_labels": [],
    }


def store_label_data(
    cfg: Dict[str, Any], labels: Dict[str, Any], propbank_frames: Optional[str] = None
) -> None:
    """Put label data (as :func:`collect_label_data` returns it, or ``spacy init labels``
    saved it; parts left out are empty) into the component's cfg. ``propbank_frames``: a
    directory of frame files whose rolesets extend each lemma's candidates."""
    given = {**empty_label_data(), **{k: v for k, v in labels.items() if v is not None}}
    cfg["labels"] = {k: list(v) for k, v in given["labels"].items()}
    cfg["transitions"] = given["transitions"]
    cfg["start"] = given["start"]
    cfg["role_counts"] = dict(given["role_counts"])
    cfg["senses"] = list(given["senses"])
    cfg["sense_candidates"] = dict(given["sense_candidates"])
    cfg["lemma_trees"] = [list(p) for p in given["lemma_trees"]]
    cfg["pred_pos_labels"] = list(given["pred_pos_labels"])
    if propbank_frames is not None:
        from .senses import add_frame_file_candidates

        add_frame_file_candidates(cfg["sense_candidates"], propbank_frames)


def label_data(cfg: Dict[str, Any]) -> Dict[str, Any]:
    """The label data in the component's cfg, in the form :func:`store_label_data` takes."""
    return {key: cfg[key] for key in LABEL_DATA_KEYS}


def predicate_tag_ids(tags: Sequence[str]) -> List[int]:
    """The ids of the joint POS/predicate tags that mark a predicate."""
    return [i for i, t in enumerate(tags) if t.endswith(PREDICATE_SUFFIX)]


def set_label_dims(model: Model, cfg: Dict[str, Any]) -> None:
    """Set the model's output dimensions (and its predicate tags) from the labels: on
    each member too where the model is an ensemble (``spacy-lisa.Ensemble.v1``)."""
    from ..models.lisa import lisa_members

    labels = cfg["labels"]
    predicate_tags = predicate_tag_ids(labels["tags"])
    for node in {id(node): node for node in (model, *lisa_members(model))}.values():
        node.set_dim("n_tags", max(1, len(labels["tags"])))
        node.set_dim("n_deps", max(1, len(labels["deps"])))
        node.set_dim("n_roles", len(labels["roles"]))
        for dim, key in (
            ("n_senses", "senses"),
            ("n_lemmas", "lemma_trees"),
            ("n_pred_pos", "pred_pos_labels"),
        ):
            n = len(cfg[key])
            if n and node.maybe_get_dim(dim) in (None, n):
                node.set_dim(dim, n, force=True)
        node.attrs["predicate_tags"] = predicate_tags


def init_role_prior(model: Model, cfg: Dict[str, Any]) -> None:
    """Give the role scorer the add-one log frequencies of the BIO roles, where it
    takes a label prior (the LAN decoder): without it, LAN's BiLSTM saturated into a
    constant "everything is O" output on EWT and never left it."""
    from ..models.lisa import set_role_prior

    counts = np.array([cfg["role_counts"].get(r, 0) for r in cfg["labels"]["roles"]], "f")
    set_role_prior(model, np.log((counts + 1.0) / (counts + 1.0).sum()))


@dataclass
class FrameLabelTables:
    """What decoding a frame's lemma and roleset needs from cfg, built once: the lemma
    classes (edit trees) and the sense decoder (rolesets per lemma), each None when the
    component has none. ``source`` holds the cfg values they were built from."""

    trees: Optional[LemmaTrees]
    senses: Optional[SenseDecoder]
    source: Tuple[Any, ...]


def frame_label_tables(
    cfg: Dict[str, Any], strings: StringStore, cached: Optional[FrameLabelTables]
) -> FrameLabelTables:
    """The :class:`FrameLabelTables` of cfg: ``cached`` while cfg still holds the very
    values it was built from (loading or initialising replaces them), else rebuilt.
    Built per batch, the sense decoder's per-lemma index arrays cost ~6% of prediction."""
    source = (cfg["lemma_trees"], cfg["senses"], cfg["sense_candidates"])
    if cached is not None and all(a is b for a, b in zip(cached.source, source, strict=True)):
        return cached
    from .senses import LemmaTrees, SenseDecoder

    pairs, senses, candidates = source
    return FrameLabelTables(
        trees=LemmaTrees(strings, pairs) if pairs else None,
        senses=SenseDecoder(senses, candidates or {}) if senses else None,
        source=source,
    )


def ensure_model_built(model: Model, cfg: Dict[str, Any]) -> None:
    """Rebuild the lazily built torch layer from the dims saved in cfg before loading
    weights (the serialisation trap of lazily built layers). An ensemble's cfg holds a
    list of dims, one per member."""
    from ..models.lisa import ensure_built, lisa_members

    dims = cfg["model_dims"]
    if not dims:
        raise ValueError(Errors.E025)
    members = lisa_members(model)
    member_dims = dims if isinstance(dims, list) else [dims] * len(members)
    if len(member_dims) != len(members):
        raise ValueError(Errors.E035.format(n_config=len(members), n_saved=len(member_dims)))
    set_label_dims(model, cfg)
    for member, saved in zip(members, member_dims, strict=True):
        for name, value in saved.items():
            if member.maybe_get_dim(name) is None:
                member.set_dim(name, value)
        ensure_built(member)
