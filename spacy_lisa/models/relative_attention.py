"""FLAT-style relative span positions for self-attention (Li et al. 2020).

Every unit of the sequence is a span with a head and a tail position (plain tokens:
``head = tail = index``; wordpieces or multi-token units: first and last position). Between
units i and j the four distances

    d_hh = head_i - head_j,  d_ht = head_i - tail_j,
    d_th = tail_i - head_j,  d_tt = tail_i - tail_j

are each encoded with sinusoids and fused into one relation vector

    R_ij = ReLU(W_r [p(d_hh) ; p(d_th) ; p(d_ht) ; p(d_tt)] + b_r)        # [d_r]

which enters XLNet / Transformer-XL style attention per head:

    A_ij = q_i.k_j + q_i.(W_kR R_ij) + u.k_j + v.(W_kR R_ij)

with two learned global bias vectors u ("content") and v ("position") per head. A
sinusoid of a *signed* distance has odd sine components, so the scores can tell left
from right, which absolute sinusoids added to the input cannot do reliably.

Memory
------
For plain tokens (``tail_pos`` absent or equal to ``head_pos``) all four distances are
one number, so R depends only on ``i - j``: it is built once per distance ([2P+1, d_r],
P = position range) and the scores are gathered from a [B, H, T, 2P+1] product; cost is
O(B·H·T²) like ordinary attention. For real spans R is materialised as [B, T, T, d_r]
floats (plus about as much again for autograd): 4·B·T²·d_r bytes each, e.g. 32 MiB for
B=8, T=128, d_r=64. Fine for T <= 256 at small ``rel_width``; lower ``rel_width`` (the
keyword option, default ``width``) for longer windows.

This module knows nothing of spaCy; it is built by the LISA Thinc model when its
``positions`` option is ``"relative"``.
"""

from __future__ import annotations

import math
from typing import Optional, Tuple

import torch
from torch import Tensor, nn

from ..errors import Errors
from .attention import head_width
from .types import MASK_VALUE


def sinusoid_encoding(distances: Tensor, dim: int) -> Tensor:
    """Sinusoidal encoding of (signed) distances: [K] -> [K, dim].

    Sines in the first half, cosines in the second (rather than interleaved): a fixed
    permutation of the usual layout, which the following linear map absorbs.
    """
    half = dim // 2
    # frequencies 1 / 10000^(2k/dim), as in Vaswani et al. and FLAT
    freq = torch.exp(
        torch.arange(half, device=distances.device, dtype=torch.float32)
        * (-math.log(10000.0) / max(half, 1))
    )
    angles = distances.to(torch.float32)[:, None] * freq[None, :]  # [K, half]
    enc = torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)  # [K, 2*half]
    if dim % 2:  # odd width: one constant-zero column keeps the shape
        enc = torch.cat([enc, enc.new_zeros(enc.shape[0], 1)], dim=-1)
    return enc


class RelativeMultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention with FLAT relative span positions.

    Same call signature as the absolute-position ``MultiHeadSelfAttention`` of the LISA
    encoder, so ``EncoderLayer`` can use either: it returns the attention sublayer's
    output only (the residual, LayerNorm and feed-forward are the encoder layer's job).
    """

    def __init__(
        self,
        width: int,
        n_heads: int,
        dropout: float,
        *,
        rel_width: Optional[int] = None,
    ) -> None:
        super().__init__()
        self.width = width
        self.n_heads = n_heads
        self.head_width = head_width(type(self).__name__, width, n_heads)
        # d_r: width of the sinusoids and of the fused relation vector R_ij
        self.rel_width = rel_width if rel_width is not None else width
        if self.rel_width < 2:
            raise ValueError(Errors.E202.format(value=self.rel_width))
        self.query = nn.Linear(width, width)  # W_q
        self.key = nn.Linear(width, width)  # W_kE
        self.value = nn.Linear(width, width)
        # W_r: the concatenation order [hh, th, ht, tt] follows the FLAT paper
        self.rel_fuse = nn.Linear(4 * self.rel_width, self.rel_width)
        self.rel_key = nn.Linear(self.rel_width, width, bias=False)  # W_kR
        self.content_bias = nn.Parameter(torch.empty(n_heads, self.head_width))  # u
        self.position_bias = nn.Parameter(torch.empty(n_heads, self.head_width))  # v
        self.output = nn.Linear(width, width)
        self.dropout = nn.Dropout(dropout)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for linear in (self.query, self.key, self.value, self.rel_fuse, self.output):
            nn.init.xavier_uniform_(linear.weight)
            nn.init.zeros_(linear.bias)
        nn.init.xavier_uniform_(self.rel_key.weight)
        # small random rather than zero so u and v break symmetry between heads at once
        nn.init.normal_(self.content_bias, std=0.02)
        nn.init.normal_(self.position_bias, std=0.02)

    def forward(
        self,
        x: Tensor,
        mask: Tensor,
        override_head: Optional[Tensor] = None,
        head_pos: Optional[Tensor] = None,
        tail_pos: Optional[Tensor] = None,
    ) -> Tensor:
        """x [B, T, d], mask [B, T] (True = real token) -> [B, T, d].

        ``override_head`` [B, T, T] replaces head 0's attention probabilities (the LISA
        syntactic head); ``head_pos`` / ``tail_pos`` [B, T] are the units' span positions
        (default: the token index for both).
        """
        output, _ = self.forward_with_attention(x, mask, override_head, head_pos, tail_pos)
        return output

    def forward_with_attention(
        self,
        x: Tensor,
        mask: Tensor,
        override_head: Optional[Tensor] = None,
        head_pos: Optional[Tensor] = None,
        tail_pos: Optional[Tensor] = None,
    ) -> Tuple[Tensor, Tensor]:
        """Like :meth:`forward`, also returning the attention probabilities
        [B, H, T, T] that weighted the values (after dropout and the override)."""
        B, T, _ = x.shape
        H, dh = self.n_heads, self.head_width
        mask = mask.to(torch.bool)
        # default positions 0..T-1: their range is known without reading a tensor
        default_range = (0, T - 1) if head_pos is None and tail_pos is None else None
        head_pos, tail_pos = self._positions(mask, head_pos, tail_pos)
        q = self.query(x).view(B, T, H, dh)
        k = self.key(x).view(B, T, H, dh)
        v = self.value(x).view(B, T, H, dh)
        # q_i.k_j + u.k_j = (q_i + u).k_j
        content = torch.einsum("bihd,bjhd->bhij", q + self.content_bias, k)  # [B, H, T, T]
        # q_i.(W_kR R_ij) + v.(W_kR R_ij) = ((q_i + v) W_kR) . R_ij: project the query
        # side into relation space once per token instead of every R_ij into key space
        w_kr = self.rel_key.weight.view(H, dh, self.rel_width)  # [H, dh, d_r]
        q_rel = torch.einsum("bihd,hdr->bihr", q + self.position_bias, w_kr)  # [B,T,H,d_r]
        if tail_pos is None:
            position = self._point_scores(q_rel, head_pos, default_range)
        else:
            position = self._span_scores(q_rel, head_pos, tail_pos)
        scores = (content + position) / math.sqrt(dh)  # [B, H, T, T]
        key_mask = mask[:, None, None, :]  # [B, 1, 1, T]
        scores = scores.masked_fill(~key_mask, MASK_VALUE)
        # multiplying by the mask makes padding weights exactly 0 (not just ~1e-4000)
        # and keeps all-padding rows at 0 rather than NaN
        probs = torch.softmax(scores, dim=-1) * key_mask
        probs = self.dropout(probs)
        if override_head is not None:
            # the injected parse is used as given (no dropout: teacher-forced one-hot
            # rows must stay one-hot); columns on padding are zeroed like the others
            given = override_head.to(probs.dtype)[:, None] * key_mask  # [B, 1, T, T]
            probs = torch.cat([given, probs[:, 1:]], dim=1)
        context = torch.einsum("bhij,bjhd->bihd", probs, v).reshape(B, T, H * dh)
        output = self.output(context) * mask[..., None]  # [B, T, d], padding rows 0
        return output, probs

    def _positions(
        self, mask: Tensor, head_pos: Optional[Tensor], tail_pos: Optional[Tensor]
    ) -> Tuple[Tensor, Optional[Tensor]]:
        """Validated positions: head [B, T] and tail [B, T] or None (tail == head).

        Padding positions are set to 0: they are masked as keys anyway, and garbage
        values there must not widen the distance table.
        """
        B, T = mask.shape
        if head_pos is None and tail_pos is None:
            arange = torch.arange(T, device=mask.device)
            return arange.expand(B, T), None
        # one of the two given: the other defaults to it (point units)
        head = head_pos if head_pos is not None else tail_pos
        tail = tail_pos if tail_pos is not None else head_pos
        if head is None or tail is None:  # unreachable, narrows the types
            raise ValueError(Errors.E201.format(name="head_pos", shape=None, expected=(B, T)))
        for name, pos in (("head_pos", head), ("tail_pos", tail)):
            if tuple(pos.shape) != (B, T):
                raise ValueError(
                    Errors.E201.format(name=name, shape=tuple(pos.shape), expected=(B, T))
                )
        head = head.long().masked_fill(~mask, 0)
        tail = tail.long().masked_fill(~mask, 0)
        if bool((tail < head).any()):
            raise ValueError(Errors.E203)
        if torch.equal(tail, head):
            return head, None
        return head, tail

    def _distance_table(self, lo: int, hi: int, device: torch.device) -> Tuple[Tensor, int]:
        """Sinusoids of every distance in [-(hi - lo), hi - lo]: ([2P+1, d_r], P)."""
        span = hi - lo
        distances = torch.arange(-span, span + 1, device=device)  # [K], K = 2P+1
        return sinusoid_encoding(distances, self.rel_width), span

    def _point_scores(
        self, q_rel: Tensor, pos: Tensor, known_range: Optional[Tuple[int, int]] = None
    ) -> Tensor:
        """Relative scores when head = tail: [B, T, H, d_r], [B, T] -> [B, H, T, T].

        ``known_range``: (min, max) of ``pos`` if known, saving a device sync."""
        B, T, H, _ = q_rel.shape
        lo, hi = known_range if known_range is not None else (int(pos.min()), int(pos.max()))
        table, span = self._distance_table(lo, hi, q_rel.device)
        table = table.to(q_rel.dtype)
        # all four distances are equal, so R depends on one distance only: [K, d_r]
        rel = torch.relu(self.rel_fuse(table.repeat(1, 4)))
        by_distance = torch.einsum("bihr,kr->bhik", q_rel, rel)  # [B, H, T, K]
        index = pos[:, :, None] - pos[:, None, :] + span  # [B, T, T] in [0, K)
        return by_distance.gather(-1, index[:, None].expand(B, H, T, T))

    def _span_scores(self, q_rel: Tensor, head: Tensor, tail: Tensor) -> Tensor:
        """Relative scores for spans: [B, T, H, d_r], [B, T], [B, T] -> [B, H, T, T]."""
        lo = min(int(head.min()), int(tail.min()))
        hi = max(int(head.max()), int(tail.max()))
        table, span = self._distance_table(lo, hi, q_rel.device)
        table = table.to(q_rel.dtype)  # [K, d_r]
        d_r = self.rel_width
        weight = self.rel_fuse.weight  # [d_r, 4 d_r]
        # W_r [p_hh; p_th; p_ht; p_tt] = sum_k W_r^k p_k: project the K distinct
        # distances once per block, then gather per pair, instead of projecting a
        # [B, T, T, 4 d_r] concatenation
        blocks = [table @ weight[:, i * d_r : (i + 1) * d_r].T for i in range(4)]  # [K, d_r]
        pairs = (
            (head, head),  # d_hh
            (tail, head),  # d_th
            (head, tail),  # d_ht
            (tail, tail),  # d_tt
        )
        rel = self.rel_fuse.bias.expand(*head.shape, head.shape[1], d_r).clone()
        for block, (left, right) in zip(blocks, pairs, strict=True):
            index = left[:, :, None] - right[:, None, :] + span  # [B, T, T]
            rel += block[index]  # in place: one [B, T, T, d_r] buffer
        rel = torch.relu(rel)  # R_ij, [B, T, T, d_r]
        return torch.einsum("bihr,bijr->bhij", q_rel, rel)
