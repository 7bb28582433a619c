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

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Literal, Optional, Tuple

from spacy.tokens import Doc
from thinc.types import Floats2d, Floats3d, Ints1d, Ints2d

MASK_VALUE = -1e4


@dataclass(frozen=True)
class LisaSizes:
    """The LISA encoder's sizes and position scheme, with their defaults declared once:
    the ``spacy-lisa.LISA.v1`` builder makes one from its arguments and the torch module
    takes it, and the component's default model config is written from
    :data:`LISA_DEFAULTS`, so ``nlp.add_pipe("lisa_srl")`` and a config that leaves a key
    out build the same model. See ``build_lisa_model`` for what each one means."""

    width: int = 128
    depth: int = 4
    n_heads: int = 8
    ffn_width: int = 256
    dropout: float = 0.1
    attention_dropout: float = 0.1
    tag_layer: int = 1
    parse_layer: int = 2
    parse_dep_width: int = 128
    parse_head_width: int = 64
    role_width: int = 128
    positions: str = "absolute"
    # the per-predicate classifiers (roleset, lemma, UPOS) read the encoder's states
    # detached: their losses train them alone, not the encoder the roles share
    detach_frame_heads: bool = False
    # "separate": the roleset classifier on its own MLP, reading the states detached and
    # drawing nothing from the model's random stream (SRL as without it); "shared": on
    # the lemma/UPOS classifiers' MLP (pipelines trained before commit 8e3d5ae, 2026-11-25)
    sense_head: str = "shared"
    # "single_pass": one encoding per sentence scores the roles of all its predicates;
    # "marked": stage 1 (tags, predicates, parse, senses) as single pass, then each
    # predicate's window is encoded again with the predicate marked (in the tok2vec's
    # input where the tok2vec can take a mark, and at the LISA encoder's input) and its
    # roles are scored from that encoding; "marked_upper": the same with the mark at the
    # LISA encoder's input only (one tok2vec/transformer pass per sentence)
    predicate_encoding: str = "single_pass"


LISA_DEFAULTS: Dict[str, Any] = asdict(LisaSizes())
# spacy-lisa.LISA.v2 (the component's default model): the encoder of configs/lisa_cpu.cfg,
# the best measured on EWT (BENCHMARKS.md): wider, and the roleset classifier on its own
# detached MLP with a summary of the predicate's window (``sense_head``), which cannot
# change the roles and gave the best sense accuracy. LISA.v1 keeps LISA_DEFAULTS, which
# pipelines saved before v2 were built with.
LISA_V2_DEFAULTS: Dict[str, Any] = {
    **LISA_DEFAULTS,
    "width": 192,
    "ffn_width": 384,
    "sense_head": "separate_context",
}

# "Which parse", in the words of each layer, kept in one place so that they stay in step:
# - PARSE_SOURCES, the component's ``parse_source`` option: where the parse its syntactic
#   head follows comes from at prediction time ("auto": the doc's own when it has one,
#   else the model's);
# - PARSE_USED: the parse that was used, as ``doc._.srl_parse_source`` and
#   ``spacy-lisa evaluate --parse`` name it ("gold": a gold parse set as the doc's own);
# - OWN_PARSE_MODES, the ``model_parse`` option: how the model's *own* parse feeds the
#   later layers (one-hot on its argmax heads, or its soft attention);
# - TEACHER_FORCING_MODES, the ``teacher_forcing`` option: the parse later layers see in
#   training, mapped to the model's ParseMode below.
PARSE_SOURCES: Tuple[str, ...] = ("auto", "model", "doc")
PARSE_USED: Tuple[str, ...] = ("model", "doc", "gold")
OWN_PARSE_MODES: Tuple[str, ...] = ("argmax", "soft")
TEACHER_FORCING_MODES: Dict[str, str] = {
    "gold": "given",
    "predicted": "argmax",
    "scheduled": "scheduled",
}

# How the syntactically-informed head builds the values that later layers aggregate:
# "given": one-hot rows on LisaBatch.heads (the gold parse in training = teacher forcing,
#          an injected parse at test time); "soft": its own attention A_parse;
# "argmax": one-hot on its own per-token argmax; "scheduled": per window, "given" with
#          probability LisaBatch.gold_parse_prob, else "argmax" (scheduled sampling).
ParseMode = Literal["given", "soft", "argmax", "scheduled"]
PARSE_MODES: Tuple[str, ...] = ("given", "soft", "argmax", "scheduled")


@dataclass
class LisaBatch:
    """Input of the LISA Thinc model."""

    docs: List[Doc]
    # per doc: the windows [start, end) covering the doc in order (each <= max_length)
    windows: List[List[Tuple[int, int]]]
    # per doc: absolute head index of every token (root: its own index); required for
    # parse_mode "given" and "scheduled", ignored otherwise. -1 = unknown (masked: such a
    # token's row is one-hot on itself).
    heads: Optional[List[Ints1d]] = None
    # per doc: sorted predicate token indices. None: the model predicts the predicates
    # from its joint POS/predicate classifier (tokens whose argmax label is a
    # ``TAG:PREDICATE`` label).
    predicates: Optional[List[Ints1d]] = None
    parse_mode: str = "soft"
    gold_parse_prob: float = 1.0
    # False: leave the dependency-label scores out (``dep_scores`` all zero), e.g. at
    # prediction on docs whose own parse labels are written (a quarter of the encoder's
    # cost on CPU); with parse_mode "given" at prediction, the parent scores too
    # (``head_scores`` all zero: nothing reads the model's own parse)
    dep_labels: bool = True


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
    extra: dict = field(default_factory=dict)


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
