"""The ``lisa_srl`` component's options, declared once.

:class:`SRLOptions` holds every option of the factory with its default and its
validation. The factory's ``default_config`` is written from it, the factory's signature
is made from its fields (:func:`~spacy_lisa.signatures.with_fields_as_parameters`), the
component keeps one (``LisaSRL.options``) and every helper
(batching, targets, annotation) reads its options from that object.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Dict, Iterable, Optional, Tuple

from thinc.api import ConfigValidationError

from ..errors import Errors
from ..models.types import OWN_PARSE_MODES, PARSE_SOURCES, TEACHER_FORCING_MODES, LossWeights

PREDICATE_SOURCES: Tuple[str, ...] = ("model", "doc")
DECODINGS: Tuple[str, ...] = ("viterbi", "greedy")
SENSE_LOSSES: Tuple[str, ...] = ("all", "candidates")
TEACHER_FORCING: Tuple[str, ...] = tuple(TEACHER_FORCING_MODES)
# the predicate types predicate_pos can keep: Universal Dependencies' UPOS tags, which
# spaCy's token.pos_ and the model's own predicate UPOS use
UPOS_TAGS: Tuple[str, ...] = (
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM",
    "PART", "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X",
)  # fmt: skip


@dataclass(frozen=True)
class SRLOptions:
    """The options of a ``lisa_srl`` component (everything in its config but the model
    and the scorer). Construct it with keywords; an unknown value raises ValueError.

    - ``parse_source``: the parse the syntactic head follows at prediction: ``"auto"``
      (the doc's own when ``doc.has_annotation("DEP")``, else the model's), ``"model"``,
      or ``"doc"`` (error E022 if a doc has none).
    - ``model_parse``: how the model's own parse feeds the later layers: ``"argmax"``
      (one-hot on its best head, as in teacher-forced training) or ``"soft"``.
    - ``overwrite_parse``: write the model's own parse to ``token.head`` / ``token.dep_``,
      decoded as a maximum spanning tree.
    - ``predicate_source``: ``"model"`` (predicted) or ``"doc"`` (``doc._.srl_predicates``,
      token indices, Tokens or Spans set before the component runs).
    - ``decoding``: ``"viterbi"`` (BIO constraints + transition scores from the training
      data) or ``"greedy"``.
    - ``transition_weight``: scale of the transition log-probabilities against the
      model's per-token log-probabilities in Viterbi decoding: the per-token scores
      already carry each label's prior, so full-weight transitions count it twice and
      cost recall (chosen on training sentences: BENCHMARKS.md, Decoding).
    - ``unique_core_roles``: no frame decoded with a numbered argument (ARG0-ARG5, ARGA)
      in two spans, as PropBank annotates them (BENCHMARKS.md, Decoding).
    - ``write_pos``: set ``token.tag_`` from the joint POS/predicate classifier where empty.
    - ``max_length``: the longest window (tokens) the encoder sees; longer sentences are
      split into windows (warning W001, once).
    - ``teacher_forcing``: the parse the layers above the syntactic head see in
      training: ``"gold"`` (the paper's) or ``"predicted"`` (the model's own argmax).
    - ``loss_weights``: the weights of the loss terms (:class:`~..models.types.LossWeights`).
    - ``store_attention``: keep the Label Attention Layer's per-head attention on
      ``doc._.srl_label_attention`` (a model with a LAL top layer only).
    - ``spans_key``: the ``doc.spans`` key the frames are mirrored to.
    - ``predicate_pos``: keep only frames whose predicate has one of these UPOS tags
      (:data:`UPOS_TAGS`; another value is error E042; None: all).
    - ``sense_loss``: the roleset softmax in training runs over ``"all"`` rolesets seen
      in training, or over the ``"candidates"`` of the gold lemma, the set decoding
      chooses from (BENCHMARKS.md, Senses).
    - ``score_temperature``: the temperature (> 0) of the role logits behind each role
      span's score (``span._.srl_score``): the span's probability under the model's
      per-token label distributions at that temperature (docs/usage.md, Confidence).
    - ``score_calibration``: ``(a, b)`` of the map from a span's lattice marginal ``p`` to
      its score, ``sigmoid(a * logit(p) + b)`` (Platt scaling; ``(1, 0)``: the marginal
      itself), fitted on held-out documents by ``scripts/calibrate_scores.py``.
    - ``min_score``: role spans scoring below it (0 to 1) are not written (0: all are).
    """

    parse_source: str = "auto"
    model_parse: str = "argmax"
    overwrite_parse: bool = False
    predicate_source: str = "model"
    decoding: str = "viterbi"
    transition_weight: float = 0.25
    unique_core_roles: bool = True
    write_pos: bool = False
    max_length: int = 128
    teacher_forcing: str = "gold"
    loss_weights: LossWeights = field(default_factory=LossWeights)
    store_attention: bool = False
    spans_key: str = "srl"
    predicate_pos: Optional[Tuple[str, ...]] = None
    sense_loss: str = "candidates"
    score_temperature: float = 1.0
    score_calibration: Tuple[float, float] = (1.0, 0.0)
    min_score: float = 0.0

    def __post_init__(self) -> None:
        if self.teacher_forcing == "scheduled":  # removed: a config error spacy train prints
            raise ConfigValidationError(title=Errors.E050.format(value="scheduled"), desc="")
        for name, choices in (
            ("parse_source", PARSE_SOURCES),
            ("model_parse", OWN_PARSE_MODES),
            ("predicate_source", PREDICATE_SOURCES),
            ("decoding", DECODINGS),
            ("teacher_forcing", TEACHER_FORCING),
            ("sense_loss", SENSE_LOSSES),
        ):
            self._check(name, getattr(self, name) in choices, ", ".join(choices), choices=True)
        length = self.max_length
        self._check("max_length", _is_int(length) and length >= 1, "an integer >= 1")
        self._check("transition_weight", _is_number(self.transition_weight), "a number")
        temperature = self.score_temperature
        self._check(
            "score_temperature", _is_number(temperature) and temperature > 0, "a number > 0"
        )
        min_score = self.min_score
        self._check(
            "min_score", _is_number(min_score) and 0 <= min_score <= 1, "a number in [0, 1]"
        )
        weights = self.loss_weights
        if not isinstance(weights, LossWeights):
            object.__setattr__(self, "loss_weights", _loss_weights(weights))
        if self.predicate_pos is not None:
            object.__setattr__(self, "predicate_pos", check_predicate_pos(self.predicate_pos))
        for name in ("overwrite_parse", "unique_core_roles", "write_pos", "store_attention"):
            object.__setattr__(self, name, bool(getattr(self, name)))
        pair = self.score_calibration
        ok = isinstance(pair, (list, tuple)) and len(pair) == 2 and all(map(_is_number, pair))
        self._check("score_calibration", ok, "two numbers [a, b]")
        object.__setattr__(self, "score_calibration", tuple(float(v) for v in pair))
        for name in ("transition_weight", "score_temperature", "min_score"):
            object.__setattr__(self, name, float(getattr(self, name)))

    def _check(self, option: str, ok: bool, constraint: str, *, choices: bool = False) -> None:
        if not ok:
            value = getattr(self, option)
            if choices:
                raise ValueError(Errors.E024.format(value=value, option=option, choices=constraint))
            raise ValueError(Errors.E031.format(option=option, value=value, constraint=constraint))

    def replace(self, **changes: Any) -> SRLOptions:
        """A copy with ``changes``, validated."""
        return replace(self, **changes)

    def to_config(self) -> Dict[str, Any]:
        """The options as a config block holds them (JSON values)."""
        values = asdict(self)
        if self.predicate_pos is not None:
            values["predicate_pos"] = list(self.predicate_pos)
        values["score_calibration"] = list(self.score_calibration)
        return values


OPTION_NAMES: Tuple[str, ...] = tuple(f.name for f in fields(SRLOptions))


def check_predicate_pos(values: Iterable[Any]) -> Tuple[str, ...]:
    """``predicate_pos`` as the options hold it: a tuple of UPOS tags; ValueError E042
    names the first value that is none (a typo would otherwise drop every frame)."""
    if isinstance(values, (str, bytes)):  # "VERB" would read as V, E, R, B
        values = [values]
    tags = tuple(str(value) for value in values)
    for tag in tags:
        if tag not in UPOS_TAGS:
            raise ValueError(Errors.E042.format(value=tag, choices=", ".join(UPOS_TAGS)))
    return tags


def _loss_weights(weights: Any) -> LossWeights:
    """``loss_weights`` from a config block: known keys, numbers >= 0 (teacher <= 1);
    missing keys keep their defaults."""
    if not isinstance(weights, dict):
        raise ValueError(Errors.E027.format(keys=repr(weights), choices=_weight_names()))
    known = {f.name for f in fields(LossWeights)}
    unknown = sorted(set(weights) - known)
    bad = [
        key
        for key, value in weights.items()
        if not _is_number(value) or value < 0 or (key == "teacher" and value > 1)
    ]
    if unknown or bad:
        raise ValueError(Errors.E027.format(keys=unknown or bad, choices=_weight_names()))
    return LossWeights(**{key: float(value) for key, value in weights.items()})


def _weight_names() -> str:
    return ", ".join(f.name for f in fields(LossWeights))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


__all__ = ["OPTION_NAMES", "UPOS_TAGS", "SRLOptions", "check_predicate_pos"]
