"""The ``lisa_srl`` pipeline component: LISA semantic role labelling inside spaCy.

One encoder pass per sentence predicts POS, predicates, a dependency parse and BIO role
labels for all predicates at once. Which parse the syntactic head follows is chosen per
doc (``parse_source``): the doc's own parse (e.g. from a spaCy ``parser`` earlier in the
pipeline, or a gold parse), or the model's own. Results are written to
``doc._.srl_frames`` (and mirrored into ``doc.spans["srl"]``), see :mod:`spacy_lisa.frames`.

The torch model is in :mod:`spacy_lisa.models`. This module is the factory and the
``TrainablePipe`` contract; the work is in :mod:`.labels` (labels from the data),
:mod:`.batching` (Docs/Examples -> ``LisaBatch``), :mod:`.targets` (gold ->
``LisaTargets``) and :mod:`.annotate` (decoded scores -> frames on the docs).
"""

from __future__ import annotations

import copy
import json
import os
from collections import Counter
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import srsly
from spacy import util
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, set_dropout_rate

from ..errors import Errors
from ..frames import has_srl_annotation, install_extensions, set_srl_frames
from ..models.lisa import FRAME_DIMS
from ..models.types import (
    LISA_V2_DEFAULTS,
    OWN_PARSE_MODES,
    PARSE_SOURCES,
    TEACHER_FORCING_MODES,
    LisaBatch,
    LisaOutput,
    LisaTargets,
    LossWeights,
)
from .annotate import annotate_group
from .batching import PredictGroup, Windower, predict_groups, train_batch
from .labels import PREDICATE_SUFFIX as PREDICATE_SUFFIX
from .labels import (
    collect_label_data,
    ensure_model_built,
    frame_label_tables,
    init_role_prior,
    label_data,
    role_names,
    set_label_dims,
    store_label_data,
)
from .targets import gold_targets

if TYPE_CHECKING:
    from .labels import FrameLabelTables

# the factory's options (everything in its config but the model and the scorer): kept in
# cfg and saved with it, but at load the pipeline's config (config.cfg, with any
# spacy.load(config=...) overrides) decides them, so the two always agree
OPTIONS = (
    "parse_source",
    "model_parse",
    "overwrite_parse",
    "predicate_source",
    "decoding",
    "transition_weight",
    "unique_core_roles",
    "write_pos",
    "max_length",
    "teacher_forcing",
    "gold_parse_prob",
    "loss_weights",
    "store_attention",
    "spans_key",
    "predicate_pos",
    "sense_loss",
)
PREDICATE_SOURCES = ("model", "doc")
DECODINGS = ("viterbi", "greedy")
SENSE_LOSSES = ("all", "candidates")
TEACHER_FORCING = tuple(TEACHER_FORCING_MODES)
DEFAULT_LOSS_WEIGHTS = {
    "role": 1.0,
    "tag": 1.0,
    "head": 1.0,
    "dep": 1.0,
    "sense": 1.0,
    "lemma": 1.0,
    "predicate_pos": 1.0,
    # share of the role/tag terms learned from a teacher's distributions stored in the
    # training data (pipeline/teacher.py); 0: none
    "teacher": 0.0,
}

default_model_config = """
[model]
@architectures = "spacy-lisa.LISA.v2"
"""
# the encoder sizes come from LISA_V2_DEFAULTS (declared once, see models/types.py); the
# tok2vec is configs/lisa_cpu.cfg's, without its static vectors (they need a vectors
# table: vectors = "path" in [model.tok2vec.embed], as the config does)
default_model_config += "".join(
    f"{key} = {json.dumps(value)}\n" for key, value in LISA_V2_DEFAULTS.items()
)
default_model_config += """
[model.tok2vec]
@architectures = "spacy.Tok2Vec.v2"

[model.tok2vec.embed]
@architectures = "spacy-lisa.MultiHashEmbed.v1"
width = 128
attrs = ["NORM", "PREFIX", "SUFFIX", "SHAPE"]
rows = [10000, 2000, 4000, 2000]
include_static_vectors = false

[model.tok2vec.encode]
@architectures = "spacy.MaxoutWindowEncoder.v2"
width = 128
depth = 2
window_size = 1
maxout_pieces = 3
"""
DEFAULT_LISA_MODEL = Config().from_str(default_model_config)["model"]


