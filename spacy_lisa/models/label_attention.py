"""Registered builders for the label attention modules (LAL top layer, LAN role scorer).

The torch modules live in :mod:`spacy_lisa.models.lal` and :mod:`spacy_lisa.models.lan`;
this module imports torch only when a builder is *called*, because spaCy may import it
through an entry point just to list or resolve registered functions. The classes are also
reachable from here (``from spacy_lisa.models.label_attention import
LabelAttentionLayer``), loaded on first access.

Both builders return a constructor rather than a module: the LISA model knows its width
(and the number of role labels) only once it is initialised, and calls it then.
"""

from functools import partial
from typing import TYPE_CHECKING, Any, Callable

from spacy.util import registry

if TYPE_CHECKING:
    from torch import nn

    from .lal import LabelAttentionLayer
    from .lan import LabelAttentionRoleDecoder

__all__ = [
    "LabelAttentionLayer",
    "LabelAttentionRoleDecoder",
    "label_attention_layer",
    "lan_role_scorer",
]


@registry.architectures("spacy-lisa.LabelAttentionLayer.v1")
def label_attention_layer(
    n_heads: int = 8,
    head_width: int = 32,
    ffn: bool = False,
    residual_dropout: float = 0.0,
    dropout: float = 0.1,
) -> Callable[[int], "nn.Module"]:
    """A Label Attention Layer for the top of the LISA encoder: width -> module.

    n_heads: attention heads (e.g. one per role label). head_width: query/key/value size
    per head. ffn: add the position-wise feed-forward (off keeps head slices
    attributable). residual_dropout: dropout on each head's context contribution (the
    paper found 0 best). dropout: attention (and feed-forward) dropout.
    """

    # a partial of a module-level function, not a closure, so that pipelines pickle
    return partial(
        _make_label_attention_layer,
        n_heads=n_heads,
        head_width=head_width,
        ffn=ffn,
        residual_dropout=residual_dropout,
        dropout=dropout,
    )


def _make_label_attention_layer(
    width: int, *, n_heads: int, head_width: int, ffn: bool, residual_dropout: float, dropout: float
) -> "nn.Module":
    from .lal import LabelAttentionLayer

    return LabelAttentionLayer(
        width, n_heads, head_width, ffn=ffn, residual_dropout=residual_dropout, dropout=dropout
    )


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
    from .lan import LabelAttentionRoleDecoder

    return LabelAttentionRoleDecoder(
        width,
        n_labels,
        n_layers=n_layers,
        n_heads=n_heads,
        hidden_width=hidden_width,
        dropout=dropout,
    )


def __getattr__(name: str) -> Any:
    # lazy re-export of the torch classes, so importing this module stays torch-free
    if name == "LabelAttentionLayer":
        from .lal import LabelAttentionLayer

        return LabelAttentionLayer
    if name == "LabelAttentionRoleDecoder":
        from .lan import LabelAttentionRoleDecoder

        return LabelAttentionRoleDecoder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
