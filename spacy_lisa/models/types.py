"""The contract between the ``lisa_srl`` component and the ``spacy-lisa.LISA.v1`` model.

The component turns Docs into a :class:`LisaBatch` (which tokens form one encoder
window, which parse to inject, which predicates to score); the Thinc model returns a
:class:`LisaOutput` of *logits*; the component computes losses and their gradients
(softmax minus one-hot, in ``model.ops`` arrays) and hands back a :class:`LisaOutput`
whose score arrays hold those gradients.

Index conventions
-----------------
- A *window* is a run of tokens ``[start, end)`` of one doc that the encoder sees as
  one sequence (a sentence, or a piece of a long sentence). Windows of a doc cover the
  doc in order, without overlap. ``S`` windows in a batch, padded to ``T`` tokens.
- Rows of ``tag_scores`` are the batch's tokens in doc order, then token order: the
  concatenation of all windows, unpadded (``N`` = total tokens).
- ``head_scores[s, i, j]`` scores "the head of token i of window s is token j of the
  same window"; ``j == i`` means root (self-loop). Heads outside the window are treated
  as root.
- Masked positions (padding, or columns beyond the window's length) hold
  :data:`MASK_VALUE` so a softmax over them gives ~0 and never NaN.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from spacy.tokens import Doc
from thinc.types import Floats2d, Floats3d, Ints1d, Ints2d

from ..errors import Errors

# what masked logits hold (padding, columns beyond a window, excluded classes): large
# enough that exp() underflows to 0, small enough for float16
MASK_VALUE = -1e4
# positions: sinusoids added to the input, or FLAT relative attention in every layer
POSITIONS: Tuple[str, ...] = ("absolute", "relative")
SENSE_HEADS: Tuple[str, ...] = ("shared", "separate", "separate_context")


@dataclass(frozen=True)
class LisaSizes:
    """The LISA encoder's sizes and choices, with their defaults and validation declared
    once: both architectures (``spacy-lisa.LISA.v1``, ``spacy-lisa.PredicateAwareLISA.v1``)
    take them as keyword arguments and the torch module takes an instance, so
    ``nlp.add_pipe("lisa_srl")`` and a config that leaves a key out build the same model.
    The defaults are the encoder of ``configs/lisa_cpu.cfg`` (BENCHMARKS.md, Current
    models).

    width / depth / n_heads / ffn_width: the self-attention encoder (J = depth layers).
    dropout: on the input, feed-forward, residual and the MLPs; attention_dropout: on
    attention probabilities. tag_layer r and parse_layer p (1-based, r < p <= depth): the
    layers feeding the joint POS/predicate classifier and holding the syntactic head;
    parse_layer = 0 removes the syntactic head (the paper's SA baseline). parse_dep_width
    / parse_head_width: sizes of Q_parse (dependent) and K_parse (parent). role_width:
    predicate/role (and POS/predicate) representation size of the default bilinear role
    scorer. positions: "absolute" (sinusoids added to the input) or "relative" (FLAT
    relative attention in every layer). sense_head: below."""

    width: int = 192
    depth: int = 4
    n_heads: int = 8
    ffn_width: int = 384
    dropout: float = 0.1
    attention_dropout: float = 0.1
    tag_layer: int = 1
    parse_layer: int = 2
    parse_dep_width: int = 128
    parse_head_width: int = 64
    role_width: int = 128
    positions: str = "absolute"
    # where the roleset classifier sits: "shared", on the lemma/UPOS classifiers' MLP;
    # "separate", its own MLP on detached states, drawing nothing from the model's random
    # stream (the roles are then those of the same model without a sense head);
    # "separate_context", the same also reading a summary of the predicate's window
    sense_head: str = "separate_context"

    def __post_init__(self) -> None:
        sizes = ("width", "depth", "n_heads", "ffn_width", "parse_dep_width", "parse_head_width")
        for name in (*sizes, "role_width"):
            self._check(name, getattr(self, name) >= 1, "at least 1")
        for name in ("dropout", "attention_dropout"):
            self._check(name, 0.0 <= getattr(self, name) < 1.0, "in [0, 1)")
        for name, choices in (("positions", POSITIONS), ("sense_head", SENSE_HEADS)):
            if getattr(self, name) not in choices:
                raise ValueError(
                    Errors.E024.format(
                        value=getattr(self, name), option=name, choices=", ".join(choices)
                    )
                )
        if self.width % self.n_heads != 0:
            raise ValueError(
                Errors.E200.format(layer="LISA", width=self.width, n_heads=self.n_heads)
            )
        # 1 <= r < p <= J, or p = 0 (no syntactic head: the paper's SA baseline), 1 <= r <= J
        r, p, depth = self.tag_layer, self.parse_layer, self.depth
        if not (1 <= r <= depth if p == 0 else 1 <= r < p <= depth):
            raise ValueError(Errors.E150.format(tag_layer=r, parse_layer=p, depth=depth))

    def _check(self, name: str, ok: bool, constraint: str) -> None:
        if not ok:
            value = getattr(self, name)
            raise ValueError(Errors.E151.format(name=name, value=value, constraint=constraint))


# "Which parse", in the words of each layer, kept in one place so that they stay in step:
# - PARSE_SOURCES, the component's ``parse_source`` option: where the parse its syntactic
#   head follows comes from at prediction time ("auto": the doc's own when it has one,
#   else the model's);
# - PARSE_USED: the parse that was used, as ``doc._.srl_parse_source`` and
#   ``spacy-lisa evaluate --parse`` name it ("gold": a gold parse set as the doc's own);
# - OWN_PARSE_MODES, the ``model_parse`` option: how the model's *own* parse feeds the
#   later layers (one-hot on its argmax heads, or its soft attention);
# - TEACHER_FORCING_MODES, the ``teacher_forcing`` option: the parse later layers see in
#   training, mapped to a parse mode below;
# - PARSE_MODES, :attr:`LisaBatch.parse_mode`: how the syntactically-informed head builds
#   the values that later layers aggregate: "given", one-hot rows on LisaBatch.heads (the
#   gold parse in training = teacher forcing, an injected parse at test time); "soft",
#   its own attention A_parse; "argmax", one-hot on its own per-token argmax.
PARSE_SOURCES: Tuple[str, ...] = ("auto", "model", "doc")
PARSE_USED: Tuple[str, ...] = ("model", "doc", "gold")
OWN_PARSE_MODES: Tuple[str, ...] = ("argmax", "soft")
TEACHER_FORCING_MODES: Dict[str, str] = {"gold": "given", "predicted": "argmax"}
PARSE_MODES: Tuple[str, ...] = ("given", "soft", "argmax")


@dataclass
class LisaBatch:
    """Input of the LISA Thinc model."""

    docs: List[Doc]
    # per doc: the windows [start, end) covering the doc in order (each <= max_length),
    # or with ``parts`` a run of the doc
    windows: List[List[Tuple[int, int]]]
    # per doc: absolute head index of every token (root: its own index); required for
    # parse_mode "given", ignored otherwise. -1 = unknown (masked: such a token's row is
    # one-hot on itself).
    heads: Optional[List[Ints1d]] = None
    # per doc: sorted predicate token indices. None: the model predicts the predicates
    # from its joint POS/predicate classifier (tokens whose argmax label is a
    # ``TAG:PREDICATE`` label).
    predicates: Optional[List[Ints1d]] = None
    parse_mode: str = "soft"
    # False: leave the dependency-label scores out (``dep_scores`` all zero), e.g. at
    # prediction on docs whose own parse labels are written (a quarter of the encoder's
    # cost on CPU); with parse_mode "given" at prediction, the parent scores too
    # (``head_scores`` all zero: nothing reads the model's own parse)
    dep_labels: bool = True
    # at prediction: the tok2vec's output on whole docs, filled by the first call that
    # needs it and kept by the caller between the calls on a doc cut into parts: the
    # tok2vec (whose context may cross windows) then runs once per doc, as on the uncut
    # doc, not once per part. Keyed by (tok2vec layer id, id(doc)): an ensemble's
    # members have a tok2vec each, and the docs outlive the calls. None: it runs at
    # every call
    vectors: Optional[Dict[Tuple[int, int], Floats2d]] = None
    # at prediction: a doc's windows may cover a run of it, not all of it (the component
    # cuts a long doc's windows into several calls, so that no call's scores grow with
    # the doc); refused in training, whose gradient goes to every token
    parts: bool = False


@dataclass
class LisaOutput:
    """Output (logits) of the LISA Thinc model; in backprop, the same shapes hold the
    gradients of the loss with respect to those logits."""

    # (doc index, start, end) of each encoded window, in batch order: S entries
    windows: List[Tuple[int, int, int]]
    tag_scores: Floats2d  # [N, n_tags] joint POS/predicate logits
    head_scores: Floats3d  # [S, T, T] parent logits
    dep_scores: Floats3d  # [S, T, n_deps] label logits for the head the upper layers used
    frames: Ints2d  # [F, 2] (window index, token offset in window) of each scored predicate
    role_scores: Floats3d  # [F, T, n_roles] BIO role logits
    # [S, H, T] attention of each Label Attention Layer head over the window's tokens
    # (only when the model has a LAL top layer), else None
    label_attention: Optional[Floats3d] = None
    # heads the upper layers actually used, per window [S, T] (window offsets), for
    # scoring the parse the model used; filled in forward, None in gradients
    used_heads: Optional[Ints2d] = None
    # per scored predicate (frames order): roleset, lemma edit-tree and UPOS logits, when
    # the model has those classifiers (None otherwise, and in gradients where unused)
    sense_scores: Optional[Floats2d] = None  # [F, n_senses]
    lemma_scores: Optional[Floats2d] = None  # [F, n_lemmas]
    pred_pos_scores: Optional[Floats2d] = None  # [F, n_pred_pos]


@dataclass
class LisaTargets:
    """Gold labels for one :class:`LisaOutput`, as label indices; ``-1`` masks a
    position (padding, unaligned gold, unknown label): it adds nothing to the loss."""

    tags: Ints1d  # [N] joint POS/predicate label per token
    heads: Ints2d  # [S, T] gold head offset within the window (root: own offset)
    deps: Ints2d  # [S, T] gold dependency label
    roles: Ints2d  # [F, T] BIO role label per frame, frames in LisaOutput.frames order
    senses: Optional[Ints1d] = None  # [F] roleset index per frame
    # [F, n_senses] bool: the rolesets the sense softmax runs over per frame (the gold
    # lemma's candidates, ``sense_loss = "candidates"``); None: all of them
    sense_allowed: Optional[Any] = None
    lemmas: Optional[Ints1d] = None  # [F] lemma edit-tree class per frame
    pred_pos: Optional[Ints1d] = None  # [F] UPOS class per frame
    # a teacher model's distributions (knowledge distillation, pipeline/teacher.py), or
    # None; a row of zeros: no teacher distribution there
    role_soft: Optional[Floats3d] = None  # [F, T, n_roles] over the BIO role labels
    tag_soft: Optional[Floats2d] = None  # [N, n_tags] over the joint POS/predicate labels


@dataclass
class LossWeights:
    """Weights of eq. 7: role + tag + ``head`` * head + ``dep`` * dependency label, plus
    the per-predicate classifiers: ``sense`` (roleset), ``lemma`` and ``predicate_pos``.
    ``teacher`` (0 to 1): the share of the role and tag terms taken from a teacher's
    distributions where the training data carries them (knowledge distillation); the
    gold labels keep the rest."""

    role: float = 1.0
    tag: float = 1.0
    head: float = 1.0
    dep: float = 1.0
    sense: float = 1.0
    lemma: float = 1.0
    predicate_pos: float = 1.0
    teacher: float = 0.0