@Language.factory(
    "lisa_srl",
    assigns=[
        "doc._.srl_frames",
        "doc._.srl_parse",
        "doc._.srl_parse_source",
        "doc._.srl_pos",
        "doc._.srl_label_attention",
        "doc.spans",
        "token.tag",  # with write_pos
        "token.head",  # with overwrite_parse
        "token.dep",  # with overwrite_parse
    ],
    # sentences (windows) and the parse that parse_source="auto" follows; without them
    # the component segments by rule (warning W003) and uses its own parse
    requires=["doc.sents", "token.head", "token.dep"],
    default_config={
        "model": DEFAULT_LISA_MODEL,
        "parse_source": "auto",
        "model_parse": "argmax",
        "overwrite_parse": False,
        "predicate_source": "model",
        "decoding": "viterbi",
        # chosen on EWT *train* sentences for lisa_cpu (benchmarks/transition_weight_sweep.py):
        # the per-token scores already carry each label's prior
        "transition_weight": 0.25,
        # PropBank's numbered arguments occur once per frame (BENCHMARKS.md, Decoding)
        "unique_core_roles": True,
        "write_pos": False,
        "max_length": 128,
        "teacher_forcing": "gold",
        "gold_parse_prob": 0.5,
        "loss_weights": dict(DEFAULT_LOSS_WEIGHTS),
        "store_attention": False,
        "predicate_pos": None,
        # the roleset softmax over the gold lemma's candidates, the set decoding chooses
        # from (better sense accuracy than over all rolesets, BENCHMARKS.md)
        "sense_loss": "candidates",
        "spans_key": "srl",
        "scorer": {"@scorers": "spacy-lisa.srl_scorer.v1"},
    },
    default_score_weights={
        "srl_f": 1.0,
        "srl_p": 0.0,
        "srl_r": 0.0,
        "srl_pred_f": 0.0,
        "srl_uas": 0.0,
        "srl_las": 0.0,
        "srl_pos_acc": 0.0,
        "srl_sense_acc": 0.0,
    },
)
def make_lisa_srl(
    nlp: Language,
    name: str,
    model: Model[LisaBatch, LisaOutput],
    *,
    parse_source: str,
    model_parse: str,
    overwrite_parse: bool,
    predicate_source: str,
    decoding: str,
    transition_weight: float,
    write_pos: bool,
    max_length: int,
    teacher_forcing: str,
    gold_parse_prob: float,
    loss_weights: Dict[str, float],
    store_attention: bool,
    spans_key: str,
    scorer: Optional[Callable],
    predicate_pos: Optional[List[str]] = None,
    sense_loss: str = "candidates",
    unique_core_roles: bool = True,
) -> LisaSRL:
    """Create a ``lisa_srl`` component (see :class:`LisaSRL` for the options)."""
    return LisaSRL(
        nlp.vocab,
        model,
        name,
        parse_source=parse_source,
        model_parse=model_parse,
        overwrite_parse=overwrite_parse,
        predicate_source=predicate_source,
        decoding=decoding,
        transition_weight=transition_weight,
        write_pos=write_pos,
        max_length=max_length,
        teacher_forcing=teacher_forcing,
        gold_parse_prob=gold_parse_prob,
        loss_weights=loss_weights,
        store_attention=store_attention,
        spans_key=spans_key,
        scorer=scorer,
        predicate_pos=predicate_pos,
        sense_loss=sense_loss,
        unique_core_roles=unique_core_roles,
    )


def _single_threaded_in_worker(owner_pid: int) -> None:
    """In a worker process (``nlp.pipe(..., n_process=N)``), run torch on one thread.

    GNU OpenMP's thread pool does not survive ``fork``: a child that enters a parallel
    torch op after the parent used one deadlocks. The workers are parallel processes
    already, so one thread each loses nothing. Only processes that run this component
    outside the one that built or loaded it are affected (no process-global fork hook)."""
    if os.getpid() != owner_pid:
        import torch

        if torch.get_num_threads() != 1:
            torch.set_num_threads(1)


