"""Plain torch part of ``spacy-lisa.TransformerTok2Vec.v1`` (of spaCy, only its error
catalogue).

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

Partial freezing (``trainable_layers`` = t, between 0 and the number of blocks): the
embeddings and the bottom blocks (with what they share: DeBERTa's relative embeddings,
MPNet's position bias) get no gradient and stay in eval mode, so their output, the
*boundary* state that enters the top t blocks, depends on the window's wordpieces only.
A sub-batch whose boundary states are known (:attr:`SubBatch.boundary`, from the cache
of :mod:`.transformer`) runs only the top blocks: :func:`top_blocks_only` hands the
model its boundary in place of the embeddings' output and the top blocks in place of
all, so that masks, positions and relative biases are computed by the model's own
forward. With the layer mix, the mix weighs the states the trained part sees and makes
(the boundary and the top t outputs).

A cut encoder (``num_layers`` = n): :func:`cut_blocks` keeps the embeddings and the lower
n blocks and sets the HF config to n blocks, before the encoder reaches its device, so
that from then on the top blocks take no memory or time and are not saved; the model's
own forward then runs n blocks (what follows them, ModernBERT's final norm, follows
block n), and everything above (partial freezing, the mix, the caches) sees an n-block
encoder.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Iterator, List, Optional, Tuple

import torch
from torch import Tensor, nn

from ..errors import Errors


@dataclass
class SubBatch:
    """One padded transformer call: ``input_ids``/``attention_mask`` [B, L];
    ``token_index`` [B*L]: the global token row each wordpiece pools into, -1 for
    special tokens and padding."""

    input_ids: Tensor
    attention_mask: Tensor
    token_index: Tensor
    # [B, L]: 1 on the wordpieces of a marked predicate, else 0 (predicate-aware
    # encoding), passed as the encoder's predicate_mark says; None: no mark
    marks: Optional[Tensor] = None
    # the window of each row (a wordpieces.Window)
    windows: List[Any] = field(default_factory=list)
    # [B, L, H]: the boundary states of a partially frozen encoder (cache hits): only
    # the top blocks run; None: the whole encoder runs
    boundary: Optional[Tensor] = None


@dataclass
class EncoderInputs:
    """All transformer work of one Thinc batch. ``n_tokens``: spaCy tokens in the batch
    (all docs, concatenated in doc order). ``cached``: [K, n_tokens, H] pooled layer
    outputs already known (cache hits; zeros elsewhere) or None."""

    sub_batches: List[SubBatch]
    n_tokens: int
    cached: Optional[Tensor] = None
    return_layers: bool = False
    # return the boundary states [B, L, H] of the sub-batches the whole encoder ran on
    return_boundary: bool = False


@dataclass
class EncoderOutput:
    """The token vectors [n_tokens, H]; with ``return_layers`` the pooled per-layer
    outputs [K, n_tokens, H]; with ``return_boundary`` the boundary states per
    sub-batch (None for those that started from a known boundary)."""

    vectors: Tensor
    layers: Optional[Tensor] = None
    boundaries: List[Optional[Tensor]] = field(default_factory=list)


def encoder_blocks(transformer: Any) -> Tuple[Any, str]:
    """The module holding the transformer's list of blocks and that list's attribute:
    ``encoder.layer`` (BERT, RoBERTa, XLM-R, ELECTRA, MPNet, DeBERTa),
    ``transformer.layer`` (DistilBERT), ``layers`` (ModernBERT)."""
    for path in ("encoder.layer", "transformer.layer", "layers"):
        owner: Any = transformer
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent, None)
        if isinstance(getattr(owner, name, None), nn.ModuleList):
            return owner, name
    raise ValueError(Errors.E186.format(model=type(transformer).__name__))


def cut_blocks(transformer: Any, num_layers: int) -> None:
    """Keep ``transformer``'s embeddings and its lower ``num_layers`` blocks: the top blocks
    leave its block list (their weights are freed) and its config says ``num_layers``, so
    that it is saved, rebuilt (``from_config``) and run as a ``num_layers``-block encoder."""
    owner, name = encoder_blocks(transformer)
    setattr(owner, name, nn.ModuleList(list(getattr(owner, name))[:num_layers]))
    config = transformer.config
    config.num_hidden_layers = num_layers  # DistilBERT's n_layers through its attribute_map
    # per-block settings (ModernBERT's layer_types under transformers 5) must match the
    # count when the saved config is read again
    layer_types = getattr(config, "layer_types", None)
    if isinstance(layer_types, list):
        config.layer_types = layer_types[:num_layers]


@contextlib.contextmanager
def top_blocks_only(transformer: Any, n_top: int, boundary: Tensor) -> Iterator[None]:
    """Within the context, ``transformer``'s forward starts from ``boundary`` (what its
    embeddings would have passed on) and runs only its top ``n_top`` blocks: the block
    list is swapped for its top part and the embeddings' output replaced by a hook.
    Restored on exit."""
    owner, name = encoder_blocks(transformer)
    blocks = getattr(owner, name)
    # what feeds the first block: the embeddings, or ELECTRA's projection of them
    entry = getattr(transformer, "embeddings_project", None) or transformer.embeddings
    hook = entry.register_forward_hook(lambda module, args, output: boundary)
    setattr(owner, name, nn.ModuleList(list(blocks)[len(blocks) - n_top :]))
    try:
        yield
    finally:
        setattr(owner, name, blocks)
        hook.remove()


class TransformerTokenEncoder(nn.Module):
    """HF encoder + wordpiece->token pooling + optional scalar mix.

    Built empty (the Thinc layer loads the weights at ``initialize`` or from bytes) and
    completed with :meth:`build`, which cuts the transformer to ``num_layers`` blocks and
    takes how a predicate is marked (``"token_type"`` or ``"indicator"``: see the module
    docstring).
    """

    def __init__(
        self,
        *,
        layer_mix: bool = False,
        frozen: bool = False,
        trainable_layers: Optional[int] = None,
        num_layers: Optional[int] = None,
        autocast: bool = False,
    ) -> None:
        super().__init__()
        self.layer_mix = layer_mix
        self.frozen = frozen
        # the top blocks that train (None: all); resolved against the depth at build
        self.trainable_layers = trainable_layers
        # the lower blocks kept (None: all), cut at build
        self.num_layers = num_layers
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
    def depth(self) -> int:
        """The transformer's number of blocks (those kept, once built)."""
        assert self.transformer is not None
        return int(self.transformer.config.num_hidden_layers)

    @property
    def n_top(self) -> int:
        """The top blocks that train under partial freezing; 0 when frozen or when all
        train (no boundary then)."""
        t = self.trainable_layers
        return t if t is not None and 0 < t < self.depth and not self.frozen else 0

    @property
    def n_layers(self) -> int:
        """K: hidden states the pooled output holds: with the mix all of them incl. the
        embeddings, or under partial freezing the boundary and the top blocks' outputs;
        else 1 (the last)."""
        if not self.layer_mix:
            return 1
        return self.n_top + 1 if self.n_top else self.depth + 1

    @property
    def width(self) -> int:
        assert self.transformer is not None
        return int(self.transformer.config.hidden_size)

    def build(self, transformer: Any, *, predicate_mark: str = "token_type") -> None:
        """Take the HF model, cut to ``num_layers`` blocks (at most its depth: checked by
        the caller); ``predicate_mark``: ``"token_type"`` or ``"indicator"`` (which adds
        :attr:`predicate_indicator`, zero)."""
        if self.num_layers is not None and self.num_layers < int(
            transformer.config.num_hidden_layers
        ):
            cut_blocks(transformer, self.num_layers)
        self.transformer = transformer
        self.predicate_mark = predicate_mark
        if predicate_mark == "indicator":
            n_embed = int(transformer.get_input_embeddings().weight.shape[1])
            self.predicate_indicator = nn.Embedding(2, n_embed, padding_idx=0)
            nn.init.zeros_(self.predicate_indicator.weight)
        if self.trainable_layers == 0:
            self.frozen = True
        if self.frozen:
            for param in transformer.parameters():
                param.requires_grad_(False)
            transformer.eval()
        elif self.n_top:
            for param in self._frozen_part_parameters():
                param.requires_grad_(False)
            self._frozen_modules_eval()
        if self.layer_mix:
            # softmax(0) = uniform mix
            self.mix_weights = nn.Parameter(torch.zeros(self.n_layers))
            self.mix_gamma = nn.Parameter(torch.ones(1))

    def _frozen_part_parameters(self) -> Iterator[nn.Parameter]:
        """Under partial freezing, every transformer weight outside the top blocks and
        what follows them (a final norm, the pooler): the embeddings, the bottom blocks
        and what all blocks share (relative position embeddings)."""
        owner, name = encoder_blocks(self.transformer)
        blocks = getattr(owner, name)
        trained = {
            id(p) for block in list(blocks)[len(blocks) - self.n_top :] for p in block.parameters()
        }
        for module_name in ("final_norm", "pooler"):
            module = getattr(self.transformer, module_name, None)
            if module is not None:
                trained.update(id(p) for p in module.parameters())
        return (p for p in self.transformer.parameters() if id(p) not in trained)

    def _frozen_modules_eval(self) -> None:
        """The embeddings and the bottom blocks in eval mode: no dropout, so that the
        boundary state is a function of the window (what makes caching it valid)."""
        owner, name = encoder_blocks(self.transformer)
        blocks = getattr(owner, name)
        self.transformer.embeddings.eval()
        project = getattr(self.transformer, "embeddings_project", None)  # ELECTRA
        if project is not None:
            project.eval()
        for block in list(blocks)[: len(blocks) - self.n_top]:
            block.eval()

    def train(self, mode: bool = True) -> TransformerTokenEncoder:
        super().train(mode)
        # a frozen transformer (or its frozen part) stays in eval mode: no dropout,
        # deterministic outputs (which is what makes caching them valid)
        if self.transformer is not None:
            if self.frozen:
                self.transformer.eval()
            elif self.n_top:
                self._frozen_modules_eval()
        return self

    def forward(self, inputs: EncoderInputs) -> EncoderOutput:
        """The token vectors [n_tokens, H]; with ``inputs.return_layers`` the pooled
        per-layer outputs [K, n_tokens, H] (what the frozen cache stores); with
        ``inputs.return_boundary`` the boundary states of each sub-batch that ran whole
        (what the partially frozen cache stores)."""
        assert self.transformer is not None, "TransformerTokenEncoder not built"
        device = self._device()
        K, H = self.n_layers, self.width
        sums = torch.zeros(K, inputs.n_tokens, H, device=device)
        counts = torch.zeros(inputs.n_tokens, device=device)
        boundaries: List[Optional[Tensor]] = []
        for sub in inputs.sub_batches:
            # a frozen transformer runs without gradients, except on marked windows with
            # the indicator: its gradient flows through the (fixed) transformer
            learns_mark = self.predicate_indicator is not None and sub.marks is not None
            frozen = self.frozen and not learns_mark
            with torch.no_grad() if frozen else contextlib.nullcontext():
                layers, boundary = self._run(sub)  # [K, B, L, H] float32
            boundaries.append(boundary if inputs.return_boundary else None)
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
        kept = pooled.detach() if inputs.return_layers else None
        return EncoderOutput(output, kept, boundaries)

    def _run(self, sub: SubBatch) -> Tuple[Tensor, Optional[Tensor]]:
        """The sub-batch's layers [K, B, L, H] (float32) and, under partial freezing
        when the whole encoder ran, its boundary states [B, L, H] (detached)."""
        assert self.transformer is not None
        n_top = self.n_top
        hidden_states = self.layer_mix or bool(n_top)
        if sub.boundary is not None:
            assert n_top, "a known boundary needs partial freezing"
            boundary = sub.boundary.to(dtype=torch.float32)
            with top_blocks_only(self.transformer, n_top, boundary), self._autocast():
                out = self.transformer(
                    input_ids=sub.input_ids,
                    attention_mask=sub.attention_mask,
                    output_hidden_states=self.layer_mix,
                    return_dict=True,
                )
            states: Any = out.hidden_states  # (boundary, top outputs...) with the mix
            boundary_out = None
        else:
            with self._autocast():
                out = self.transformer(
                    attention_mask=sub.attention_mask,
                    **self._inputs(sub),
                    output_hidden_states=hidden_states,
                    return_dict=True,
                )
            states = out.hidden_states
            boundary_out = states[len(states) - 1 - n_top].detach().float() if n_top else None
            if n_top and self.layer_mix:
                states = states[len(states) - 1 - n_top :]
        if self.layer_mix:
            layers = torch.stack(states, dim=0)
        else:
            layers = out.last_hidden_state.unsqueeze(0)
        return layers.float(), boundary_out

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
            f"layer_mix={self.layer_mix}, frozen={self.frozen}, "
            f"num_layers={self.num_layers}, predicate_mark={self.predicate_mark!r}"
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
