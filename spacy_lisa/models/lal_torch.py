"""Label Attention Layer (Mrini et al. 2019), a plain torch module.

Self-attention in which every head has one learned *query vector* instead of a query
matrix, so each head yields one attention distribution over the tokens (not a T x T
matrix) and one context vector per sequence:

    a_i = softmax(q_i . K_i / sqrt(d_k)),  K_i = X W_i^K,  V_i = X W_i^V,  c_i = a_i V_i

The context vector is added to every token vector (one residual connection per head),
the result is projected to a lower dimension per head and normalised, and the heads'
results are concatenated: slice i of a token's output vector comes from head i only,
which is what makes the heads interpretable ("head i = role label i").

Projection, as implemented (why): with a linear per-head projection P_i the residual
``P_i (x_t + U_i c_i)`` equals ``P_i x_t + O_i c_i`` with ``O_i = P_i U_i``. We learn
``P_i`` [d -> p] and ``O_i`` [d_k -> p] directly, so values stay in the small head space
(``head_width``) instead of the full width: the same function class as the paper's
"add, then project" with H·(d·(2·d_k + p) + d_k·p) instead of H·d·(d + d_k + p)
parameters, which matters with one head per role label. Each head slice has width
``p = width // n_heads`` so the concatenation is exactly ``width`` wide; when ``width``
is not divisible by ``n_heads``, slices are ``head_width`` wide and a linear map brings
the concatenation back to ``width`` (slices then stop being attributable; the attention
weights still are).

The LayerNorm is applied per head slice (own gain and bias per head) rather than over the
whole vector, so one head's magnitude cannot rescale another head's slice.
"""

from __future__ import annotations

import math
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..errors import Errors
from .types import MASK_VALUE


class LabelAttentionLayer(nn.Module):
    """Label Attention Layer: ``forward(x [B,T,d], mask [B,T]) -> (y [B,T,d], attn [B,H,T])``.

    ``attn[b, i]`` is head i's distribution over the tokens of sequence b (0 on padding,
    rows sum to 1 over real tokens), before attention dropout: the weights to show a user.
    """

    def __init__(
        self,
        width: int,
        n_heads: int,
        head_width: int,
        ffn: bool = False,
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        if n_heads < 1 or head_width < 1 or width < 1:
            raise ValueError(
                Errors.E204.format(width=width, n_heads=n_heads, head_width=head_width)
            )
        self.width = width
        self.n_heads = n_heads
        self.head_width = head_width  # d_k: query, key and value size per head
        # p: width of each head's slice of the output
        self.attributable = width % n_heads == 0
        self.slice_width = width // n_heads if self.attributable else head_width
        H, dk, p = n_heads, head_width, self.slice_width
        self.queries = nn.Parameter(torch.empty(H, dk))  # one learned query per head
        self.key = nn.Linear(width, H * dk, bias=False)  # W_i^K stacked
        self.value = nn.Linear(width, H * dk, bias=False)  # W_i^V stacked
        self.residual_proj = nn.Linear(width, H * p)  # P_i stacked
        self.context_proj = nn.Parameter(torch.empty(H, dk, p))  # O_i
        self.norm_weight = nn.Parameter(torch.empty(H, p))
        self.norm_bias = nn.Parameter(torch.empty(H, p))
        self.output: Optional[nn.Linear] = None if self.attributable else nn.Linear(H * p, width)
        self.ffn: Optional[nn.Sequential] = None
        self.ffn_norm: Optional[nn.LayerNorm] = None
        if ffn:
            hidden = 4 * width
            self.ffn = nn.Sequential(
                nn.Linear(width, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, width)
            )
            self.ffn_norm = nn.LayerNorm(width)
        self.attention_dropout = nn.Dropout(dropout)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.normal_(self.queries, std=1.0 / math.sqrt(self.head_width))
        nn.init.xavier_uniform_(self.key.weight)
        nn.init.xavier_uniform_(self.value.weight)
        nn.init.xavier_uniform_(self.residual_proj.weight)
        nn.init.zeros_(self.residual_proj.bias)
        bound = 1.0 / math.sqrt(self.head_width)
        nn.init.uniform_(self.context_proj, -bound, bound)
        nn.init.ones_(self.norm_weight)
        nn.init.zeros_(self.norm_bias)
        if self.output is not None:
            nn.init.xavier_uniform_(self.output.weight)
            nn.init.zeros_(self.output.bias)
        if self.ffn is not None and self.ffn_norm is not None:
            for layer in self.ffn:
                if isinstance(layer, nn.Linear):
                    layer.reset_parameters()
            self.ffn_norm.reset_parameters()

    def forward(self, x: Tensor, mask: Tensor) -> Tuple[Tensor, Tensor]:
        """x [B, T, d], mask [B, T] (True = real token) -> (y [B, T, d], attn [B, H, T])."""
        B, T, _ = x.shape
        H, dk, p = self.n_heads, self.head_width, self.slice_width
        mask = mask.to(torch.bool)
        keys = self.key(x).view(B, T, H, dk)
        values = self.value(x).view(B, T, H, dk)
        scores = torch.einsum("bthd,hd->bht", keys, self.queries) / math.sqrt(dk)  # [B,H,T]
        token_mask = mask[:, None, :]  # [B, 1, T]
        scores = scores.masked_fill(~token_mask, MASK_VALUE)
        # times the mask: exactly 0 on padding, and 0 (not NaN) for an all-padding row
        attn = torch.softmax(scores, dim=-1) * token_mask  # [B, H, T]
        context = torch.einsum(
            "bht,bthd->bhd", self.attention_dropout(attn), values
        )  # c_i, [B, H, dk]
        lifted = torch.einsum("bhd,hdp->bhp", context, self.context_proj)  # O_i c_i, [B,H,p]
        # residual per head: every token's P_i x_t plus the head's single context vector
        per_head = self.residual_proj(x).view(B, T, H, p) + lifted[:, None]  # [B, T, H, p]
        per_head = F.layer_norm(per_head, (p,)) * self.norm_weight + self.norm_bias
        y = per_head.reshape(B, T, H * p)
        if self.output is not None:
            y = self.output(y)  # [B, T, d]
        if self.ffn is not None and self.ffn_norm is not None:
            y = self.ffn_norm(y + self.ffn(y))
        return y * mask[..., None], attn
