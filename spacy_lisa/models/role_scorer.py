"""LISA's bilinear semantic role scorer (§2.4, eq. 6).

s_t^pred = MLP(s_t^(J)), s_t^role = MLP(s_t^(J)) and, per role label l,
s_ftl = [s_f^pred; 1]^T U_l [s_t^role; 1] for predicate f and token t: logits
[frames, tokens, labels] for every predicate of the batch in one pass.

Role scorers share one interface (the LAN scorer of :mod:`spacy_lisa.models.lan_torch` too):
``forward(states [B, T, d], mask [B, T], frame_window [F], frame_pos [F]) -> [F, T, L]``,
frame f being token ``frame_pos[f]`` of window ``frame_window[f]``. The registered
builder ``spacy-lisa.BilinearRoleScorer.v1`` is in :mod:`spacy_lisa.models.lisa`,
which spaCy imports without torch.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import LEAKY_SLOPE
from .biaffine import Biaffine


class BilinearRoleScorer(nn.Module):
    """Predicate MLP + role MLP + per-label bilinear map (eq. 6).

    The bilinear map has bias columns on both sides, so besides the bilinear term it
    learns a per-label score for the role token alone (how likely a token is an ARG0
    whatever the predicate) and for the predicate alone, plus a label bias."""

    def __init__(self, width: int, n_labels: int, hidden: int = 200, dropout: float = 0.0):
        super().__init__()
        self.n_labels = n_labels
        self.pred_mlp = nn.Linear(width, hidden)
        self.role_mlp = nn.Linear(width, hidden)
        self.dropout = nn.Dropout(dropout)
        self.bilinear = Biaffine(hidden, hidden, n_labels, bias_x=True, bias_y=True)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for linear in (self.pred_mlp, self.role_mlp):
            nn.init.kaiming_uniform_(linear.weight, a=LEAKY_SLOPE, nonlinearity="leaky_relu")
            nn.init.zeros_(linear.bias)
        self.bilinear.reset_parameters()

    def forward(
        self, states: Tensor, mask: Tensor, frame_window: Tensor, frame_pos: Tensor
    ) -> Tensor:
        """states [B, T, d], mask [B, T], frame_window [F], frame_pos [F] -> [F, T, L].

        Padding columns are left as computed; the LISA model masks them."""
        pred = self.dropout(
            F.leaky_relu(self.pred_mlp(states[frame_window, frame_pos]), LEAKY_SLOPE)
        )
        role = self.dropout(F.leaky_relu(self.role_mlp(states), LEAKY_SLOPE))  # [B, T, h]
        ones_p = pred.new_ones(pred.shape[0], 1)
        ones_r = role.new_ones(*role.shape[:2], 1)
        pred = torch.cat([pred, ones_p], dim=-1)  # [F, h+1]
        role = torch.cat([role, ones_r], dim=-1)  # [B, T, h+1]
        # contract the predicate side first, then one batched matmul with the frame's
        # window, instead of materialising [F, T, L, h+1]. matmul broadcasts pred over
        # U's labels as it is laid out; einsum("fi,lij->flj") copied U into another
        # layout on every call (~25x slower on CPU)
        pred_u = torch.matmul(pred, self.bilinear.weight)  # [L, F, h+1]
        return torch.bmm(role[frame_window], pred_u.permute(1, 2, 0))  # [F, T, L]
