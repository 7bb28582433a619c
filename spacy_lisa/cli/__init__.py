"""Command-line interface: ``spacy-lisa COMMAND`` or ``python -m spacy_lisa COMMAND``."""

import importlib

from ._app import app, convert_app

# each module registers its commands on `app` / `convert_app` when imported
_COMMAND_MODULES = ("convert", "ensemble", "export", "evaluate", "predict", "render", "serve")
for _name in _COMMAND_MODULES:
    try:
        importlib.import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as err:  # a command module not written yet
        if err.name != f"{__name__}.{_name}":
            raise


def main() -> None:
    app()


__all__ = ["app", "convert_app", "main"]
