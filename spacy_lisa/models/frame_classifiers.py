"""The per-predicate classifiers of the LISA network (:mod:`.lisa_torch`): the frame
classifier (roleset, lemma edit tree and UPOS over one MLP) and the separate sense
classifier of ``sense_head = "separate"`` / ``"separate_context"``."""

from __future__ import annotations

from typing import Optional, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import LEAKY_SLOPE
from .types import MASK_VALUE


class FrameClassifier(nn.Module):
    """Per-predicate classifiers on the predicate token's top state: roleset (sense),
    lemma edit tree and UPOS, over one shared MLP (sized like the role scorer's predicate
    MLP). A classifier with 0 classes is left out."""

    def __init__(
        self,
        width: int,
        hidden: int,
        n_senses: int,
        n_lemmas: int,
        n_pos: int,
        dropout: float,
    ) -> None:
        super().__init__()
        self.mlp = nn.Linear(width, hidden)
        self.dropout = nn.Dropout(dropout)
        self.sense = nn.Linear(hidden, n_senses) if n_senses else None
        self.lemma = nn.Linear(hidden, n_lemmas) if n_lemmas else None
        self.pos = nn.Linear(hidden, n_pos) if n_pos else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.kaiming_uniform_(self.mlp.weight, a=LEAKY_SLOPE, nonlinearity="leaky_relu")
        nn.init.zeros_(self.mlp.bias)
        for head in (self.sense, self.lemma, self.pos):
            if head is not None:
                nn.init.xavier_uniform_(head.weight)
                nn.init.zeros_(head.bias)

    def extra_repr(self) -> str:
        sizes = [0 if h is None else h.out_features for h in (self.sense, self.lemma, self.pos)]
        return f"senses={sizes[0]}, lemmas={sizes[1]}, pos={sizes[2]}"

    def forward(
        self, states: Tensor, frame_window: Tensor, frame_pos: Tensor
    ) -> tuple[Optional[Tensor], Optional[Tensor], Optional[Tensor]]:
        """states [B, T, d], frame_window / frame_pos [F] -> logits [F, n] per head."""
        predicates = states[frame_window, frame_pos]  # [F, d]
        hidden = self.dropout(F.leaky_relu(self.mlp(predicates), LEAKY_SLOPE))  # [F, h]
        return tuple(  # type: ignore[return-value]
            None if head is None else head(hidden) for head in (self.sense, self.lemma, self.pos)
        )


class SenseClassifier(nn.Module):
    """The roleset (sense) classifier of ``sense_head = "separate"``: its own MLP on the
    predicate token's top state, read detached, no dropout, and initialised from a copy
    of torch's random stream. Its loss trains it alone, and it draws nothing from the
    random stream the rest of the model uses (no init, no dropout masks), so a model
    trained with it has exactly the roles, tags and parse of the same model trained
    without it: the sense head cannot cost SRL F1.

    ``context`` (``sense_head = "separate_context"``): the MLP also reads a summary of the
    predicate's window, one attention head from the predicate over the window's states
    (the words that tell ``run a company`` from ``run home``)."""

    def __init__(self, width: int, hidden: int, n_senses: int, context: bool = False) -> None:
        super().__init__()
        # nn.Linear initialises itself from the global random stream when built: build
        # on a forked copy, so that the layers built after this one get the same draws
        # as in a model without a sense head
        with torch.random.fork_rng(devices=[]):
            self.query = nn.Linear(width, hidden) if context else None
            self.key = nn.Linear(width, hidden) if context else None
            self.mlp = nn.Linear(2 * width if context else width, hidden)
            self.output = nn.Linear(hidden, n_senses)
            self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.kaiming_uniform_(self.mlp.weight, a=LEAKY_SLOPE, nonlinearity="leaky_relu")
        nn.init.zeros_(self.mlp.bias)
        nn.init.xavier_uniform_(self.output.weight)
        nn.init.zeros_(self.output.bias)
        for layer in (self.query, self.key):
            if layer is not None:
                nn.init.xavier_uniform_(layer.weight)
                nn.init.zeros_(layer.bias)

    def forward(
        self, states: Tensor, mask: Tensor, frame_window: Tensor, frame_pos: Tensor
    ) -> Tensor:
        """states [B, T, d], mask [B, T], frame_window / frame_pos [F] -> roleset
        logits [F, n]."""
        predicates = states[frame_window, frame_pos].detach()  # [F, d]
        features = predicates
        if self.query is not None and self.key is not None:
            window = states.detach()[frame_window]  # [F, T, d]
            keys = self.key(window)  # [F, T, h]
            query = self.query(predicates)  # [F, h]
            logits = torch.einsum("fh,fth->ft", query, keys) / keys.shape[-1] ** 0.5
            logits = logits.masked_fill(~mask[frame_window], MASK_VALUE)
            summary = torch.einsum("ft,ftd->fd", logits.softmax(dim=-1), window)  # [F, d]
            features = torch.cat([predicates, summary], dim=-1)
        return cast(Tensor, self.output(F.leaky_relu(self.mlp(features), LEAKY_SLOPE)))