def _check_loss_weights(weights: Optional[Dict[str, float]]) -> Dict[str, float]:
    """The loss weights with defaults filled in; a misspelt key fails here, at
    construction, not at the first update."""
    weights = dict(weights or {})
    unknown = sorted(set(weights) - set(DEFAULT_LOSS_WEIGHTS))
    bad = [
        k
        for k, v in weights.items()
        if not isinstance(v, (int, float)) or v < 0 or (k == "teacher" and v > 1)
    ]
    if unknown or bad:
        raise ValueError(
            Errors.E027.format(keys=unknown or bad, choices=", ".join(DEFAULT_LOSS_WEIGHTS))
        )
    return {**DEFAULT_LOSS_WEIGHTS, **{k: float(v) for k, v in weights.items()}}


def _check_choice(option: str, value: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(Errors.E024.format(value=value, option=option, choices=", ".join(choices)))
    return value


@dataclass
class LisaPrediction:
    """What :meth:`LisaSRL.predict` returns and :meth:`LisaSRL.set_annotations` reads."""

    groups: List[PredictGroup]


class LisaSRL(TrainablePipe):
    """Semantic role labeller with a syntactically-informed self-attention encoder.

    Options (all keyword-only, all saved with the pipeline):

    - ``parse_source``: ``"auto"`` (the doc's parse when ``doc.has_annotation("DEP")``,
      else the model's own), ``"model"``, or ``"doc"`` (error E022 if a doc has none).
    - ``model_parse``: how the model's own parse feeds later layers: ``"argmax"``
      (one-hot on its best head, matching teacher-forced training) or ``"soft"``.
    - ``overwrite_parse``: write the model's own parse to ``token.head``/``token.dep_``,
      decoded as a maximum spanning tree (always a well-formed tree per window).
    - ``predicate_source``: ``"model"`` (predicted) or ``"doc"`` (``doc._.srl_predicates``,
      a list of token indices, Tokens or Spans set before the component runs).
    - ``decoding``: ``"viterbi"`` (hard BIO constraints + transition scores from the
      training data) or ``"greedy"``.
    - ``transition_weight``: scale of the transition log-probabilities against the
      model's per-token log-probabilities in Viterbi decoding. The per-token scores are
      posteriors that already hold each tag's prior, so full-weight transitions count it
      twice and cost recall (BENCHMARKS.md, Decoding).
    - ``unique_core_roles``: decode no frame with a numbered argument (``ARG0``-``ARG5``,
      ``ARGA``) in two spans; frames whose best path has one are decoded again without
      it where it scores lower (:func:`spacy_lisa.pipeline.decoding.unique_core_roles`).
    - ``write_pos``: set ``token.tag_`` from the joint POS/predicate classifier where empty.
    - ``max_length``: longest window (tokens) the encoder sees; longer sentences are split
      into windows (warning W001, once), attention and parse do not cross them.
    - ``teacher_forcing``: parse fed to the layers above the syntactic head in training:
      ``"gold"`` (the paper's default), ``"predicted"`` (the model's own argmax) or
      ``"scheduled"`` (gold with probability ``gold_parse_prob`` per sentence).
    - ``loss_weights``: ``role``, ``tag``, ``head`` (λ1) and ``dep`` (λ2) of eq. 7.
    - ``sense_loss``: the roleset classifier's softmax in training: over ``"all"`` the
      rolesets seen in training, or over the ``"candidates"`` of the gold roleset's lemma,
      the set decoding chooses from.
    - ``store_attention``: store the Label Attention Layer's per-head attention on
      ``doc._.srl_label_attention`` (only with a LAL top layer).
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model[LisaBatch, LisaOutput],
        name: str = "lisa_srl",
        *,
        parse_source: str = "auto",
        model_parse: str = "argmax",
        overwrite_parse: bool = False,
        predicate_source: str = "model",
        decoding: str = "viterbi",
        transition_weight: float = 0.25,
        write_pos: bool = False,
        max_length: int = 128,
        teacher_forcing: str = "gold",
        gold_parse_prob: float = 0.5,
        loss_weights: Optional[Dict[str, float]] = None,
        store_attention: bool = False,
        spans_key: str = "srl",
        scorer: Optional[Callable] = None,
        predicate_pos: Optional[Sequence[str]] = None,
        sense_loss: str = "candidates",
        unique_core_roles: bool = True,
    ) -> None:
        install_extensions()
        self._owner_pid = os.getpid()
        # gold the training targets had to mask, by reason (see targets.gold_targets)
        self.masked_gold: Counter = Counter()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        if max_length < 1:
            raise ValueError(
                Errors.E024.format(value=max_length, option="max_length", choices="an integer >= 1")
            )
        self.cfg: Dict[str, Any] = {
            "labels": {"roles": [], "tags": [], "deps": []},
            "transitions": None,
            "start": None,
            "rolesets": {},
            "model_dims": None,
            "parse_source": _check_choice("parse_source", parse_source, PARSE_SOURCES),
            "model_parse": _check_choice("model_parse", model_parse, OWN_PARSE_MODES),
            "overwrite_parse": bool(overwrite_parse),
            "predicate_source": _check_choice(
                "predicate_source", predicate_source, PREDICATE_SOURCES
            ),
            "decoding": _check_choice("decoding", decoding, DECODINGS),
            "transition_weight": float(transition_weight),
            "unique_core_roles": bool(unique_core_roles),
            "write_pos": bool(write_pos),
            "max_length": int(max_length),
            "teacher_forcing": _check_choice("teacher_forcing", teacher_forcing, TEACHER_FORCING),
            "gold_parse_prob": float(gold_parse_prob),
            "loss_weights": _check_loss_weights(loss_weights),
            "store_attention": bool(store_attention),
            "spans_key": spans_key,
            "predicate_pos": None if predicate_pos is None else [str(p) for p in predicate_pos],
            "sense_loss": _check_choice("sense_loss", sense_loss, SENSE_LOSSES),
            # per-predicate classifiers (filled by initialize; empty in older pipelines)
            "senses": [],
            "sense_candidates": {},
            "lemma_trees": [],
            "pred_pos_labels": [],
        }
        # the options as the config gave them: what is saved, and what loading restores
        self._config_options = copy.deepcopy({key: self.cfg[key] for key in OPTIONS})
        self._windower = Windower()  # remembers its warnings: W001 and W003 once
        self._tables: Optional[FrameLabelTables] = None  # built from cfg on first use

    # ---------------------------------------------------------------- options ----------
    # Options are plain attributes backed by cfg, so `spacy-lisa evaluate` (or a user) can
    # switch e.g. the parse source of a loaded pipeline and it is saved with it.
    @property
    def parse_source(self) -> str:
        return self.cfg["parse_source"]

    @parse_source.setter
    def parse_source(self, value: str) -> None:
        self.cfg["parse_source"] = _check_choice("parse_source", value, PARSE_SOURCES)

    @property
    def predicate_source(self) -> str:
        return self.cfg["predicate_source"]

    @predicate_source.setter
    def predicate_source(self, value: str) -> None:
        self.cfg["predicate_source"] = _check_choice("predicate_source", value, PREDICATE_SOURCES)

    @property
    def decoding(self) -> str:
        return self.cfg["decoding"]

    @decoding.setter
    def decoding(self, value: str) -> None:
        self.cfg["decoding"] = _check_choice("decoding", value, DECODINGS)

    @property
    def overwrite_parse(self) -> bool:
        return self.cfg["overwrite_parse"]

    @overwrite_parse.setter
    def overwrite_parse(self, value: bool) -> None:
        self.cfg["overwrite_parse"] = bool(value)

    # ---------------------------------------------------------------- labels -----------
    @property
    def role_labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"]["roles"])

    @property
    def tag_labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"]["tags"])

    @property
    def dep_labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"]["deps"])

    @property
    def labels(self) -> Tuple[str, ...]:
        """The role labels (without BIO prefixes, ``V`` excluded)."""
        return role_names(self.role_labels)

    @property
    def label_data(self) -> Dict[str, Any]:
        """Everything :meth:`initialize` collects from the data; pass it back as
        ``labels`` (e.g. via ``spacy init labels``) to skip the collection."""
        return label_data(self.cfg)

    def add_label(self, label: str) -> int:
        raise NotImplementedError(
            "lisa_srl collects its labels from the training data in initialize(); "
            "pass label_data as `labels` to initialize() to fix them in advance."
        )

    @property
    def is_initialized(self) -> bool:
        return bool(self.cfg["model_dims"])

    # ---------------------------------------------------------------- initialize -------
    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Dict[str, Any]] = None,
        propbank_frames: Optional[str] = None,
    ) -> None:
        """Collect labels (BIO roles, joint POS/predicate tags, dependency labels),
        transition statistics, the rolesets (senses) with the candidates of each lemma,
        the predicates' lemma edit trees and UPOS from the examples, then build the model
        on a small sample. ``propbank_frames``: a directory of PropBank frame files
        (``*.xml``) whose rolesets extend each lemma's candidates (e.g. for lemmas never
        seen in training; set it in ``[initialize.components.lisa_srl]``)."""
        validate_get_examples(get_examples, "LisaSRL.initialize")
        if labels is None:
            labels = collect_label_data(get_examples(), self.vocab.strings)
            if labels is None:
                raise ValueError(Errors.E021)
        store_label_data(self.cfg, labels, propbank_frames)
        self._tables = None
        sample = [eg for eg in islice(get_examples(), 200) if has_srl_annotation(eg.reference)][:10]
        if not sample:
            raise ValueError(Errors.E021)
        set_label_dims(self.model, self.cfg)
        self.model.initialize(X=self._train_batch(sample))
        if self.cfg["role_counts"]:
            init_role_prior(self.model, self.cfg)
        self.cfg["model_dims"] = {
            name: self.model.get_dim(name)
            for name in ("nI", "n_tags", "n_deps", "n_roles", *FRAME_DIMS)
            if self.model.maybe_get_dim(name) is not None
        }

    # ---------------------------------------------------------------- predict ----------
    def predict(self, docs: Iterable[Doc]) -> LisaPrediction:
        """Run the model; touches no doc. Docs are grouped by the parse they use (one
        model call per group)."""
        if not self.is_initialized:
            raise ValueError(Errors.E020.format(name=self.name))
        _single_threaded_in_worker(self._owner_pid)
        docs = list(docs)
        if docs:
            self._check_vocab_vectors(docs[0].vocab)
        return LisaPrediction(predict_groups(docs, self.model, self.cfg, self._windower))

    def _check_vocab_vectors(self, vocab: Vocab) -> None:
        """A model that reads the shared ``vocab.vectors`` (spaCy's ``StaticVectors``)
        fails with a message, not an IndexError, in a pipeline whose table is empty or of
        another width. (``spacy-lisa.MultiHashEmbed.v1`` keeps its own table.)"""
        shape = tuple(vocab.vectors.shape)
        for node in self.model.walk():
            if node.name != "static_vectors" or not node.has_dim("nM"):
                continue
            width = node.get_dim("nM")
            if shape[0] == 0 or shape[1] != width:
                found = "no vectors" if shape[0] == 0 else f"{shape[1]} dimensions"
                raise ValueError(Errors.E030.format(name=self.name, width=width, found=found))

    # ---------------------------------------------------------------- annotate ---------
    def set_annotations(self, docs: Iterable[Doc], scores: LisaPrediction) -> None:
        """Decode frames (Viterbi or greedy), the parse used, POS, and write them."""
        docs = list(docs)
        for doc in docs:
            if len(doc) == 0:
                set_srl_frames(doc, [], spans_key=self.cfg["spans_key"])
                doc._.srl_parse_source = None
        ops, tables = self.model.ops, self._frame_label_tables()
        for group in scores.groups:
            group_docs = [docs[i] for i in group.doc_indices]
            annotate_group(group_docs, group.output, group.parse_source, ops, self.cfg, tables)

    # ---------------------------------------------------------------- training ---------
    def _train_batch(self, examples: Sequence[Example]) -> LisaBatch:
        return train_batch(examples, self.cfg, self._windower)

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Any] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Learn from a batch of Examples whose reference docs carry gold frames (and,
        for the syntactic head, a gold parse)."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "LisaSRL.update")
        if not self.is_initialized:
            raise ValueError(Errors.E020.format(name=self.name))
        usable = [eg for eg in examples if has_srl_annotation(eg.reference) and len(eg.predicted)]
        if not usable:
            return losses
        set_dropout_rate(self.model, drop)
        output, backprop = self.model.begin_update(self._train_batch(usable))
        loss, d_output = self.get_loss(usable, output)
        backprop(d_output)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def get_loss(self, examples: Iterable[Example], scores: LisaOutput) -> Tuple[float, LisaOutput]:
        """Masked cross-entropy of eq. 7 and its gradient with respect to the logits."""
        from ..models.loss import lisa_loss

        targets = self._targets(list(examples), scores)
        weights = LossWeights(**self.cfg["loss_weights"])
        return lisa_loss(self.model.ops, scores, targets, weights)

    def _targets(self, examples: List[Example], output: LisaOutput) -> LisaTargets:
        tables = self._frame_label_tables()
        return gold_targets(examples, output, self.model.ops, self.cfg, tables, self.masked_gold)

    def _frame_label_tables(self) -> FrameLabelTables:
        """Lemma classes and sense decoder, built from cfg once (see FrameLabelTables)."""
        self._tables = frame_label_tables(self.cfg, self.vocab.strings, self._tables)
        return self._tables

    # ---------------------------------------------------------------- serialisation ----
    # The options in cfg are saved as the config gave them (not as set on the running
    # component) and restored from the config at load: the saved config.cfg (with any
    # spacy.load(config=...) overrides) is what a loaded pipeline runs. To keep a changed
    # option, change the config: spacy.load(path, config={"components": {"lisa_srl":
    # {...}}}), then nlp.to_disk.
    def _saved_cfg(self) -> Dict[str, Any]:
        return {**self.cfg, **copy.deepcopy(self._config_options)}

    def _load_cfg(self, saved: Dict[str, Any]) -> None:
        self.cfg.update(saved)
        self.cfg.update(copy.deepcopy(self._config_options))

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        self._validate_serialization_attrs()
        serialize: Dict[str, Callable[[], Any]] = {
            "cfg": lambda: srsly.json_dumps(self._saved_cfg()),
            "vocab": lambda: self.vocab.to_bytes(exclude=exclude),
            "model": self.model.to_bytes,
        }
        return util.to_bytes(serialize, exclude)

    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        self._validate_serialization_attrs()
        serialize: Dict[str, Callable[[Any], Any]] = {
            "cfg": lambda p: srsly.write_json(p, self._saved_cfg()),
            "vocab": lambda p: self.vocab.to_disk(p, exclude=exclude),
            "model": lambda p: self.model.to_disk(p),
        }
        util.to_disk(path, serialize, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> LisaSRL:
        self._validate_serialization_attrs()
        msg = srsly.msgpack_loads(bytes_data)
        if "cfg" not in exclude and "cfg" in msg:
            self._load_cfg(srsly.json_loads(msg["cfg"]))
        if "vocab" not in exclude and "vocab" in msg:
            self.vocab.from_bytes(msg["vocab"], exclude=exclude)
        if "model" not in exclude and "model" in msg:
            ensure_model_built(self.model, self.cfg)
            self.model.from_bytes(msg["model"])
        return self

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> LisaSRL:
        self._validate_serialization_attrs()

        def load_model(p: Any) -> None:
            ensure_model_built(self.model, self.cfg)
            with open(p, "rb") as file_:
                self.model.from_bytes(file_.read())

        deserialize: Dict[str, Callable[[Any], Any]] = {
            "cfg": lambda p: self._load_cfg(srsly.read_json(p)),
            "vocab": lambda p: self.vocab.from_disk(p, exclude=exclude),
            "model": load_model,
        }
        util.from_disk(path, deserialize, exclude)
        return self
