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

import json
import os
from collections import Counter
from dataclasses import asdict
from itertools import islice
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Optional,
    Sequence,
    Tuple,
)

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
from ..models.types import LisaBatch, LisaOutput, LisaSizes, LisaTargets
from ..signatures import with_fields_as_parameters
from .annotate import Annotator
from .batching import LisaPrediction, Windower, predict_groups, train_batch
from .component_cfg import ComponentCfg
from .labels import PREDICATE_SUFFIX as PREDICATE_SUFFIX
from .labels import (
    collect_label_data,
    empty_label_data,
    ensure_model_built,
    frame_label_tables,
    init_role_prior,
    label_data,
    role_names,
    set_label_dims,
    store_label_data,
)
from .options import SRLOptions
from .targets import gold_targets

if TYPE_CHECKING:
    from .labels import FrameLabelTables

default_model_config = """
[model]
@architectures = "spacy-lisa.LISA.v1"
"""
# the encoder sizes are the architecture's defaults (LisaSizes, models/types.py), written
# out so that the filled config shows them; the tok2vec is configs/lisa_cpu.cfg's,
# without its static vectors (they need a vectors table: vectors = "path" in
# [model.tok2vec.embed], as the config does)
default_model_config += "".join(
    f"{key} = {json.dumps(value)}\n" for key, value in asdict(LisaSizes()).items()
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
        **SRLOptions().to_config(),
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
@with_fields_as_parameters(SRLOptions, defaults=False)
def make_lisa_srl(
    nlp: Language,
    name: str,
    model: Model[LisaBatch, LisaOutput],
    *,
    scorer: Optional[Callable],
    gold_parse_prob: Optional[float] = None,
    **options: Any,
) -> LisaSRL:
    """Create a ``lisa_srl`` component: ``options`` are :class:`SRLOptions`' fields.
    ``gold_parse_prob``, the probability of removed scheduled teacher forcing (E050),
    is read and ignored, so that configs saved with it load."""
    return LisaSRL(nlp.vocab, model, name, scorer=scorer, **options)


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


def _option(name: str) -> property:
    """An attribute that reads and sets one option (validated on setting)."""

    def get(self: LisaSRL) -> Any:
        return getattr(self.options, name)

    def set_(self: LisaSRL, value: Any) -> None:
        self.options = self.options.replace(**{name: value})

    return property(get, set_, doc=f"The ``{name}`` option (see :class:`SRLOptions`).")


class LisaSRL(TrainablePipe):
    """Semantic role labeller with a syntactically-informed self-attention encoder.

    The options (keyword-only) are :class:`~.options.SRLOptions`' fields; they live in
    ``self.options``. They come from the pipeline's config (config.cfg, with any
    ``spacy.load(config=...)`` overrides), as the factory's arguments. ``self.cfg`` holds
    what :meth:`initialize` learns from the data, saved with the pipeline, and reads and
    sets the options under their names, as spaCy's components' cfg does
    (:class:`~.component_cfg.ComponentCfg`). An option can be changed on a loaded
    pipeline there, or as the attributes ``parse_source``, ``predicate_source``,
    ``decoding`` and ``overwrite_parse`` (``spacy-lisa evaluate`` does); to keep such a
    change, change the config.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model[LisaBatch, LisaOutput],
        name: str = "lisa_srl",
        *,
        scorer: Optional[Callable] = None,
        **options: Any,
    ) -> None:
        install_extensions()
        self._owner_pid = os.getpid()
        # gold the training targets had to mask, by reason (see targets.gold_targets)
        self.masked_gold: Counter = Counter()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.options = SRLOptions(**options)
        self.cfg = ComponentCfg(self, {**empty_label_data(), "model_dims": None})
        self._windower = Windower()  # remembers its warnings: W001 and W003 once
        self._tables: Optional[FrameLabelTables] = None  # built from cfg on first use

    parse_source = _option("parse_source")
    predicate_source = _option("predicate_source")
    decoding = _option("decoding")
    overwrite_parse = _option("overwrite_parse")

    # ---------------------------------------------------------------- labels -----------
    @property
    def role_labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"]["roles"])

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
        raise NotImplementedError(Errors.E032)

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
        """The model's calls on ``docs``, run when :meth:`set_annotations` reads them;
        touches no doc. Docs are grouped by the parse they use and cut into calls of
        bounded size (a long doc into several)."""
        if not self.is_initialized:
            raise ValueError(Errors.E020.format(name=self.name))
        _single_threaded_in_worker(self._owner_pid)
        docs = list(docs)
        if docs:
            self._check_vocab_vectors(docs[0].vocab)
        return predict_groups(docs, self.model, self.options, self._windower)

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
                set_srl_frames(doc, [], spans_key=self.options.spans_key)
                doc._.srl_parse_source = None
        annotator = Annotator(
            docs, self.model.ops, self.cfg, self.options, self._frame_label_tables()
        )
        for group in scores:
            annotator.add(group)
            del group  # its scores go before the next call runs

    # ---------------------------------------------------------------- training ---------
    def _train_batch(self, examples: Sequence[Example]) -> LisaBatch:
        return train_batch(examples, self.options, self._windower)

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
        return lisa_loss(self.model.ops, scores, targets, self.options.loss_weights)

    def _targets(self, examples: List[Example], output: LisaOutput) -> LisaTargets:
        tables = self._frame_label_tables()
        return gold_targets(
            examples, output, self.model.ops, self.cfg, self.options, tables, self.masked_gold
        )

    def _frame_label_tables(self) -> FrameLabelTables:
        """Lemma classes and sense decoder, built from cfg once (see FrameLabelTables)."""
        self._tables = frame_label_tables(self.cfg, self.vocab.strings, self._tables)
        return self._tables

    # ---------------------------------------------------------------- serialisation ----
    # cfg's learned data is saved; the options are the config's (config.cfg)
    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        self._validate_serialization_attrs()
        serialize: Dict[str, Callable[[], Any]] = {
            "cfg": lambda: srsly.json_dumps(self.cfg),
            "vocab": lambda: self.vocab.to_bytes(exclude=exclude),
            "model": self.model.to_bytes,
        }
        return util.to_bytes(serialize, exclude)

    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        self._validate_serialization_attrs()
        serialize: Dict[str, Callable[[Any], Any]] = {
            "cfg": lambda p: srsly.write_json(p, self.cfg),
            "vocab": lambda p: self.vocab.to_disk(p, exclude=exclude),
            "model": lambda p: self.model.to_disk(p),
        }
        util.to_disk(path, serialize, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> LisaSRL:
        self._validate_serialization_attrs()
        msg = srsly.msgpack_loads(bytes_data)
        if "cfg" not in exclude and "cfg" in msg:
            self.cfg.load(srsly.json_loads(msg["cfg"]))
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
            "cfg": lambda p: self.cfg.load(srsly.read_json(p)),
            "vocab": lambda p: self.vocab.from_disk(p, exclude=exclude),
            "model": load_model,
        }
        util.from_disk(path, deserialize, exclude)
        return self
