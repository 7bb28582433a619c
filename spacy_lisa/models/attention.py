"""Self-attention encoder of LISA (Strubell et al. 2018, §2.1): sinusoidal positions,
multi-head scaled dot-product self-attention and the residual encoder layer.

Plain torch modules that know nothing of spaCy. The interface other modules rely on:

- ``MultiHeadSelfAttention(width, n_heads, dropout)`` with
  ``forward(x [B, T, d], mask [B, T] (True = real token), override_head [B, T, T] | None)
  -> [B, T, d]``; ``override_head`` replaces head 0's attention probabilities, which is how
  the syntactically-informed head takes the place of one head of layer p.
- ``EncoderLayer(attention, width, ffn_width, dropout)`` wraps any module with that
  signature (e.g. :class:`~spacy_lisa.models.relative_attention.RelativeMultiHeadSelfAttention`).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Optional, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..errors import Errors
from .types import MASK_VALUE

# LISA uses leaky ReLU in the feed-forward (Maas et al. 2013); torch's default slope
LEAKY_SLOPE = 0.01


def sinusoidal_positions(
    length: int, width: int, *, device: Optional[torch.device] = None
) -> Tensor:
    """Vaswani et al. (2017) position encoding: [length, width], float32.

    PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i+1] = cos(t / 10000^(2i/d)). Positions are
    counted from the start of each window, so a sentence gets the same encoding alone or
    padded in a batch.
    """
    position = torch.arange(length, device=device, dtype=torch.float32)[:, None]  # [T, 1]
    n_pairs = (width + 1) // 2
    freq = torch.exp(
        torch.arange(n_pairs, device=device, dtype=torch.float32)
        * (-2.0 * math.log(10000.0) / width)
    )  # [ceil(d/2)]
    angles = position * freq[None, :]  # [T, ceil(d/2)]
    encoding = torch.zeros(length, 2 * n_pairs, device=device)
    encoding[:, 0::2] = torch.sin(angles)
    encoding[:, 1::2] = torch.cos(angles)
    return encoding[:, :width]  # odd widths drop the last cosine


def cached_positions(length: int, width: int, device: torch.device) -> Tensor:
    """:func:`sinusoidal_positions` ``(length, width)``, sliced from a table kept per
    width and device (do not modify it in place). A row does not depend on the table's
    length (bit for bit, tested), and building the table costs more than a small
    model's position add at every prediction call."""
    capacity = max(128, 1 << (length - 1).bit_length())
    return _position_table(capacity, width, device)[:length]


@lru_cache(maxsize=32)
def _position_table(capacity: int, width: int, device: torch.device) -> Tensor:
    return sinusoidal_positions(capacity, width, device=device)


class Packing:
    """The real tokens of a batch of padded windows, for running token-wise layers
    (linear maps, layer norm) on those tokens only: ``[B, T, ...]`` <-> ``[N, ...]``.

    At prediction, sentences of different lengths share one call and a third or more of
    the ``B x T`` rows can be padding; the encoder's matmuls cost per row, attention is
    the only op that needs the windows laid out. Only for masks whose real tokens are a
    prefix of each window (as the ``lisa_srl`` component lays windows out):
    :meth:`of` returns None for any other mask.
    """

    def __init__(self, mask: Tensor) -> None:
        B, T = mask.shape
        self.shape = (B, T)
        self.lengths = mask.sum(dim=1)  # [B]
        self.index = mask.reshape(-1).nonzero().squeeze(1)  # [N] flat positions b * T + t
        self.window = torch.div(self.index, T, rounding_mode="floor")  # [N]
        self.position = self.index - self.window * T  # [N] offset in the window
        self.start = torch.cumsum(self.lengths, 0) - self.lengths  # [B] first packed row

    @classmethod
    def of(cls, mask: Tensor) -> Optional[Packing]:
        """The packing of ``mask`` [B, T] (True = real token), or None when a window's
        real tokens are not a prefix of it."""
        mask = mask.to(torch.bool)
        lengths = mask.sum(dim=1, keepdim=True)
        prefix = torch.arange(mask.shape[1], device=mask.device)[None, :] < lengths
        if not bool(torch.equal(prefix, mask)):
            return None
        return cls(mask)

    @property
    def n_tokens(self) -> int:
        return int(self.index.shape[0])

    def pack(self, padded: Tensor) -> Tensor:
        """[B, T, ...] -> [N, ...]: the real rows, in window then token order."""
        B, T = self.shape
        return padded.reshape(B * T, *padded.shape[2:]).index_select(0, self.index)

    def unpack(self, packed: Tensor) -> Tensor:
        """[N, ...] -> [B, T, ...], padding rows zero."""
        B, T = self.shape
        out = packed.new_zeros(B * T, *packed.shape[1:])
        out.index_copy_(0, self.index, packed)
        return out.view(B, T, *packed.shape[1:])

    def rows(self, offsets: Tensor) -> Tensor:
        """Window offsets per real token ([N] long, e.g. each token's parent) -> packed
        rows of the same window. Offsets must fall inside the window."""
        return self.start[self.window] + offsets


