"""``spacy-lisa serve``: the pipeline over HTTP, with micro-batching (needs the
``spacy-lisa[serve]`` extra: FastAPI, uvicorn, prometheus_client).

Modules: :mod:`.settings` (limits and batching options), :mod:`.batcher` (requests
gathered into ``nlp.pipe`` batches on a worker thread), :mod:`.tasks` (what a request
asks of its documents: predict's records or the render view), :mod:`.model_process`
(the pipeline in a child process), :mod:`.service` (the pipeline behind the batcher),
:mod:`.schemas` and :mod:`.validation` (the API's JSON and its
checks), :mod:`.metrics` (Prometheus), :mod:`.middleware` (in-flight count, drain,
body limit), :mod:`.page` (the demo page), :mod:`.app` (the FastAPI app), :mod:`.server`
(uvicorn with a graceful drain) and :mod:`.ray_serve` (the same app on Ray Serve).

From Python::

    from spacy_lisa.serve import ServeSettings, SRLService, create_app, serve

    service = SRLService.load("training/lisa_cpu/model-best", ServeSettings(batch_size=32))
    serve(service, host="127.0.0.1", port=8080)     # or: app = create_app(service)
"""

from importlib import import_module
from typing import Any

from .settings import ServeSettings

# imported on first use: the settings (and the CLI's options) need no FastAPI
_LAZY = {"create_app": ".app", "serve": ".server", "SRLService": ".service"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SRLService", "ServeSettings", "create_app", "serve"]
