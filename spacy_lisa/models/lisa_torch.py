"""The LISA network (Strubell et al. 2018) as one torch module.

One pass over a batch of padded windows predicts, from the bottom up:

1. input projection of the token vectors to the model width (+ sinusoidal positions
   unless ``positions="relative"``, whose attention encodes positions itself);
2. J encoder layers; after layer r (``tag_layer``) the joint POS/predicate classifier;
   at layer p (``parse_layer``) the syntactically-informed head: parent logits from
   S^(p-1), and head 0 of layer p aggregates its values with the chosen parse;
3. optionally a top layer (e.g. a Label Attention Layer) on S^(J);
4. the role scorer over S^(J) (or the top layer's output) for every predicate: the given
   ones, or those the tag classifier just predicted (layer r is below the top);
5. per predicate, the frame classifiers (when sized): its roleset (sense) over every
   roleset seen in training, its lemma (as an edit-tree class) and its UPOS; with
   ``sense_head="separate"`` the roleset has a classifier of its own (SenseClassifier).

What to score comes as a :class:`~.lisa_batch.ScoreRequest`. In the single pass no
predicate indicator is added to the input: every predicate is scored from one encoding,
and the tag classifier (above the input) would learn to copy an indicator of gold
predicates and fail when they must be predicted. The predicate-aware architecture
(:mod:`.predicate_aware`) calls the module twice per batch: sentence windows without the
role scorer (tags, predicates, parse, senses; ``score_roles`` false), then a ``marked``
request: one row per predicate, its window with a learned predicate marker added at the
predicate's input position, following the parse the first call used, scoring that
predicate's roles only. Both run the same encoder (:meth:`LisaTorchModel.encode`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, List, NamedTuple, Optional, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..errors import Errors
from .attention import (
    LEAKY_SLOPE,
    EncoderLayer,
    MultiHeadSelfAttention,
    Packing,
    cached_positions,
)
from .biaffine import ParseOutput, SyntacticHead
from .frame_classifiers import FrameClassifier, SenseClassifier
from .lisa_batch import ScoreRequest
from .role_scorer import BilinearRoleScorer
from .types import MASK_VALUE, OWN_PARSE_MODES, LisaSizes


class LisaTorchOutput(NamedTuple):
    """What :meth:`LisaTorchModel.forward` returns (padded; B windows of T tokens)."""

    tag_scores: Tensor  # [B, T, n_tags] joint POS/predicate logits (padding rows: junk)
    # [B, T, T] parent logits, masked columns MASK_VALUE; [B, 0, 0] if p=0; zeros when left
    # out (head_scores=False)
    head_scores: Tensor
    dep_scores: Tensor  # [B, T, n_deps] labels for used_heads; [B, 0, n_deps] if p=0
    role_scores: Tensor  # [F, T, n_roles] BIO role logits, padding columns MASK_VALUE
    frame_window: Tensor  # [F] long, window of each scored predicate
    frame_pos: Tensor  # [F] long, token offset of each predicate in its window
    used_heads: Optional[Tensor]  # [B, T] long parents the upper layers used; None if p=0
    label_attention: Optional[Tensor]  # [B, H, T] from a Label Attention top layer, or None
    sense_scores: Optional[Tensor] = None  # [F, n_senses] roleset logits, None if no head
    lemma_scores: Optional[Tensor] = None  # [F, n_lemmas] edit-tree logits, None if no head
    pred_pos_scores: Optional[Tensor] = None  # [F, n_pred_pos] UPOS logits, None if no head


class Encoded(NamedTuple):
    """What :meth:`LisaTorchModel.encode` computes (padded, B windows of T tokens)."""

    states: Tensor  # [B, T, d] top states (after the top layer, if any)
    tag_scores: Optional[Tensor]  # [B, T, n_tags] joint POS/predicate logits; None if not asked
    parse: Optional[ParseOutput]  # the syntactic head's output; None without one (p = 0)
    label_attention: Optional[Tensor]  # [B, H, T] from a Label Attention top layer, or None


class LisaTorchModel(nn.Module):
    """LISA: self-attention encoder + joint POS/predicate tagger + syntactically-informed
    head + role scorer. See the module docstring for the order of computation.
    ``predicate_marker``: learn the marker the predicate-aware architecture adds at each
    predicate's input position (a ``marked`` :class:`~.lisa_batch.ScoreRequest`)."""

    def __init__(
        self,
        n_in: int,
        n_tags: int,
        n_deps: int,
        n_roles: int,
        sizes: Optional[LisaSizes] = None,
        *,
        role_scorer: Optional[Callable[[int, int], nn.Module]] = None,
        top_layer: Optional[Callable[[int], nn.Module]] = None,
        n_senses: int = 0,
        n_lemmas: int = 0,
        n_pred_pos: int = 0,
        predicate_marker: bool = False,
    ) -> None:
        super().__init__()
        sizes = sizes if sizes is not None else LisaSizes()
        width, dropout, role_width = sizes.width, sizes.dropout, sizes.role_width
        self.width = width
        self.tag_layer = sizes.tag_layer
        self.parse_layer = sizes.parse_layer
        self.positions = sizes.positions
        self.n_deps = n_deps
        self.n_roles = n_roles
        self.input_proj = nn.Linear(n_in, width)
        self.input_dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(encoder_layers(sizes))
        # joint POS/predicate classifier: an MLP to a 200d representation (App. A.4 of
        # the paper sizes it like the predicate/role representations), then linear
        self.tag_hidden = nn.Linear(width, role_width)
        self.tag_output = nn.Linear(role_width, n_tags)
        self.tag_dropout = nn.Dropout(dropout)
        self.parser: Optional[SyntacticHead] = None
        if sizes.parse_layer > 0:
            self.parser = SyntacticHead(
                width, sizes.parse_dep_width, sizes.parse_head_width, n_deps, dropout
            )
        self.top: Optional[nn.Module] = top_layer(width) if top_layer is not None else None
        self.role_scorer: nn.Module = (
            role_scorer(width, n_roles)
            if role_scorer is not None
            else BilinearRoleScorer(width, n_roles, role_width, dropout)
        )
        # the per-predicate classifiers: a size of 0 leaves one out
        self.frame_classifier: Optional[FrameClassifier] = None
        self.sense_classifier: Optional[SenseClassifier] = None
        shared_senses = n_senses if sizes.sense_head == "shared" else 0
        if shared_senses or n_lemmas or n_pred_pos:
            self.frame_classifier = FrameClassifier(
                width, role_width, shared_senses, n_lemmas, n_pred_pos, dropout
            )
        self.reset_parameters()
        if n_senses and sizes.sense_head != "shared":
            context = sizes.sense_head == "separate_context"
            self.sense_classifier = SenseClassifier(width, role_width, n_senses, context)
        self.predicate_marker: Optional[nn.Parameter] = (
            predicate_marker_parameter(width) if predicate_marker else None
        )

    def reset_parameters(self) -> None:
        """Initialise the layers this module owns (the submodules initialise themselves)."""
        nn.init.xavier_uniform_(self.input_proj.weight)
        nn.init.zeros_(self.input_proj.bias)
        nn.init.kaiming_uniform_(self.tag_hidden.weight, a=LEAKY_SLOPE, nonlinearity="leaky_relu")
        nn.init.zeros_(self.tag_hidden.bias)
        nn.init.xavier_uniform_(self.tag_output.weight)
        nn.init.zeros_(self.tag_output.bias)

    def forward(self, x: Tensor, mask: Tensor, request: ScoreRequest) -> LisaTorchOutput:
        """Score a batch of padded windows: x [B, T, n_in] token vectors, mask [B, T]
        bool (True = real token), and what to score (:class:`~.lisa_batch.ScoreRequest`,
        its arrays on this module's device). In eval mode the token-wise layers run on
        the real tokens only (see :class:`~.attention.Packing`); the outputs are the
        same, padded."""
        mask = mask.to(torch.bool)
        if request.marked:
            return self.score_marked(x, mask, request)
        return self.score_sentences(x, mask, request)

    def score_sentences(self, x: Tensor, mask: Tensor, request: ScoreRequest) -> LisaTorchOutput:
        """Tags, parse, predicates, roles and per-predicate classes of sentence windows."""
        B, T, _ = x.shape
        own_parse = request.own_parse
        if own_parse not in OWN_PARSE_MODES:
            choices = ", ".join(OWN_PARSE_MODES)
            raise ValueError(
                Errors.E024.format(value=own_parse, option="own_parse", choices=choices)
            )
        states, tag_scores, parse, label_attention = self.encode(x, mask, request)
        assert tag_scores is not None  # asked for
        frame_window, frame_pos = request.frame_window, request.frame_pos
        if frame_window is None or frame_pos is None:
            frame_window, frame_pos = self.predict_predicates(
                tag_scores, mask, request.predicate_tags
            )
        if request.score_roles:
            role_scores = self._roles(states, mask, frame_window, frame_pos)  # [F, T, L]
        else:
            role_scores = states.new_zeros(0, T, self.n_roles)
        sense_scores = lemma_scores = pred_pos_scores = None
        if self.frame_classifier is not None:
            sense_scores, lemma_scores, pred_pos_scores = self.frame_classifier(
                states, frame_window, frame_pos
            )
        if self.sense_classifier is not None:
            sense_scores = self.sense_classifier(states, mask, frame_window, frame_pos)
        if parse is None:
            head_scores = x.new_zeros(B, 0, 0)
            dep_scores = x.new_zeros(B, 0, self.n_deps)
            used_heads = None
        else:
            head_scores, dep_scores, used_heads = (
                parse.head_scores,
                parse.dep_scores,
                parse.used_heads,
            )
        return LisaTorchOutput(
            tag_scores=tag_scores,
            head_scores=head_scores,
            dep_scores=dep_scores,
            role_scores=role_scores,
            frame_window=frame_window,
            frame_pos=frame_pos,
            used_heads=used_heads,
            label_attention=label_attention,
            sense_scores=sense_scores,
            lemma_scores=lemma_scores,
            pred_pos_scores=pred_pos_scores,
        )

    def score_marked(self, x: Tensor, mask: Tensor, request: ScoreRequest) -> LisaTorchOutput:
        """The roles of one marked predicate per row (a ``marked`` request); the other
        outputs are empty."""
        # the predicate-aware architecture builds the module with a marker and passes
        # one predicate and the parse per row
        assert self.predicate_marker is not None, "built without predicate_marker"
        frame_pos = request.frame_pos
        assert frame_pos is not None and frame_pos.shape[0] == x.shape[0], "one offset per row"
        assert self.parser is None or request.heads is not None, "the parse to follow"
        B, T, _ = x.shape
        rows = torch.arange(B, device=x.device)
        # every row follows the given parse; nothing of the head's own parse is computed
        parse = replace(
            request,
            given_rows=torch.ones(B, dtype=torch.bool, device=x.device),
            dep_labels=False,
            head_scores=False,
        )
        states, _, _, _ = self.encode(x, mask, parse, marks=F.one_hot(frame_pos, T), tags=False)
        return LisaTorchOutput(
            tag_scores=x.new_zeros(B, T, 0),
            head_scores=x.new_zeros(B, 0, 0),
            dep_scores=x.new_zeros(B, 0, self.n_deps),
            role_scores=self._roles(states, mask, rows, frame_pos),
            frame_window=rows,
            frame_pos=frame_pos,
            used_heads=None,
            label_attention=None,
        )

    def encode(
        self,
        x: Tensor,
        mask: Tensor,
        parse: ScoreRequest,
        *,
        marks: Optional[Tensor] = None,
        tags: bool = True,
    ) -> Encoded:
        """The encoder: the input (plus the predicate marker where ``marks`` [B, T] is
        1), J layers, the joint tag classifier after layer r (``tags``), the syntactic
        head at layer p following ``parse`` (its heads, given_rows, own_parse,
        dep_labels and head_scores), then the top layer if any."""
        T = x.shape[1]
        packing = self._packing(mask)
        if packing is not None:
            # prediction: the token-wise layers run on the real tokens only (a third or
            # more of a call's rows are padding), states [N, d] until the top
            x = packing.pack(x)  # [N, n_in]
        states = self._input(x, T, packing, marks)
        tag_scores: Optional[Tensor] = None
        parse_output: Optional[ParseOutput] = None
        for j, layer in enumerate(self.layers, start=1):
            override = None
            if j == self.parse_layer and self.parser is not None:
                parse_output = self.parser(
                    states,
                    mask,
                    heads=parse.heads,
                    given_rows=parse.given_rows,
                    own_mode=parse.own_parse,
                    dep_labels=parse.dep_labels,
                    packing=packing,
                    head_scores=parse.head_scores,
                )
                override = parse_output.attention  # [B, T, T] replaces head 0 of layer p
            if packing is None:
                states = layer(states, mask, override_head=override)  # [B, T, d]
            else:
                encoder_layer = cast(EncoderLayer, layer)
                states = encoder_layer.forward_packed(states, mask, packing, override_head=override)
            if tags and j == self.tag_layer:
                hidden = F.leaky_relu(self.tag_hidden(states), LEAKY_SLOPE)
                tag_scores = self.tag_output(self.tag_dropout(hidden))  # [B, T, n_tags]
                if packing is not None:
                    tag_scores = packing.unpack(tag_scores)
        if packing is not None:
            states = packing.unpack(states)  # [B, T, d] for the top layer and scorers
        label_attention = None
        if self.top is not None:
            states, label_attention = self.top(states, mask)  # [B, T, d], [B, H, T]
        return Encoded(states, tag_scores, parse_output, label_attention)

    def _input(
        self, x: Tensor, T: int, packing: Optional[Packing], marks: Optional[Tensor] = None
    ) -> Tensor:
        """Token vectors [B, T, n_in] ([N, n_in] packed) -> the first layer's input:
        projected, plus positions (absolute), plus the predicate marker where ``marks``
        [B, T] is 1; dropout."""
        states = self.input_proj(x)  # [B, T, d] ([N, d] packed)
        if self.positions == "absolute":
            encoding = cached_positions(T, self.width, x.device).to(states.dtype)
            states = states + (encoding if packing is None else encoding[packing.position])
        if marks is not None:
            assert self.predicate_marker is not None
            marks = marks.to(states.dtype)[..., None]  # [B, T, 1]
            marks = marks if packing is None else packing.pack(marks)
            states = states + marks * self.predicate_marker.to(states.dtype)
        return cast(Tensor, self.input_dropout(states))

    def _roles(
        self, states: Tensor, mask: Tensor, frame_window: Tensor, frame_pos: Tensor
    ) -> Tensor:
        """Role logits [F, T, L] of the frames, padding columns of each frame's window
        masked."""
        role_scores = self.role_scorer(states, mask, frame_window, frame_pos)  # [F, T, L]
        return role_scores.masked_fill(~mask[frame_window][..., None], MASK_VALUE)

    def _packing(self, mask: Tensor) -> Optional[Packing]:
        """The packing of ``mask`` at prediction (eval mode) when every encoder layer
        can run packed and positions are absolute; None otherwise (training runs padded,
        as its dropout masks are drawn per padded row)."""
        if self.training or self.positions != "absolute":
            return None
        if not all(isinstance(layer, EncoderLayer) and layer.packable() for layer in self.layers):
            return None
        return Packing.of(mask)

    @staticmethod
    def predict_predicates(
        tag_scores: Tensor, mask: Tensor, predicate_tags: Optional[Tensor]
    ) -> tuple[Tensor, Tensor]:
        """Tokens whose argmax joint label is a TAG:PREDICATE label, in window then token
        order: (frame_window [F], frame_pos [F])."""
        if predicate_tags is None or predicate_tags.numel() == 0:
            empty = torch.zeros(0, dtype=torch.long, device=tag_scores.device)
            return empty, empty.clone()
        is_predicate = predicate_tags.to(torch.bool)[tag_scores.argmax(dim=-1)] & mask  # [B, T]
        found = is_predicate.nonzero()  # [F, 2], row-major: window, then position
        return found[:, 0], found[:, 1]


def encoder_layers(sizes: LisaSizes) -> List[EncoderLayer]:
    """The J encoder layers: multi-head self-attention (FLAT relative attention with
    ``positions="relative"``) and the feed-forward, each residual."""
    layers = []
    width, n_heads, attention_dropout = sizes.width, sizes.n_heads, sizes.attention_dropout
    for _ in range(sizes.depth):
        attention: nn.Module
        if sizes.positions == "relative":
            # imported here: only this option needs the FLAT module
            from .relative_attention import RelativeMultiHeadSelfAttention

            attention = RelativeMultiHeadSelfAttention(width, n_heads, attention_dropout)
        else:
            attention = MultiHeadSelfAttention(width, n_heads, attention_dropout)
        layers.append(EncoderLayer(attention, width, sizes.ffn_width, sizes.dropout))
    return layers


def predicate_marker_parameter(width: int) -> nn.Parameter:
    """The learned predicate marker [width], drawn on a forked random stream, so that
    the rest of the model starts from the weights it has without the marker."""
    with torch.random.fork_rng(devices=[]):
        # N(0, 1) per unit, like nn.Embedding: as large as the positions' signal
        return nn.Parameter(torch.randn(width))