def head_width(layer: str, width: int, n_heads: int) -> int:
    """Width of each of ``n_heads`` heads splitting ``width``; E200 if they cannot."""
    if n_heads < 1 or width % n_heads != 0:
        raise ValueError(Errors.E200.format(layer=layer, width=width, n_heads=n_heads))
    return width // n_heads


class MultiHeadSelfAttention(nn.Module):
    """Multi-head scaled dot-product self-attention (Vaswani et al. 2017, eqs. 2-3 of
    LISA): A_h = softmax(d_k^-0.5 Q_h K_h^T), M_h = A_h V_h, heads concatenated and
    mixed by an output projection. Padding keys are masked in every softmax; padding
    query rows are computed but meaningless (callers ignore them)."""

    def __init__(self, width: int, n_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.width = width
        self.n_heads = n_heads
        self.head_width = head_width(type(self).__name__, width, n_heads)
        self.qkv = nn.Linear(width, 3 * width)  # Q, K, V of all heads in one matmul
        self.output = nn.Linear(width, width)
        self.dropout = dropout  # on attention probabilities
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_uniform_(self.qkv.weight)
        nn.init.zeros_(self.qkv.bias)
        nn.init.xavier_uniform_(self.output.weight)
        nn.init.zeros_(self.output.bias)

    def forward(self, x: Tensor, mask: Tensor, override_head: Optional[Tensor] = None) -> Tensor:
        """x [B, T, d], mask [B, T] bool (True = real token), override_head [B, T, T]
        (rows: queries, columns: keys; replaces head 0's probabilities) -> [B, T, d]."""
        return self.output(self._mix(self.qkv(x), mask, override_head))

    def forward_packed(
        self, x: Tensor, mask: Tensor, packing: Packing, override_head: Optional[Tensor] = None
    ) -> Tensor:
        """:meth:`forward` on the real tokens only: x [N, d] packed (``packing``) ->
        [N, d]. The Q/K/V and output projections run on the N real rows, the attention
        on the padded windows (padding keys masked as in :meth:`forward`)."""
        context = self._mix(packing.unpack(self.qkv(x)), mask, override_head)
        return self.output(packing.pack(context))

    def _mix(self, qkv: Tensor, mask: Tensor, override_head: Optional[Tensor]) -> Tensor:
        """Q, K, V of all heads [B, T, 3d] -> the heads' outputs concatenated [B, T, d]."""
        B, T, _ = qkv.shape
        H, dh = self.n_heads, self.head_width
        mask = mask.to(torch.bool)
        qkv = qkv.view(B, T, 3, H, dh).permute(2, 0, 3, 1, 4)  # [3, B, H, T, dh]
        q, k, v = qkv[0], qkv[1], qkv[2]  # [B, H, T, dh]
        key_mask = mask[:, None, None, :]  # [B, 1, 1, T]
        p_drop = self.dropout if self.training else 0.0
        if override_head is None:
            context = self._attend(q, k, v, key_mask, p_drop)  # [B, H, T, dh]
        else:
            # head 0 aggregates its values with the given distribution (the parse); no
            # dropout there: teacher-forced one-hot rows must stay one-hot
            given = override_head.to(v.dtype) * key_mask[:, 0]  # [B, T, T]
            head0 = torch.matmul(given, v[:, 0])[:, None]  # [B, 1, T, dh]
            if H > 1:
                rest = self._attend(q[:, 1:], k[:, 1:], v[:, 1:], key_mask, p_drop)
                context = torch.cat([head0, rest], dim=1)  # [B, H, T, dh]
            else:
                context = head0
        return context.transpose(1, 2).reshape(B, T, H * dh)  # heads concatenated

    @staticmethod
    def _attend(q: Tensor, k: Tensor, v: Tensor, key_mask: Tensor, p_drop: float) -> Tensor:
        """Masked scaled dot-product attention, [B, h, T, dh] -> [B, h, T, dh].

        torch's fused kernel (flash / memory-efficient on CPU and GPU) with an additive
        mask of MASK_VALUE, so it computes exactly softmax(QK^T/sqrt(dh) + mask) V."""
        bias = torch.zeros(key_mask.shape, dtype=q.dtype, device=q.device)
        bias = bias.masked_fill(~key_mask, MASK_VALUE)  # [B, 1, 1, T]
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=p_drop)


