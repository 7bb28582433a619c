"""The shim of ``spacy-lisa.TransformerTok2Vec.v1`` (:mod:`.transformer`): the torch
encoder with its tokenizer, saved and loaded without the original model directory; the
learning rate of the transformer weights (``learn_rate_scale``); the wordpieces of the
windows it has seen and the cache of a frozen transformer's outputs.

spaCy imports the tok2vec through an entry point: torch and transformers are imported
inside functions only."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Tuple, cast

import numpy
import srsly
from thinc.api import Optimizer, torch2xp, xp2torch
from thinc.types import FloatsXd
from thinc.util import get_torch_default_device

from ..errors import Errors
from ..patches import AveragedPyTorchShim
from .pretrained import ModelSource, float32_weights, load_tokenizer
from .wordpieces import Pieces, WindowCache, prefix_spaced, special_ids

if TYPE_CHECKING:
    from .transformer_torch import TransformerTokenEncoder


# the wordpieces of windows already tokenised, by their words: EWT's training sentences
# (about 205,000 words) fit many times over, so that every epoch after the first calls
# the tokenizer for no sentence; a few tens of MB at most
PIECE_CACHE_TOKENS = 1_000_000


class TransformerShim(AveragedPyTorchShim):
    """Holds the encoder, the tokenizer, the wordpieces of the windows it has seen and
    the frozen-output cache.

    ``to_bytes`` stores the HF config, the tokenizer files, the predicate mark and the
    state dict (of a cut encoder: its config and weights of the blocks kept), so that
    ``from_bytes`` rebuilds everything without the original model directory.
    ``finish_update`` scales the learning rate of the transformer weights.
    """

    def __init__(
        self,
        model: Any,
        *,
        learn_rate_scale: float = 1.0,
        cache_tokens: int = 0,
    ):
        super().__init__(model)
        self.tokenizer: Any = None
        # the special token ids the tokenizer puts before and after a window's pieces
        self.special_ids: Tuple[List[int], List[int]] = ([], [])
        self.learn_rate_scale = learn_rate_scale
        self.cache: WindowCache[numpy.ndarray] = WindowCache(cache_tokens)
        self.pieces: WindowCache[Pieces] = WindowCache(PIECE_CACHE_TOKENS)

    @property
    def encoder(self) -> TransformerTokenEncoder:
        return self._model

    def build(self, transformer: Any, tokenizer: Any, *, predicate_mark: str) -> None:
        """Take the HF model and its (prefix-spaced) tokenizer; ``predicate_mark`` is
        resolved: "token_type" or "indicator"."""
        self.encoder.build(transformer, predicate_mark=predicate_mark)
        # the device thinc runs on (the GPU after spacy train --gpu-id 0 or require_gpu),
        # not self.device: that is where the encoder's first parameter lives, i.e. the
        # freshly loaded transformer's, always the CPU
        self._model.to(get_torch_default_device())
        self.tokenizer = tokenizer
        self.special_ids = special_ids(tokenizer)
        self.cache.clear()
        self.pieces.clear()

    def finish_update(self, optimizer: Optimizer) -> None:
        # as PyTorchShim.finish_update, plus lr_scale: the transformer's weights take
        # learn_rate_scale x the schedule's rate (e.g. 1e-3 x 0.05 = 5e-5), the scalar mix
        # and the predicate indicator the full rate: learn_rate_scale keeps fine-tuning
        # from wrecking pretrained weights, while these start from nothing (the indicator
        # at zero) and, scaled down, would hardly move in a fine-tuning budget; a
        # LayerNorm follows the embedding sum in every supported encoder, so a grown
        # indicator cannot blow up the transformer's input
        for name, param in self._model.named_parameters():
            if param.grad is None:
                continue
            if not self._grad_scaler.found_inf:
                scale = self.learn_rate_scale if name.startswith("transformer.") else 1.0
                weights, _ = optimizer(
                    (self.id, name),
                    cast(FloatsXd, torch2xp(param.data)),
                    cast(FloatsXd, torch2xp(param.grad)),
                    lr_scale=scale,
                )
                param.data = xp2torch(weights, requires_grad=True, device=param.device)
            param.grad.zero_()
        self._grad_scaler.update()

    def to_bytes(self) -> bytes:
        import torch

        msg: Dict[str, Any] = {"hf_config": None, "tokenizer": None, "state": None}
        if self.encoder.built:
            msg["hf_config"] = self.encoder.transformer.config.to_dict()
            msg["predicate_mark"] = self.encoder.predicate_mark
            with tempfile.TemporaryDirectory() as tmp:
                self.tokenizer.save_pretrained(tmp)
                msg["tokenizer"] = {
                    p.name: p.read_bytes() for p in Path(tmp).iterdir() if p.is_file()
                }
            buf = io.BytesIO()
            torch.save(self._model.state_dict(), buf)
            msg["state"] = buf.getvalue()
        return srsly.msgpack_dumps(msg)

    def from_bytes(self, bytes_data: bytes) -> TransformerShim:
        import torch
        from transformers import CONFIG_MAPPING, AutoConfig, AutoModel

        msg = srsly.msgpack_loads(bytes_data)
        if msg["hf_config"] is None:
            return self
        if not self.encoder.built:
            hf_config = dict(msg["hf_config"])
            model_type = hf_config.pop("model_type")
            if model_type not in CONFIG_MAPPING:
                reason = f"it does not know the model type {model_type!r}"
                raise ValueError(_rebuild_error(hf_config, reason))
            config = AutoConfig.for_model(model_type, **hf_config)
            # the saved blocks are those num_layers kept: none above them to cut again
            num_layers, saved = self.encoder.num_layers, int(config.num_hidden_layers)
            if num_layers is not None and num_layers != saved:
                raise ValueError(Errors.E194.format(value=num_layers, saved=saved))
            with tempfile.TemporaryDirectory() as tmp:
                for fname, data in msg["tokenizer"].items():
                    (Path(tmp) / fname).write_bytes(data)
                try:
                    tokenizer = load_tokenizer(ModelSource(tmp, tmp, local=True))
                except (ValueError, ImportError) as err:  # a tokenizer class it lacks
                    first = str(err).strip().splitlines()[0] if str(err).strip() else ""
                    reason = f"its tokenizer does not load ({first or type(err).__name__})"
                    raise ValueError(_rebuild_error(hf_config, reason)) from err
            transformer = AutoModel.from_config(config, **float32_weights())
            self.build(transformer, prefix_spaced(tokenizer), predicate_mark=msg["predicate_mark"])
        state = torch.load(io.BytesIO(msg["state"]), map_location=self.device, weights_only=True)
        self._model.load_state_dict(state)
        self.cache.clear()
        return self


def _rebuild_error(hf_config: Dict[str, Any], reason: str) -> str:
    """E191 for a saved transformer the installed transformers cannot rebuild."""
    import transformers

    saved = hf_config.get("transformers_version", "(unknown)")
    return Errors.E191.format(installed=transformers.__version__, saved=saved, reason=reason)


__all__ = ["TransformerShim"]
