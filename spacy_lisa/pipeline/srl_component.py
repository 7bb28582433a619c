"""The ``lisa_srl`` pipeline component: LISA semantic role labelling inside spaCy.

One encoder pass per sentence predicts POS, predicates, a dependency parse and BIO role
labels for all predicates at once. Which parse the syntactic head follows is chosen per
doc (``parse_source``): the doc's own parse (e.g. from a spaCy ``parser`` earlier in the
pipeline, or a gold parse), or the model's own. Results are written to
``doc._.srl_frames`` (and mirrored into ``doc.spans["srl"]``), see :mod:`spacy_lisa.frames`.

The torch model is in :mod:`spacy_lisa.models`; this module turns Docs and Examples into
the model's :class:`~spacy_lisa.models.types.LisaBatch`, gold into
:class:`~spacy_lisa.models.types.LisaTargets`, and decoded scores into frames.
"""

from __future__ import annotations

import os
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import islice
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, cast

import numpy as np
import srsly
from spacy import util
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, set_dropout_rate
from thinc.types import Ints1d, Ints2d

from ..alignment import one_to_one
from ..bio import OUTSIDE, VERB, spans_to_bio
from ..errors import Errors, Warnings
from ..frames import has_srl_annotation, install_extensions, set_srl_frames
from ..models.thinc_lisa import FRAME_DIMS
from ..models.types import LisaBatch, LisaOutput, LisaTargets, LossWeights
from .senses import ptb_upos

PREDICATE_SUFFIX = ":PREDICATE"
PARSE_SOURCES = ("auto", "model", "doc")
PREDICATE_SOURCES = ("model", "doc")
DECODINGS = ("viterbi", "greedy")
TEACHER_FORCING = ("gold", "predicted", "scheduled")
MODEL_PARSE_MODES = ("argmax", "soft")
DEFAULT_LOSS_WEIGHTS = {
    "role": 1.0,
    "tag": 1.0,
    "head": 1.0,
    "dep": 1.0,
    "sense": 1.0,
    "lemma": 1.0,
    "predicate_pos": 1.0,
}
# edit trees seen fewer times than this on training predicates are not lemma classes
MIN_LEMMA_TREE_FREQ = 2