class EncoderLayer(nn.Module):
    """One LISA self-attention layer (eq. 1): s_j = LN(s_{j-1} + T(s_{j-1})), where T is
    the attention followed by a feed-forward of two linear maps, each followed by leaky
    ReLU (§2.1; the draft's eq. 4 has the same single residual).

    One residual around attention + feed-forward, as the paper writes it, rather than
    Vaswani's two sublayers each with its own residual and LayerNorm."""

    def __init__(self, attention: nn.Module, width: int, ffn_width: int, dropout: float = 0.0):
        super().__init__()
        self.attention = attention
        self.ffn_in = nn.Linear(width, ffn_width)
        self.ffn_out = nn.Linear(ffn_width, width)
        self.dropout = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(width)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for linear in (self.ffn_in, self.ffn_out):
            nn.init.kaiming_uniform_(linear.weight, a=LEAKY_SLOPE, nonlinearity="leaky_relu")
            nn.init.zeros_(linear.bias)
        self.norm.reset_parameters()

    def forward(self, x: Tensor, mask: Tensor, override_head: Optional[Tensor] = None) -> Tensor:
        """x [B, T, d], mask [B, T] -> [B, T, d]."""
        attended = self.attention(x, mask, override_head=override_head)  # [B, T, d]
        return self._feed_forward(x, attended)

    def forward_packed(
        self, x: Tensor, mask: Tensor, packing: Packing, override_head: Optional[Tensor] = None
    ) -> Tensor:
        """:meth:`forward` on the real tokens only: x [N, d] packed -> [N, d] (the
        attention must have ``forward_packed``: see :meth:`packable`)."""
        attention = cast(MultiHeadSelfAttention, self.attention)
        attended = attention.forward_packed(x, mask, packing, override_head=override_head)
        return self._feed_forward(x, attended)

    def packable(self) -> bool:
        """Whether :meth:`forward_packed` can run this layer (its attention has it)."""
        return callable(getattr(self.attention, "forward_packed", None))

    def _feed_forward(self, x: Tensor, attended: Tensor) -> Tensor:
        hidden = F.leaky_relu(self.ffn_in(self.dropout(attended)), LEAKY_SLOPE)  # [..., f]
        transformed = F.leaky_relu(self.ffn_out(self.dropout(hidden)), LEAKY_SLOPE)
        return self.norm(x + self.dropout(transformed))
