"""Plain torch part of ``spacy-lisa.TransformerTok2Vec.v1`` (no spaCy imports).

:class:`TransformerTokenEncoder` runs a Hugging Face encoder over padded sub-batches of
wordpiece windows, pools wordpieces into tokens *inside torch* (so only the final
``[n_tokens, H]`` tensor crosses into Thinc) and optionally mixes all hidden layers
ELMo-style (softmax weights times a learned gamma).

A marked predicate (the predicate-aware architecture's second pass) reaches the
transformer in one of two ways (``predicate_mark``):

- ``"token_type"``: its wordpieces get token type 1 (BERT-style encoders with two token
  types: BERT, ELECTRA, MiniLM), the pretrained segment-B embedding;
- ``"indicator"``: a learned vector is added to its wordpieces' input word embeddings
  (``inputs_embeds``), for encoders with fewer token types (RoBERTa and XLM-R: 1;
  DistilBERT, DeBERTa-v3, ModernBERT: none). It starts at zero, so an untrained mark
  changes nothing.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

import torch
from torch import Tensor, nn


@dataclass
class SubBatch:
    """One padded transformer call: ``input_ids``/``attention_mask`` [B, L];
    ``token_index`` [B*L]: the global token row each wordpiece pools into, -1 for
    special tokens, padding and (with first-piece pooling) non-first pieces."""

    input_ids: Tensor
    attention_mask: Tensor
    token_index: Tensor
    # [B, L]: 1 on the wordpieces of a marked predicate, else 0 (predicate-aware
    # encoding), passed as the encoder's predicate_mark says; None: no mark
    marks: Optional[Tensor] = None


@dataclass
class EncoderInputs:
    """All transformer work of one Thinc batch. ``n_tokens``: spaCy tokens in the batch
    (all docs, concatenated in doc order). ``cached``: [K, n_tokens, H] pooled layer
    outputs already known (cache hits; zeros elsewhere) or None."""

    sub_batches: List[SubBatch]
    n_tokens: int
    cached: Optional[Tensor] = None
    return_layers: bool = False
    extra: dict = field(default_factory=dict)


class TransformerTokenEncoder(nn.Module):
    """HF encoder + wordpiece->token pooling + optional scalar mix.

    Built empty (the Thinc layer loads the weights at ``initialize`` or from bytes) and
    completed with :meth:`build`, which also takes how a predicate is marked
    (``"token_type"`` or ``"indicator"``: see the module docstring).
    """

    def __init__(
        self,
        *,
        pooling: str = "mean",
        layer_mix: bool = False,
        frozen: bool = False,
        autocast: bool = False,
    ) -> None:
        super().__init__()
        self.pooling = pooling
        self.layer_mix = layer_mix
        self.frozen = frozen
        self.autocast = autocast
        # a Hugging Face PreTrainedModel (typed Any: its config is dynamic)
        self.transformer: Any = None
        self.mix_weights: Optional[nn.Parameter] = None
        self.mix_gamma: Optional[nn.Parameter] = None
        self.predicate_mark = "token_type"
        # [2, E] (E: the input word embeddings' width); row 0 is padding_idx, so it stays
        # zero and the unmarked wordpieces' input is the transformer's own
        self.predicate_indicator: Optional[nn.Embedding] = None

    @property
    def built(self) -> bool:
        return self.transformer is not None

    @property
    def n_layers(self) -> int:
        """K: hidden states the pooled output holds (all incl. embeddings with the mix)."""
        assert self.transformer is not None
        return int(self.transformer.config.num_hidden_layers) + 1 if self.layer_mix else 1

    @property
    def width(self) -> int:
        assert self.transformer is not None
        return int(self.transformer.config.hidden_size)

    def build(self, transformer: Any, *, predicate_mark: str = "token_type") -> None:
        """Take the HF model; ``predicate_mark``: ``"token_type"`` or ``"indicator"``
        (which adds :attr:`predicate_indicator`, zero)."""
        self.transformer = transformer
        self.predicate_mark = predicate_mark
        if predicate_mark == "indicator":
            n_embed = int(transformer.get_input_embeddings().weight.shape[1])
            self.predicate_indicator = nn.Embedding(2, n_embed, padding_idx=0)
            nn.init.zeros_(self.predicate_indicator.weight)
        if self.frozen:
            for param in transformer.parameters():
                param.requires_grad_(False)
            transformer.eval()
        if self.layer_mix:
            n = int(transformer.config.num_hidden_layers) + 1
            self.mix_weights = nn.Parameter(torch.zeros(n))  # softmax(0) = uniform mix
            self.mix_gamma = nn.Parameter(torch.ones(1))

    def train(self, mode: bool = True) -> TransformerTokenEncoder:
        super().train(mode)
        # a frozen transformer stays in eval mode: no dropout, deterministic outputs
        # (which is what makes caching its pooled outputs valid)
        if self.frozen and self.transformer is not None:
            self.transformer.eval()
        return self

    def forward(self, inputs: EncoderInputs) -> Tuple[Tensor, Optional[Tensor]]:
        """Return the token vectors [n_tokens, H] and, if ``inputs.return_layers``, the
        pooled per-layer outputs [K, n_tokens, H] (what the cache stores)."""
        assert self.transformer is not None, "TransformerTokenEncoder not built"
        device = self._device()
        K, H = self.n_layers, self.width
        sums = torch.zeros(K, inputs.n_tokens, H, device=device)
        counts = torch.zeros(inputs.n_tokens, device=device)
        for sub in inputs.sub_batches:
            # a frozen transformer runs without gradients, except on marked windows with
            # the indicator: its gradient flows through the (fixed) transformer
            learns_mark = self.predicate_indicator is not None and sub.marks is not None
            frozen = self.frozen and not learns_mark
            with torch.no_grad() if frozen else contextlib.nullcontext():
                layers = self._run(sub)  # [K, B, L, H] float32
            flat = layers.reshape(K, -1, H)
            valid = sub.token_index >= 0
            # pooling as one index_add_ per sub-batch: no Python loop over tokens
            index = sub.token_index[valid]
            sums.index_add_(1, index, flat[:, valid])
            counts.index_add_(0, index, torch.ones_like(index, dtype=counts.dtype))
        # tokens without any wordpiece (whitespace) keep a zero vector
        pooled = sums / counts.clamp(min=1.0)[None, :, None]
        if inputs.cached is not None:
            # cached and computed rows are disjoint: the computed rows are zero where a
            # cached row is, and vice versa
            pooled = pooled + inputs.cached.to(device=device, dtype=pooled.dtype)
        if self.layer_mix:
            assert self.mix_weights is not None and self.mix_gamma is not None
            weights = torch.softmax(self.mix_weights, dim=0)
            output = self.mix_gamma * torch.einsum("k,knh->nh", weights, pooled)
        else:
            output = pooled[0]
        return output, (pooled.detach() if inputs.return_layers else None)

    def _run(self, sub: SubBatch) -> Tensor:
        assert self.transformer is not None
        with self._autocast():
            out = self.transformer(
                attention_mask=sub.attention_mask,
                **self._inputs(sub),
                output_hidden_states=self.layer_mix,
                return_dict=True,
            )
        if self.layer_mix:
            layers = torch.stack(out.hidden_states, dim=0)
        else:
            layers = out.last_hidden_state.unsqueeze(0)
        return layers.float()

    def _inputs(self, sub: SubBatch) -> dict:
        """The transformer's input: the wordpiece ids, with the marks as token types or
        as the indicator added to the word embeddings (``inputs_embeds``: the model adds
        its positions, token types and normalisation as it does to its own lookup)."""
        if sub.marks is None:
            return {"input_ids": sub.input_ids}
        if self.predicate_indicator is None:
            return {"input_ids": sub.input_ids, "token_type_ids": sub.marks}
        embeds = self.transformer.get_input_embeddings()(sub.input_ids)  # [B, L, E]
        return {"inputs_embeds": embeds + self.predicate_indicator(sub.marks)}

    def extra_repr(self) -> str:
        return (
            f"pooling={self.pooling!r}, layer_mix={self.layer_mix}, frozen={self.frozen}, "
            f"predicate_mark={self.predicate_mark!r}"
        )

    def _autocast(self) -> Any:
        """The autocast context of a transformer call: none without ``autocast``, else
        the dtype chosen for the device (:func:`spacy_lisa.device.autocast_dtype`; with
        gradients only where it keeps them exact enough)."""
        from ..device import autocast_dtype

        if not self.autocast:
            return contextlib.nullcontext()
        device = self._device()
        dtype = autocast_dtype(device, training=torch.is_grad_enabled())
        if dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=device.type, dtype=dtype)

    def _device(self) -> torch.device:
        assert self.transformer is not None
        return next(self.transformer.parameters()).device
