"""A ``PyTorchShim`` that honours the optimizer's parameter averages.

With ``use_averages = true`` (``[training.optimizer]``) Thinc's optimizer keeps an
exponential moving average of every parameter it updates, and spaCy evaluates and saves
the pipeline inside ``nlp.use_params(optimizer.averages)``. For torch layers that silently
does nothing in Thinc 8.3: ``PyTorchShim.finish_update`` keys each torch parameter's
average by ``(shim.id, name)``, but ``PyTorchShim.use_params`` only looks for string keys
``"pytorch_{id}_{name}"``. The tok2vec's averages were used and the LISA encoder's raw
weights were not. :class:`AveragedPyTorchShim` reads the tuple keys as well.

It also leaves the torch module in eval mode after a prediction: ``PyTorchShim.predict``
switches every submodule to eval and back to train on every call (~2% of ``nlp.pipe``
on lisa_cpu), while ``begin_update`` sets train mode itself.
"""

from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator

from thinc.api import ArgsKwargs, Model, PyTorchShim, xp2torch


class AveragedPyTorchShim(PyTorchShim):
    """``PyTorchShim`` whose :meth:`use_params` also finds ``(shim.id, name)`` keys and
    whose :meth:`predict` leaves the module in eval mode."""

    def predict(self, inputs: ArgsKwargs) -> Any:
        import torch

        if self._model.training:  # begin_update switches back to train mode
            self._model.eval()
        with torch.no_grad():
            with torch.autocast(device_type="cuda", enabled=self._mixed_precision):
                return self._model(*inputs.args, **inputs.kwargs)

    @contextlib.contextmanager
    def use_params(self, params: Dict[Any, Any]) -> Iterator[None]:
        averaged = {
            name: xp2torch(params[(self.id, name)], device=self.device)
            for name, _ in self._model.named_parameters()
            if (self.id, name) in params
        }
        if not averaged:
            # Thinc's own string-keyed form (e.g. params saved by other code)
            with super().use_params(params):
                yield
            return
        backup = {key: value.clone() for key, value in self._model.state_dict().items()}
        # strict=False: buffers and never-updated parameters have no average; they
        # keep their current values
        self._model.load_state_dict(averaged, strict=False)
        try:
            yield
        finally:
            self._model.load_state_dict(backup)


def use_averaged_shim(wrapper: Model) -> Model:
    """Make a ``PyTorchWrapper_v2`` model's shim an :class:`AveragedPyTorchShim` (in
    place; the subclass adds no state, so the shim's model, device and grad scaler stay)."""
    for shim in wrapper.shims:
        if type(shim) is PyTorchShim:
            shim.__class__ = AveragedPyTorchShim
    return wrapper
