"""``LisaSRL.cfg``: what ``initialize`` learned from the data, saved with the pipeline,
and the component's options under their names.

spaCy's own components keep their settings in ``self.cfg`` and read them from there, so
``nlp.get_pipe("lisa_srl").cfg[option] = value`` is what a spaCy user writes.
The options live in ``LisaSRL.options`` (:class:`~.options.SRLOptions`, one validated
object that every helper reads); here an option's name reads and sets that object, for
this process only, as the component's attributes do. The learned data alone is stored,
iterated and saved: the options a pipeline loads with are its config's. Setting a key
that is neither raises E043, where a plain dict would keep it and change nothing.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Dict, Mapping, Tuple

from ..errors import Errors
from .labels import empty_label_data
from .options import OPTION_NAMES

if TYPE_CHECKING:
    from .srl_component import LisaSRL

# what initialize() learns (labels.empty_label_data) and the model's dimensions
LEARNED_KEYS: Tuple[str, ...] = (*empty_label_data(), "model_dims")


class ComponentCfg(Dict[str, Any]):
    """A ``lisa_srl`` component's cfg (see the module's docstring). A copy
    (``copy.copy``, ``copy.deepcopy``) is a plain dict of the learned data."""

    def __init__(self, component: LisaSRL, data: Mapping[str, Any]) -> None:
        super().__init__()
        self._component = component
        self.update(data)

    def __getitem__(self, key: str) -> Any:
        if key in OPTION_NAMES:
            return self._component.options.to_config()[key]
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def __contains__(self, key: object) -> bool:
        return key in OPTION_NAMES or super().__contains__(key)

    def __setitem__(self, key: str, value: Any) -> None:
        if key in OPTION_NAMES:  # validated: a bad value raises as the config's would
            component = self._component
            component.options = component.options.replace(**{key: value})
        elif key in LEARNED_KEYS:
            super().__setitem__(key, value)
        else:
            raise KeyError(Errors.E043.format(key=key, options=", ".join(OPTION_NAMES)))

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def load(self, saved: Mapping[str, Any]) -> None:
        """The learned data of a saved cfg (``from_disk``/``from_bytes``). The options
        a pipeline loads with are its config's, so a saved file's option keys are left
        out, and keys of other versions are kept as they are."""
        for key, value in saved.items():
            if key not in OPTION_NAMES:
                super().__setitem__(key, value)

    # a copy holds the data, not the component; pickling keeps the component, whose
    # state holds this cfg (pickle resolves the cycle), with the data as saved
    def __copy__(self) -> Dict[str, Any]:
        return dict(self.items())

    def __deepcopy__(self, memo: Dict[int, Any]) -> Dict[str, Any]:
        return copy.deepcopy(dict(self.items()), memo)

    def __reduce__(self) -> Tuple[Any, ...]:
        return _unpickle, (self._component, dict(self.items()))


def _unpickle(component: LisaSRL, data: Dict[str, Any]) -> ComponentCfg:
    cfg = ComponentCfg(component, {})
    cfg.load(data)
    return cfg
