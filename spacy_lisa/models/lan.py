"""Registered builder of the LAN role scorer (hierarchically-refined label attention,
Cui & Zhang 2019): ``spacy-lisa.LANRoleScorer.v1``, instead of the bilinear scorer.

The torch module is :class:`~.lan_torch.LabelAttentionRoleDecoder`; this module imports
torch only when the builder is *called*, because spaCy may import it through an entry
point just to list or resolve registered functions. The builder returns a constructor
rather than a module: the LISA model knows its width and the number of role labels only
once it is initialised, and calls it then.
"""

from functools import partial
from typing import TYPE_CHECKING, Callable

from spacy.util import registry

if TYPE_CHECKING:
    from torch import nn


@registry.architectures("spacy-lisa.LANRoleScorer.v1")
def lan_role_scorer(
    n_layers: int = 2,
    n_heads: int = 1,
    hidden_width: int = 200,
    dropout: float = 0.1,
) -> Callable[[int, int], "nn.Module"]:
    """A LAN role scorer (hierarchically-refined label attention over BIO role labels):
    (width, n_labels) -> module returning role logits [F, T, n_labels].

    n_layers: LAN layers (1 = a BiLSTM-softmax classifier). n_heads: heads of the
    intermediate label attention. hidden_width: BiLSTM output and label embedding size
    (even, divisible by n_heads). dropout: on each layer's input.
    """

    return partial(
        _make_lan_role_scorer,
        n_layers=n_layers,
        n_heads=n_heads,
        hidden_width=hidden_width,
        dropout=dropout,
    )


def _make_lan_role_scorer(
    width: int, n_labels: int, *, n_layers: int, n_heads: int, hidden_width: int, dropout: float
) -> "nn.Module":
    from .lan_torch import LabelAttentionRoleDecoder

    return LabelAttentionRoleDecoder(
        width,
        n_labels,
        n_layers=n_layers,
        n_heads=n_heads,
        hidden_width=hidden_width,
        dropout=dropout,
    )
