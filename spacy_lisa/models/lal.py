"""Registered builder of the Label Attention Layer (Mrini et al. 2019):
``spacy-lisa.LabelAttentionLayer.v1``, a top layer for the LISA encoder.

The torch module is :class:`~.lal_torch.LabelAttentionLayer`; this module imports torch
only when the builder is *called*, because spaCy may import it through an entry point
just to list or resolve registered functions. The builder returns a constructor rather
than a module: the LISA model knows its width only once it is initialised, and calls it
then.
"""

from functools import partial
from typing import TYPE_CHECKING, Callable

from spacy.util import registry
from thinc.api import ConfigValidationError

from ..errors import Errors

if TYPE_CHECKING:
    from torch import nn


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
    attributable). dropout: attention (and feed-forward) dropout. residual_dropout:
    removed, 0 only (E053), so that configs saved with it load.
    """
    if residual_dropout != 0:
        raise ConfigValidationError(title=Errors.E053.format(value=residual_dropout), desc="")
    # a partial of a module-level function, not a closure, so that pipelines pickle
    return partial(
        _make_label_attention_layer,
        n_heads=n_heads,
        head_width=head_width,
        ffn=ffn,
        dropout=dropout,
    )


def _make_label_attention_layer(
    width: int, *, n_heads: int, head_width: int, ffn: bool, dropout: float
) -> "nn.Module":
    from .lal_torch import LabelAttentionLayer

    return LabelAttentionLayer(width, n_heads, head_width, ffn=ffn, dropout=dropout)
