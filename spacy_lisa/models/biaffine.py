"""The syntactically-informed head of LISA (§2.2): Dozat & Manning (2017) biaffine parent
attention and per-class biaffine dependency labels.

Plain torch modules. The head reads S^(p-1), the input of layer p, and returns parent
logits; which distribution layer p's head 0 then aggregates its values with (its own
attention, its argmax, or an injected parse) is chosen by :class:`SyntacticHead.forward`.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..errors import Errors
from .attention import LEAKY_SLOPE, Packing
from .types import MASK_VALUE


class Biaffine(nn.Module):
    """Biaffine scorer s_o(x_i, y_j) = [x_i; 1]^T U_o [y_j; 1] (bias columns optional),
    after SuPar's ``Biaffine(n_in, n_out, bias_x, bias_y)`` but with separate input sizes
    for x and y (LISA's dependent and parent projections differ: 500 vs 100)."""

    def __init__(
        self,
        n_in_x: int,
        n_in_y: int,
        n_out: int = 1,
        *,
        bias_x: bool = True,
        bias_y: bool = True,
    ) -> None:
        super().__init__()
        self.n_in_x = n_in_x
        self.n_in_y = n_in_y
        self.n_out = n_out
        self.bias_x = bias_x
        self.bias_y = bias_y
        self.weight = nn.Parameter(torch.empty(n_out, n_in_x + bias_x, n_in_y + bias_y))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # SuPar zero-initialises U; a small random U instead lets gradients reach the
        # projections below from the first step (with U = 0, dS/dx = U y = 0)
        fan = (self.n_in_x + self.bias_x) * (self.n_in_y + self.bias_y)
        nn.init.normal_(self.weight, std=fan**-0.5)

    def _extend(self, x: Tensor, y: Tensor) -> Tuple[Tensor, Tensor]:
        if self.bias_x:
            x = torch.cat([x, x.new_ones(*x.shape[:-1], 1)], dim=-1)
        if self.bias_y:
            y = torch.cat([y, y.new_ones(*y.shape[:-1], 1)], dim=-1)
        return x, y

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        """All pairs: x [B, Tx, n_in_x], y [B, Ty, n_in_y] -> [B, n_out, Tx, Ty]."""
        x, y = self._extend(x, y)
        return torch.einsum("bxi,oij,byj->boxy", x, self.weight, y)

    def score_pairs(self, x: Tensor, y: Tensor) -> Tensor:
        """Aligned pairs only: x [..., n_in_x], y [..., n_in_y] -> [..., n_out], scoring
        x[k] with y[k]. Used for labels of one chosen parent per token: O(T) instead of
        the O(T^2) of :meth:`forward`."""
        x, y = self._extend(x, y)
        return torch.einsum("...i,oij,...j->...o", x, self.weight, y)


class ParseOutput(NamedTuple):
    """Outputs of :class:`SyntacticHead` for one batch of windows."""

    head_scores: Tensor  # [B, T, T] parent logits, masked columns hold MASK_VALUE
    attention: Tensor  # [B, T, T] the distribution head 0 of layer p aggregates with
    used_heads: Tensor  # [B, T] long, parent offset per token behind the dep labels
    dep_scores: Tensor  # [B, T, n_deps] label logits for used_heads


class SyntacticHead(nn.Module):
    """Biaffine parent attention A_parse = softmax(Q_parse U_heads K_parse^T) with the
    root as a self-loop, and per-class biaffine dependency labels between Q_parse and
    K_parse (the dependent and parent representations, as in the paper)."""

    def __init__(
        self,
        width: int,
        dep_width: int,
        head_width: int,
        n_deps: int,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.n_deps = n_deps
        # Q_parse / K_parse: one-layer MLPs as in Dozat & Manning (the paper "projects";
        # the nonlinearity is D&M's and costs nothing)
        self.dep_mlp = nn.Linear(width, dep_width)
        self.head_mlp = nn.Linear(width, head_width)
        self.dropout = nn.Dropout(dropout)
        # bias on the dependent side only: [q; 1]^T U k adds a per-parent prior u.k_j,
        # while a dependent-only term would cancel in the softmax over parents
        self.arc = Biaffine(dep_width, head_width, 1, bias_x=True, bias_y=False)
        self.label = Biaffine(dep_width, head_width, n_deps, bias_x=True, bias_y=True)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for linear in (self.dep_mlp, self.head_mlp):
            nn.init.kaiming_uniform_(linear.weight, a=LEAKY_SLOPE, nonlinearity="leaky_relu")
            nn.init.zeros_(linear.bias)
        self.arc.reset_parameters()
        self.label.reset_parameters()

    def forward(
        self,
        states: Tensor,
        mask: Tensor,
        *,
        heads: Optional[Tensor] = None,
        given_rows: Optional[Tensor] = None,
        own_mode: str = "soft",
        dep_labels: bool = True,
        packing: Optional[Packing] = None,
        head_scores: bool = True,
    ) -> ParseOutput:
        """states [B, T, d] (S^(p-1)), mask [B, T] bool.

        heads [B, T] long: the injected parse as parent offsets within the window (-1 or
        out of range = unknown: a self-loop). given_rows [B] bool: windows that follow
        ``heads``; the others follow the head's own parse, ``own_mode`` "soft" (A_parse
        itself, differentiable) or "argmax" (one-hot on the best parent). dep_labels
        False: the label scores are zeros, not computed (O(T n_deps d^2), as much as an
        encoder layer). head_scores False (with dep_labels False and every window
        given): the parent scores are left out too (zeros), when nothing reads them, e.g.
        at prediction on docs with their own parse. packing: states are the real tokens
        only, [N, d] (see :class:`~.attention.Packing`); the projections and labels run
        on those rows, the outputs are padded as without it (padding rows of the scores
        are junk either way).
        """
        mask = mask.to(torch.bool)
        B, T = mask.shape
        if (
            not head_scores
            and not dep_labels
            and heads is not None
            and given_rows is not None
            and bool(given_rows.all())
        ):
            # every window follows the given parse and no labels are scored: the head's
            # own parse is used nowhere, so neither projection nor arc runs
            given_heads = self.clean_heads(heads, mask)
            attention = F.one_hot(given_heads, T).to(states.dtype)
            none = states.new_zeros(B, T, T)  # head_scores: not computed
            return ParseOutput(none, attention, given_heads, states.new_zeros(B, T, self.n_deps))
        dep, par, scores = self._arcs(states, mask, packing)
        attention, used = self._followed(scores, mask, own_mode, heads, given_rows)
        if not dep_labels:
            return ParseOutput(scores, attention, used, scores.new_zeros(B, T, self.n_deps))
        return ParseOutput(scores, attention, used, self._labels(dep, par, used, packing))

    def _arcs(
        self, states: Tensor, mask: Tensor, packing: Optional[Packing]
    ) -> Tuple[Tensor, Tensor, Tensor]:
        """The dependent and parent representations ([B, T, d] or packed [N, d]) and the
        parent logits [B, T, T], masked columns MASK_VALUE."""
        dep = self.dropout(F.leaky_relu(self.dep_mlp(states), LEAKY_SLOPE))  # [B, T, dq]
        par = self.dropout(F.leaky_relu(self.head_mlp(states), LEAKY_SLOPE))  # [B, T, dk]
        if packing is None:
            scores = self.arc(dep, par)[:, 0]  # [B, T, T]: dependent i, parent j
        else:  # [N, dq] / [N, dk]
            scores = self.arc(packing.unpack(dep), packing.unpack(par))[:, 0]
        return dep, par, scores.masked_fill(~mask[:, None, :], MASK_VALUE)

    def _followed(
        self,
        scores: Tensor,
        mask: Tensor,
        own_mode: str,
        heads: Optional[Tensor],
        given_rows: Optional[Tensor],
    ) -> Tuple[Tensor, Tensor]:
        """The distribution head 0 of layer p aggregates with [B, T, T] and the parent
        of each token [B, T]: the head's own parse (``own_mode``), the given ``heads`` on
        ``given_rows``."""
        T = mask.shape[1]
        own_heads = scores.argmax(dim=-1)  # [B, T]
        if own_mode == "soft":
            own = torch.softmax(scores, dim=-1)
        elif own_mode == "argmax":
            own = F.one_hot(own_heads, T).to(scores.dtype)
        else:
            raise ValueError(
                Errors.E024.format(value=own_mode, option="own_mode", choices="soft, argmax")
            )
        if heads is None or given_rows is None or not bool(given_rows.any()):
            return own, own_heads
        given_heads = self.clean_heads(heads, mask)  # [B, T]
        given = F.one_hot(given_heads, T).to(scores.dtype)  # [B, T, T]
        attention = torch.where(given_rows[:, None, None], given, own)
        return attention, torch.where(given_rows[:, None], given_heads, own_heads)

    def _labels(self, dep: Tensor, par: Tensor, used: Tensor, packing: Optional[Packing]) -> Tensor:
        """Label logits [B, T, n_deps] for the parent the upper layers used (D&M
        condition labels on the arc)."""
        if packing is None:
            parents = par.gather(1, used[..., None].expand(-1, -1, par.shape[-1]))  # [B, T, dk]
            return self.label.score_pairs(dep, parents)
        parents = par.index_select(0, packing.rows(packing.pack(used)))  # [N, dk]
        return packing.unpack(self.label.score_pairs(dep, parents))

    @staticmethod
    def clean_heads(heads: Tensor, mask: Tensor) -> Tensor:
        """Parent offsets [B, T] with unknown (-1), out-of-window and padding positions
        replaced by a self-loop (the root convention)."""
        B, T = mask.shape
        own = torch.arange(T, device=heads.device).expand(B, T)
        length = mask.sum(dim=1, keepdim=True)  # [B, 1]
        valid = (heads >= 0) & (heads < length) & mask
        return torch.where(valid, heads.long(), own)