default_model_config = """
[model]
@architectures = "spacy-lisa.LISA.v1"
width = 128
depth = 4
n_heads = 8
ffn_width = 256
dropout = 0.1
attention_dropout = 0.1
tag_layer = 1
parse_layer = 2
parse_dep_width = 128
parse_head_width = 64
role_width = 128
positions = "absolute"

[model.tok2vec]
@architectures = "spacy.Tok2Vec.v2"

[model.tok2vec.embed]
@architectures = "spacy.MultiHashEmbed.v2"
width = 96
attrs = ["NORM", "PREFIX", "SUFFIX", "SHAPE"]
rows = [5000, 1000, 2500, 2500]
include_static_vectors = false

[model.tok2vec.encode]
@architectures = "spacy.MaxoutWindowEncoder.v2"
width = 96
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
        "transition_weight": 0.5,
        "write_pos": False,
        "max_length": 128,
        "teacher_forcing": "gold",
        "gold_parse_prob": 0.5,
        "loss_weights": dict(DEFAULT_LOSS_WEIGHTS),
        "store_attention": False,
        "predicate_pos": None,
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
    bad = [k for k, v in weights.items() if not isinstance(v, (int, float)) or v < 0]
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
class _Group:
    """Docs of one predict call that share a parse mode (one model call)."""

    doc_indices: List[int]
    output: LisaOutput
    parse_source: str  # what is written to doc._.srl_parse_source


@dataclass
class LisaPrediction:
    """What :meth:`LisaSRL.predict` returns and :meth:`LisaSRL.set_annotations` reads."""

    groups: List[_Group]


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
      twice and cost recall (EWT dev, BENCHMARKS.md: 0.25-0.5 beat both 0 and 1).
    - ``write_pos``: set ``token.tag_`` from the joint POS/predicate classifier where empty.
    - ``max_length``: longest window (tokens) the encoder sees; longer sentences are split
      into windows (warning W001, once), attention and parse do not cross them.
    - ``teacher_forcing``: parse fed to the layers above the syntactic head in training:
      ``"gold"`` (the paper's default), ``"predicted"`` (the model's own argmax) or
      ``"scheduled"`` (gold with probability ``gold_parse_prob`` per sentence).
    - ``loss_weights``: ``role``, ``tag``, ``head`` (λ1) and ``dep`` (λ2) of eq. 7.
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
        transition_weight: float = 0.5,
        write_pos: bool = False,
        max_length: int = 128,
        teacher_forcing: str = "gold",
        gold_parse_prob: float = 0.5,
        loss_weights: Optional[Dict[str, float]] = None,
        store_attention: bool = False,
        spans_key: str = "srl",
        scorer: Optional[Callable] = None,
        predicate_pos: Optional[Sequence[str]] = None,
    ) -> None:
        install_extensions()
        self._owner_pid = os.getpid()
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
            "model_parse": _check_choice("model_parse", model_parse, MODEL_PARSE_MODES),
            "overwrite_parse": bool(overwrite_parse),
            "predicate_source": _check_choice(
                "predicate_source", predicate_source, PREDICATE_SOURCES
            ),
            "decoding": _check_choice("decoding", decoding, DECODINGS),
            "transition_weight": float(transition_weight),
            "write_pos": bool(write_pos),
            "max_length": int(max_length),
            "teacher_forcing": _check_choice("teacher_forcing", teacher_forcing, TEACHER_FORCING),
            "gold_parse_prob": float(gold_parse_prob),
            "loss_weights": _check_loss_weights(loss_weights),
            "store_attention": bool(store_attention),
            "spans_key": spans_key,
            "predicate_pos": None if predicate_pos is None else [str(p) for p in predicate_pos],
            # per-predicate classifiers (filled by initialize; empty in older pipelines)
            "senses": [],
            "sense_candidates": {},
            "lemma_trees": [],
            "pred_pos_labels": [],
        }
        self._warned_long = False
        self._warned_unsegmented = False
        self._lemma_trees: Optional[Any] = None  # EditTrees, built from cfg on first use

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
        return tuple(
            sorted({tag[2:] for tag in self.role_labels if tag != OUTSIDE and tag[2:] != VERB})
        )

    @property
    def label_data(self) -> Dict[str, Any]:
        """Everything :meth:`initialize` collects from the data; pass it back as
        ``labels`` (e.g. via ``spacy init labels``) to skip the collection."""
        return {
            "labels": self.cfg["labels"],
            "transitions": self.cfg["transitions"],
            "start": self.cfg["start"],
            "rolesets": self.cfg["rolesets"],
            "role_counts": self.cfg.get("role_counts") or {},
            "senses": self.cfg.get("senses") or [],
            "sense_candidates": self.cfg.get("sense_candidates") or {},
            "lemma_trees": self.cfg.get("lemma_trees") or [],
            "pred_pos_labels": self.cfg.get("pred_pos_labels") or [],
        }

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
            collected = self._collect_label_data(get_examples())
            if collected is None:
                raise ValueError(Errors.E021)
            labels = collected
        self.cfg["labels"] = {k: list(v) for k, v in labels["labels"].items()}
        self.cfg["transitions"] = labels.get("transitions")
        self.cfg["start"] = labels.get("start")
        self.cfg["rolesets"] = dict(labels.get("rolesets") or {})
        self.cfg["role_counts"] = dict(labels.get("role_counts") or {})
        self.cfg["senses"] = list(labels.get("senses") or [])
        self.cfg["sense_candidates"] = dict(labels.get("sense_candidates") or {})
        self.cfg["lemma_trees"] = [list(p) for p in labels.get("lemma_trees") or []]
        self.cfg["pred_pos_labels"] = list(labels.get("pred_pos_labels") or [])
        if propbank_frames is not None:
            from .senses import add_frame_file_candidates

            add_frame_file_candidates(self.cfg["sense_candidates"], propbank_frames)
        self._lemma_trees = None
        sample = [eg for eg in islice(get_examples(), 200) if has_srl_annotation(eg.reference)][:10]
        if not sample:
            raise ValueError(Errors.E021)
        self._set_label_dims()
        self.model.initialize(X=self._train_batch(sample))
        if self.cfg["role_counts"]:
            self._init_role_prior()
        self.cfg["model_dims"] = {
            name: self.model.get_dim(name)
            for name in ("nI", "n_tags", "n_deps", "n_roles", *FRAME_DIMS)
            if self.model.maybe_get_dim(name) is not None
        }

    def _collect_label_data(self, examples: Iterable[Example]) -> Optional[Dict[str, Any]]:
        from .decoding import estimate_transitions
        from .senses import FrameLabelCollector

        frame_labels = FrameLabelCollector(self.vocab.strings)
        tags: set = set()
        deps: set = set()
        roleset_counts: Dict[str, Counter] = defaultdict(Counter)
        sequences: List[List[str]] = []
        role_counts: Counter = Counter()
        n_annotated = 0
        for eg in examples:
            ref = eg.reference
            if not has_srl_annotation(ref):
                continue
            n_annotated += 1
            predicate_tokens = {f.predicate.start for f in ref._.srl_frames}
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
                if frame.roleset:
                    roleset_counts[frame.predicate.text.lower()][frame.roleset] += 1
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
            # the most frequent roleset per predicate form: used only by pipelines saved
            # before the sense classifier (kept for label_data compatibility)
            "rolesets": {w: c.most_common(1)[0][0] for w, c in roleset_counts.items()},
            **frame_labels.label_data(min_tree_freq=MIN_LEMMA_TREE_FREQ),
            # token counts per BIO role: the LAN decoder starts from their log prior
            "role_counts": dict(role_counts),
        }

    def _init_role_prior(self) -> None:
        """Give the role scorer the add-one log frequencies of the BIO roles, where it
        takes a label prior (the LAN decoder): without it, LAN's BiLSTM saturated into a
        constant "everything is O" output on EWT and never left it."""
        from ..models.thinc_lisa import set_role_prior

        counts = np.array([self.cfg["role_counts"].get(r, 0) for r in self.role_labels], "f")
        set_role_prior(self.model, np.log((counts + 1.0) / (counts + 1.0).sum()))

    def _set_label_dims(self) -> None:
        self.model.set_dim("n_tags", max(1, len(self.tag_labels)))
        self.model.set_dim("n_deps", max(1, len(self.dep_labels)))
        self.model.set_dim("n_roles", len(self.role_labels))
        for dim, key in (
            ("n_senses", "senses"),
            ("n_lemmas", "lemma_trees"),
            ("n_pred_pos", "pred_pos_labels"),
        ):
            n = len(self.cfg.get(key) or [])
            if n and self.model.maybe_get_dim(dim) in (None, n):
                self.model.set_dim(dim, n, force=True)
        self.model.attrs["predicate_tags"] = [
            i for i, t in enumerate(self.tag_labels) if t.endswith(PREDICATE_SUFFIX)
        ]

    def _ensure_model_built(self) -> None:
        """Rebuild the lazily built torch layer from the saved dims before loading
        weights (the serialisation trap of lazily built layers)."""
        from ..models.thinc_lisa import ensure_built

        dims = self.cfg.get("model_dims")
        if not dims:
            raise ValueError(Errors.E025)
        self._set_label_dims()
        for name, value in dims.items():
            if self.model.maybe_get_dim(name) is None:
                self.model.set_dim(name, value)
        ensure_built(self.model)

    # ---------------------------------------------------------------- windows/batches --
    def _windows(
        self, doc: Doc, reference: Optional[Doc] = None, *, segment: bool = False
    ) -> List[Tuple[int, int]]:
        """Encoder windows of ``doc``: its sentences (or the reference's when the
        tokenisations match), split at ``max_length``. A doc without sentence boundaries
        is one window in training; at prediction (``segment``) it is split by
        punctuation rules, with warning W003 once, so roles never run across sentences
        the user did not mark."""
        if len(doc) == 0:
            return []
        if doc.has_annotation("SENT_START"):
            bounds = [(s.start, s.end) for s in doc.sents]
        elif (
            reference is not None
            and reference.has_annotation("SENT_START")
            and [t.text for t in reference] == [t.text for t in doc]
        ):
            bounds = [(s.start, s.end) for s in reference.sents]
        elif segment:
            bounds = self._rule_sentences(doc)
        else:
            bounds = [(0, len(doc))]
        max_len = self.cfg["max_length"]
        windows: List[Tuple[int, int]] = []
        for start, end in bounds:
            if end - start > max_len and not self._warned_long:
                warnings.warn(
                    Warnings.W001.format(doc=doc.text[:40], length=end - start, max_length=max_len),
                    stacklevel=2,
                )
                self._warned_long = True
            for s in range(start, end, max_len):
                windows.append((s, min(s + max_len, end)))
        return windows

    def _rule_sentences(self, doc: Doc) -> List[Tuple[int, int]]:
        """Sentence bounds of a doc without them, by spaCy's punctuation rules (the
        ``sentencizer``'s), computed without writing them to the doc."""
        from spacy.pipeline import Sentencizer

        starts = [i for i, start in enumerate(Sentencizer().predict([doc])[0]) if start or i == 0]
        bounds = list(zip(starts, starts[1:] + [len(doc)], strict=True))
        if len(bounds) > 1 and not self._warned_unsegmented:
            warnings.warn(Warnings.W003.format(doc=doc.text[:40]), stacklevel=3)
            self._warned_unsegmented = True
        return bounds

    def _doc_heads(self, doc: Doc) -> Ints1d:
        return _ints1d([t.head.i for t in doc])

    def _resolve_parse_source(self, doc: Doc) -> str:
        source = self.cfg["parse_source"]
        if source == "auto":
            return "doc" if doc.has_annotation("DEP") else "model"
        if source == "doc" and not doc.has_annotation("DEP"):
            raise ValueError(Errors.E022.format(doc=doc.text[:40]))
        return source

    def _doc_predicates(self, doc: Doc) -> Ints1d:
        marked = doc._.srl_predicates
        if marked is None:
            raise ValueError(Errors.E023.format(doc=doc.text[:40]))
        return _ints1d(sorted(marked))

    # ---------------------------------------------------------------- predict ----------
    def predict(self, docs: Iterable[Doc]) -> LisaPrediction:
        """Run the model; touches no doc. Docs are grouped by the parse they use (one
        model call per group)."""
        if not self.is_initialized:
            raise ValueError(Errors.E020.format(name=self.name))
        _single_threaded_in_worker(self._owner_pid)
        docs = list(docs)
        by_source: Dict[str, List[int]] = defaultdict(list)
        for i, doc in enumerate(docs):
            if len(doc) == 0:
                continue
            by_source[self._resolve_parse_source(doc)].append(i)
        groups = []
        for source, indices in by_source.items():
            group_docs = [docs[i] for i in indices]
            predicates = None
            if self.cfg["predicate_source"] == "doc":
                predicates = [self._doc_predicates(d) for d in group_docs]
            if source == "doc":
                batch = LisaBatch(
                    docs=group_docs,
                    windows=[self._windows(d, segment=True) for d in group_docs],
                    heads=[self._doc_heads(d) for d in group_docs],
                    predicates=predicates,
                    parse_mode="given",
                )
            else:
                batch = LisaBatch(
                    docs=group_docs,
                    windows=[self._windows(d, segment=True) for d in group_docs],
                    predicates=predicates,
                    parse_mode=self.cfg["model_parse"],
                )
            output = self.model.predict(batch)
            if source == "model" and self.cfg["overwrite_parse"] and output.used_heads is not None:
                # decode the own parse as a tree, then let the model follow that tree, so
                # the tree written to the doc, the labels scored for it and the parse the
                # roles followed are one and the same
                batch = LisaBatch(
                    docs=group_docs,
                    windows=batch.windows,
                    heads=self._tree_heads(group_docs, output),
                    predicates=predicates,
                    parse_mode="given",
                )
                output = self.model.predict(batch)
            groups.append(_Group(indices, output, source))
        return LisaPrediction(groups)

    def _tree_heads(self, docs: List[Doc], output: LisaOutput) -> List[Ints1d]:
        """Absolute heads per doc of the maximum spanning tree of each window's parent
        scores (a well-formed tree per window, root = self-loop)."""
        from .decoding import mst_decode

        head_scores = self.model.ops.to_numpy(output.head_scores)
        heads = [np.arange(len(doc), dtype="i") for doc in docs]
        for s, (doc_i, w_start, w_end) in enumerate(output.windows):
            n = w_end - w_start
            heads[doc_i][w_start:w_end] = w_start + np.asarray(
                mst_decode(head_scores[s, :n, :n]), dtype="i"
            )
        return [_ints1d(h.tolist()) for h in heads]

    # ---------------------------------------------------------------- annotate ---------
    def set_annotations(self, docs: Iterable[Doc], scores: LisaPrediction) -> None:
        """Decode frames (Viterbi or greedy), the parse used, POS, and write them."""
        docs = list(docs)
        for doc in docs:
            if len(doc) == 0:
                set_srl_frames(doc, [], spans_key=self.cfg["spans_key"])
                doc._.srl_parse_source = None
        for group in scores.groups:
            self._annotate_group([docs[i] for i in group.doc_indices], group)

    def _annotate_group(self, docs: List[Doc], group: _Group) -> None:
        """Decode every frame of the group at once (log-softmax and Viterbi over one
        array), then write frames, the parse used, POS and attention with array slices
        per window: no per-token Python in this path."""
        # imported here: spaCy imports every factory module on Language init, keep it light
        from .decoding import decode_frames

        ops = self.model.ops
        out = group.output
        tags = self.tag_labels
        deps = self.dep_labels
        tag_ids = ops.to_numpy(out.tag_scores).argmax(axis=-1) if len(tags) else None
        used_heads = ops.to_numpy(out.used_heads) if out.used_heads is not None else None
        has_syntax = used_heads is not None
        dep_ids = ops.to_numpy(out.dep_scores).argmax(axis=-1) if deps else None
        frames_idx = ops.to_numpy(out.frames).astype(np.int64).reshape(-1, 2)
        attention = ops.to_numpy(out.label_attention) if out.label_attention is not None else None
        frame_labels = self._frame_label_decoder(out)
        # frames: every frame of the group decoded at once
        win_doc = [w[0] for w in out.windows]
        win_bounds = np.asarray([w[1:] for w in out.windows], dtype=np.int64).reshape(-1, 2)
        frame_win = frames_idx[:, 0]
        decoded: List[Any] = []
        if len(frames_idx):
            decoded = decode_frames(
                ops.to_numpy(out.role_scores),
                frames_idx[:, 1],
                win_bounds[frame_win, 1] - win_bounds[frame_win, 0],
                self.role_labels,
                offsets=win_bounds[frame_win, 0],
                decoding=self.cfg["decoding"],
                transitions=self.cfg["transitions"],
                start=self.cfg["start"],
                transition_weight=self.cfg.get("transition_weight", 0.5),
            )
        frames_by_doc: Dict[int, List[Dict[str, Any]]] = defaultdict(list)
        for f, (s, (predicate, frame_roles)) in enumerate(
            zip(frame_win.tolist(), decoded, strict=True)
        ):
            doc_i = win_doc[s]
            lemma, roleset, upos = frame_labels(docs[doc_i], f, predicate)
            frames_by_doc[doc_i].append(
                {
                    "predicate": list(predicate),
                    "roleset": roleset,
                    "lemma": lemma,
                    "roles": frame_roles,
                    "_pos": upos,
                }
            )
        # per window: array slices
        pos_names = np.array([t.removesuffix(PREDICATE_SUFFIX) for t in tags] or [""], dtype=object)
        dep_names = np.array(list(deps) or [""], dtype=object)
        store_attention = attention is not None and self.cfg["store_attention"]
        token_offset = 0
        attn_by_doc: Dict[int, List[List[float]]] = {}
        pos_by_doc: Dict[int, List[str]] = {}
        parse_by_doc: Dict[int, Any] = {}
        for s, (doc_i, w_start, w_end) in enumerate(out.windows):
            doc = docs[doc_i]
            length = w_end - w_start
            if doc_i not in pos_by_doc:  # the doc's first window
                pos_by_doc[doc_i] = [""] * len(doc)
                # a model without a syntactic head (SA, parse_layer = 0) follows no parse
                parse_by_doc[doc_i] = (
                    {"heads": list(range(len(doc))), "deps": [""] * len(doc)}
                    if has_syntax
                    else None
                )
            parse = parse_by_doc[doc_i]
            if parse is not None and used_heads is not None:
                heads = w_start + used_heads[s, :length].astype(np.int64)
                parse["heads"][w_start:w_end] = heads.tolist()
                if dep_ids is not None:
                    parse["deps"][w_start:w_end] = dep_names[dep_ids[s, :length]].tolist()
            if parse is not None and group.parse_source == "doc":
                parse["heads"][w_start:w_end] = [t.head.i for t in doc[w_start:w_end]]
                parse["deps"][w_start:w_end] = [t.dep_ for t in doc[w_start:w_end]]
            if tag_ids is not None:
                window_tags = tag_ids[token_offset : token_offset + length]
                pos_by_doc[doc_i][w_start:w_end] = pos_names[window_tags].tolist()
            if store_attention:
                assert attention is not None
                rows = attn_by_doc.setdefault(
                    doc_i, [[0.0] * len(doc) for _ in range(attention.shape[1])]
                )
                for h, values in enumerate(attention[s, :, :length].astype(np.float64).tolist()):
                    rows[h][w_start:w_end] = values
            token_offset += length
        keep_pos = self.cfg.get("predicate_pos")
        for doc_i, doc in enumerate(docs):
            pos = pos_by_doc.get(doc_i)
            if pos is not None:
                doc._.srl_pos = pos
                doc._.srl_parse = parse_by_doc[doc_i]
                if self.cfg["write_pos"] and tag_ids is not None:
                    for token, tag in zip(doc, pos, strict=True):
                        if tag and not token.tag_:
                            token.tag_ = tag
            frames = []
            for frame in frames_by_doc.get(doc_i, []):
                upos = frame.pop("_pos") or ptb_upos(
                    (pos or [""] * len(doc))[frame["predicate"][0]]
                )
                if keep_pos is None or upos in keep_pos:
                    frames.append(frame)
            set_srl_frames(doc, frames, spans_key=self.cfg["spans_key"])
            doc._.srl_parse_source = group.parse_source if has_syntax else None
            if doc_i in attn_by_doc:
                names = [f"head_{h}" for h in range(len(attn_by_doc[doc_i]))]
                doc._.srl_label_attention = {"heads": names, "weights": attn_by_doc[doc_i]}
            if self.cfg["overwrite_parse"] and group.parse_source == "model" and doc._.srl_parse:
                _write_parse(doc, doc._.srl_parse["heads"], doc._.srl_parse["deps"])

    def _frame_label_decoder(
        self, out: LisaOutput
    ) -> Callable[[Doc, int, Tuple[int, int]], Tuple[Optional[str], Optional[str], str]]:
        """A function (doc, frame index, predicate span) -> (lemma, roleset, UPOS or "")
        for the frames of one model output."""
        from .senses import SenseDecoder, frame_lemma

        ops = self.model.ops
        sense_scores = None if out.sense_scores is None else ops.to_numpy(out.sense_scores)
        lemma_scores = None if out.lemma_scores is None else ops.to_numpy(out.lemma_scores)
        pos_scores = None if out.pred_pos_scores is None else ops.to_numpy(out.pred_pos_scores)
        pos_labels = self.cfg.get("pred_pos_labels") or []
        trees = self._get_lemma_trees()
        senses = self.cfg.get("senses") or []
        decoder = SenseDecoder(senses, self.cfg.get("sense_candidates") or {}) if senses else None
        old_rolesets = self.cfg.get("rolesets") or {}

        def labels(
            doc: Doc, f: int, predicate: Tuple[int, int]
        ) -> Tuple[Optional[str], Optional[str], str]:
            start, end = predicate
            scores_f = None if lemma_scores is None else lemma_scores[f]
            lemma = frame_lemma(doc, start, scores_f, trees)
            upos = ""
            if doc.has_annotation("POS"):
                upos = doc[start].pos_
            elif pos_scores is not None and pos_labels:
                upos = pos_labels[int(pos_scores[f].argmax())]
            if decoder is not None:
                if not decoder.has_candidates(lemma) and doc[start].lemma_:
                    # the model's lemma has no rolesets: try the doc lemmatiser's
                    doc_lemma = doc[start].lemma_.lower()
                    if decoder.has_candidates(doc_lemma):
                        lemma = doc_lemma
                scores = None if sense_scores is None else sense_scores[f]
                return lemma, decoder.decode(scores, lemma), upos
            # pipelines saved before the sense classifier: the most frequent roleset of
            # the predicate's form in training (keyed by the whole predicate's text)
            roleset = old_rolesets.get(doc[start:end].text.lower()) or old_rolesets.get(
                doc[start].lower_
            )
            return (doc[start].lemma_ or None), roleset, upos

        return labels

    # ---------------------------------------------------------------- training ---------
    def _alignment(self, eg: Example) -> Tuple[np.ndarray, np.ndarray]:
        """One-to-one token maps predicted→reference and reference→predicted (-1 where
        a token has no one-to-one partner: its gold is masked, not guessed); the same
        map the scorer uses (:mod:`spacy_lisa.alignment`)."""
        return one_to_one(eg)

    def _train_batch(self, examples: Sequence[Example]) -> LisaBatch:
        docs = [eg.predicted for eg in examples]
        windows, heads, predicates = [], [], []
        any_gold_parse = False
        for eg in examples:
            p2r, r2p = self._alignment(eg)
            ref = eg.reference
            windows.append(self._windows(eg.predicted, ref))
            gold_heads = np.full(len(eg.predicted), -1, dtype="i")
            if ref.has_annotation("DEP"):
                any_gold_parse = True
                for i, j in enumerate(p2r):
                    if j >= 0:
                        gold_heads[i] = r2p[ref[int(j)].head.i]
            heads.append(cast(Ints1d, gold_heads))
            preds = sorted(
                {
                    int(r2p[f.predicate.start])
                    for f in ref._.srl_frames
                    if r2p[f.predicate.start] >= 0
                }
            )
            predicates.append(_ints1d(preds))
        mode = {"gold": "given", "predicted": "argmax", "scheduled": "scheduled"}[
            self.cfg["teacher_forcing"]
        ]
        if not any_gold_parse:
            mode = "argmax"
        return LisaBatch(
            docs=docs,
            windows=windows,
            heads=heads,
            predicates=predicates,
            parse_mode=mode,
            gold_parse_prob=self.cfg["gold_parse_prob"],
        )

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
        role_index = {label: i for i, label in enumerate(self.role_labels)}
        tag_index = {label: i for i, label in enumerate(self.tag_labels)}
        dep_index = {label: i for i, label in enumerate(self.dep_labels)}
        n_windows = len(output.windows)
        max_len = max((e - s for _, s, e in output.windows), default=0)
        tags: List[int] = []
        heads = np.full((n_windows, max_len), -1, dtype="i")
        deps = np.full((n_windows, max_len), -1, dtype="i")
        frame_rows: Dict[Tuple[int, int], np.ndarray] = {}
        gold_frames: Dict[Tuple[int, int], Any] = {}  # (window, offset) -> gold SRLFrame
        aligned = [self._alignment(eg) for eg in examples]
        for s, (doc_i, w_start, w_end) in enumerate(output.windows):
            eg = examples[doc_i]
            ref = eg.reference
            p2r, r2p = aligned[doc_i]
            gold_preds = {int(r2p[f.predicate.start]): f for f in ref._.srl_frames}
            has_dep = ref.has_annotation("DEP")
            for t in range(w_start, w_end):
                j = int(p2r[t])
                if j < 0:
                    tags.append(-1)
                    continue
                token = ref[j]
                label = token.tag_ or "X"
                if t in gold_preds:
                    label += PREDICATE_SUFFIX
                tags.append(tag_index.get(label, -1))
                if has_dep:
                    h = int(r2p[token.head.i])
                    if w_start <= h < w_end:
                        heads[s, t - w_start] = h - w_start
                        deps[s, t - w_start] = dep_index.get(token.dep_, -1)
            # role targets of the frames whose predicate lies in this window
            for t, frame in gold_preds.items():
                if not w_start <= t < w_end:
                    continue
                gold_frames[(s, t - w_start)] = frame
                row = np.full(max_len, -1, dtype="i")
                spans = []
                ok = True
                for r in frame.roles:
                    b, e = int(r2p[r.start]), int(r2p[r.end - 1])
                    if b < 0 or e < 0:
                        ok = False  # role boundary not aligned: mask this frame
                        break
                    spans.append((b - w_start, e + 1 - w_start, r.label_))
                if ok:
                    p_end = int(r2p[frame.predicate.end - 1])
                    pred = (t - w_start, (p_end if p_end >= t else t) + 1 - w_start)
                    bio, _ = spans_to_bio(w_end - w_start, spans, predicate=pred)
                    row[: w_end - w_start] = [role_index.get(tag, -1) for tag in bio]
                frame_rows[(s, t - w_start)] = row
        frames_idx = self.model.ops.to_numpy(output.frames)
        roles = np.full((len(frames_idx), max_len), -1, dtype="i")
        for f, (s, pos) in enumerate(frames_idx):
            frame_row = frame_rows.get((int(s), int(pos)))
            if frame_row is not None:
                roles[f] = frame_row
        ops = self.model.ops
        senses, lemmas, pred_pos = self._frame_targets(frames_idx, gold_frames)
        return LisaTargets(
            tags=ops.asarray1i(_ints1d(tags)),
            heads=ops.asarray2i(cast(Ints2d, heads)),
            deps=ops.asarray2i(cast(Ints2d, deps)),
            roles=ops.asarray2i(cast(Ints2d, roles)),
            senses=None if senses is None else ops.asarray1i(senses),
            lemmas=None if lemmas is None else ops.asarray1i(lemmas),
            pred_pos=None if pred_pos is None else ops.asarray1i(pred_pos),
        )

    def _frame_targets(
        self, frames_idx: np.ndarray, gold_frames: Dict[Tuple[int, int], Any]
    ) -> Tuple[Optional[Ints1d], Optional[Ints1d], Optional[Ints1d]]:
        """Roleset, lemma edit-tree and UPOS class of each scored frame's gold frame
        (-1: no gold frame there, or a class the model does not have)."""
        from .senses import gold_lemma

        sense_index = {s: i for i, s in enumerate(self.cfg.get("senses") or [])}
        pos_index = {p: i for i, p in enumerate(self.cfg.get("pred_pos_labels") or [])}
        trees = self._get_lemma_trees()
        senses, lemmas, pos = [], [], []
        for s, p in frames_idx:
            frame = gold_frames.get((int(s), int(p)))
            if frame is None:
                senses.append(-1)
                lemmas.append(-1)
                pos.append(-1)
                continue
            first = frame.predicate[0]
            senses.append(sense_index.get(frame.roleset or "", -1))
            lemmas.append(trees.target(first.text, gold_lemma(frame)) if trees else -1)
            pos.append(pos_index.get(first.pos_, -1))
        return (
            _ints1d(senses) if sense_index else None,
            _ints1d(lemmas) if trees else None,
            _ints1d(pos) if pos_index else None,
        )

    def _get_lemma_trees(self) -> Optional[Any]:
        """The lemma classes (edit trees), rebuilt from cfg once; None without them."""
        pairs = self.cfg.get("lemma_trees") or []
        if not pairs:
            return None
        if self._lemma_trees is None or len(self._lemma_trees) != len(pairs):
            from .senses import LemmaTrees

            self._lemma_trees = LemmaTrees(self.vocab.strings, pairs)
        return self._lemma_trees

    # ---------------------------------------------------------------- serialisation ----
    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> LisaSRL:
        self._validate_serialization_attrs()
        msg = srsly.msgpack_loads(bytes_data)
        if "cfg" not in exclude and "cfg" in msg:
            self.cfg.update(srsly.json_loads(msg["cfg"]))
        if "vocab" not in exclude and "vocab" in msg:
            self.vocab.from_bytes(msg["vocab"], exclude=exclude)
        if "model" not in exclude and "model" in msg:
            self._ensure_model_built()
            self.model.from_bytes(msg["model"])
        return self

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> LisaSRL:
        self._validate_serialization_attrs()

        def load_model(p: Any) -> None:
            self._ensure_model_built()
            with open(p, "rb") as file_:
                self.model.from_bytes(file_.read())

        deserialize: Dict[str, Callable[[Any], Any]] = {
            "cfg": lambda p: self.cfg.update(srsly.read_json(p)),
            "vocab": lambda p: self.vocab.from_disk(p, exclude=exclude),
            "model": load_model,
        }
        util.from_disk(path, deserialize, exclude)
        return self


def _ints1d(values: Sequence[int]) -> Ints1d:
    return cast(Ints1d, np.asarray(values, dtype="i"))


def _write_parse(doc: Doc, heads: List[int], deps: List[str]) -> None:
    """Write absolute ``heads`` / ``deps`` onto the doc's tokens (a well-formed tree per
    window, as produced by MST decoding)."""
    from spacy.attrs import DEP, HEAD

    array = np.zeros((len(doc), 2), dtype="uint64")
    for i, (h, d) in enumerate(zip(heads, deps, strict=True)):
        array[i, 0] = np.uint64(np.int64(h - i).astype("uint64"))
        array[i, 1] = doc.vocab.strings.add(d or "dep")
    doc.from_array([HEAD, DEP], cast(Any, array))
