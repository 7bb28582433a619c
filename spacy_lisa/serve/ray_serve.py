"""The same app on Ray Serve: N replicas, each holding one pipeline and its own
micro-batcher, behind Ray Serve's HTTP proxy (``spacy-lisa serve --engine ray``).

Each replica builds the FastAPI app of :mod:`.app` around its loaded pipeline
(``@serve.ingress`` with ``__serve_build_asgi_app__``), so the endpoints, records and
errors are those of the single-process server. Ray Serve routes each request to a
replica; ``max_ongoing_requests`` lets a replica hold enough requests to fill a batch,
and ``max_queued_requests`` bounds the proxy's queue (Ray answers 503 past it). Replicas
drain on shutdown (``graceful_shutdown_timeout_s``). ``/metrics`` is per replica (Ray
exports its own request metrics for the whole application).

For ``serve run`` / ``serve deploy`` on a cluster, :func:`app_builder` is the import
path: ``serve run spacy_lisa.serve.ray_serve:app_builder model=/shared/model replicas=4``
(``predicate_pos=VERB,AUX`` as ``--predicate-pos``).
"""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Optional

from fastapi import FastAPI
from ray import serve
from ray.serve.deployment import Application

from ..errors import Errors
from .app import create_app
from .service import SRLService
from .settings import ServeSettings

APP_NAME = "spacy-lisa"


@serve.deployment(name="LisaSRL")
@serve.ingress()
class LisaSRLDeployment:
    """One replica: the pipeline, loaded once, served by the app of :mod:`.app`."""

    def __init__(
        self,
        model: str,
        settings: Dict[str, Any],
        use_gpu: bool = False,
        srl_options: Optional[Dict[str, Any]] = None,
    ) -> None:
        # Ray gives a replica with num_gpus its GPU as device 0 (CUDA_VISIBLE_DEVICES)
        self.service = SRLService.load(
            model, ServeSettings(**settings), gpu_id=0 if use_gpu else -1, srl_options=srl_options
        )

    def __serve_build_asgi_app__(self) -> FastAPI:
        return create_app(self.service)

    def check_health(self) -> None:
        """Ray Serve calls this periodically; a dead batcher gets the replica replaced."""
        if not self.service.batcher.running:
            raise RuntimeError(Errors.E429)


def application(
    model: str,
    settings: ServeSettings,
    *,
    replicas: int = 1,
    replica_cpus: float = 1.0,
    replica_gpus: float = 0.0,
    srl_options: Optional[Mapping[str, Any]] = None,
) -> Application:
    """The deployment bound to its arguments, ready for ``serve.run``; every replica
    sets ``srl_options`` (``--predicate-pos``) on its ``lisa_srl``."""
    if Path(model).exists():
        # replicas may start in another working directory (or node, on shared storage)
        model = str(Path(model).resolve())
    # (the decorators made the class a Deployment; mypy still sees the class)
    deployment: Any = LisaSRLDeployment
    options = deployment.options(
        num_replicas=replicas,
        ray_actor_options={"num_cpus": replica_cpus, "num_gpus": replica_gpus},
        # enough requests per replica to fill a batch while the previous one runs
        max_ongoing_requests=max(2 * settings.batch_size, 8),
        max_queued_requests=settings.max_queue,
        graceful_shutdown_timeout_s=settings.drain_timeout,
        graceful_shutdown_wait_loop_s=0.5,
        # a replica that cannot load the model fails the same way again: give up soon
        max_constructor_retry_count=2,
    )
    return options.bind(model, settings.as_dict(), replica_gpus > 0, dict(srl_options or {}))


def app_builder(args: Mapping[str, str]) -> Application:
    """For ``serve run spacy_lisa.serve.ray_serve:app_builder model=PATH replicas=N``
    (also ``replica_cpus``, ``replica_gpus``, ``predicate_pos`` (comma-separated UPOS
    tags, checked: E042) and every :class:`ServeSettings` field)."""
    from ..pipeline.options import check_predicate_pos

    values = dict(args)
    model = values.pop("model")
    replicas = int(values.pop("replicas", 1))
    cpus = float(values.pop("replica_cpus", 1.0))
    gpus = float(values.pop("replica_gpus", 0.0))
    pos = values.pop("predicate_pos", None)
    srl_options = {"predicate_pos": list(check_predicate_pos(pos.split(",")))} if pos else {}
    fields = ServeSettings.__dataclass_fields__
    unknown = sorted(set(values) - set(fields))
    if unknown:
        known = [
            *("model", "replicas", "replica_cpus", "replica_gpus", "predicate_pos"),
            *sorted(fields),
        ]
        problem = f"Unknown argument(s) {unknown} of app_builder; known: {', '.join(known)}"
        raise ValueError(Errors.E418.format(problem=problem))
    numbers = {"max_wait_ms": float, "drain_timeout": float}
    typed: Dict[str, Any] = {k: numbers.get(k, int)(v) for k, v in values.items()}
    return application(
        model,
        ServeSettings(**typed),
        replicas=replicas,
        replica_cpus=cpus,
        replica_gpus=gpus,
        srl_options=srl_options,
    )


def run_ray(
    model: str,
    settings: ServeSettings,
    *,
    host: str,
    port: int,
    replicas: int,
    replica_cpus: float,
    replica_gpus: float,
    address: Optional[str],
    echo: Callable[[str], None],
    srl_options: Optional[Mapping[str, Any]] = None,
) -> None:
    """Start (or join) a Ray cluster, deploy ``replicas`` replicas behind Ray Serve's
    proxy on ``host``:``port`` and serve until SIGTERM / Ctrl-C; then delete the
    application (its replicas drain) and shut Serve down."""
    import ray

    ray.init(address=address, logging_level=logging.ERROR, include_dashboard=False)
    drained = False
    try:
        serve.start(http_options={"host": host, "port": port})
        app = application(
            model,
            settings,
            replicas=replicas,
            replica_cpus=replica_cpus,
            replica_gpus=replica_gpus,
            srl_options=srl_options,
        )
        try:
            serve.run(app, name=APP_NAME, route_prefix="/", blocking=False)
        except Exception as err:  # a replica that cannot load the model fails the deploy
            detail = str(err).strip().splitlines()[-1] if str(err).strip() else repr(err)
            raise ValueError(Errors.E424.format(detail=detail)) from None
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{port}"
        echo(
            f"✔ Serving {model} with {replicas} Ray Serve replica(s) on {url} "
            f"(demo page {url}/, API {url}/docs)"
        )
        _wait_for_signal()
        echo("ℹ Shutting down: replicas finish their requests")
        # bounded: with a broken cluster (e.g. its processes got the signal as well) these
        # would wait for ever; ray.shutdown() below still stops the local processes
        drained = _bounded(lambda: serve.delete(APP_NAME), settings.drain_timeout + 30)
        if address is None:  # Serve on a cluster of our own; on a shared one, only our app
            drained = drained and _bounded(serve.shutdown, 30)
    finally:
        ray.shutdown()
    echo("✔ Stopped" if drained else "⚠ Stopped; Ray Serve did not confirm the drain in time")


def _bounded(fn: Callable[[], Any], timeout: float) -> bool:
    """Run ``fn`` on a thread; whether it returned within ``timeout`` seconds."""
    thread = threading.Thread(target=fn, daemon=True)
    thread.start()
    thread.join(timeout)
    return not thread.is_alive()


def _wait_for_signal() -> None:
    stop = threading.Event()

    def handler(signum: int, frame: Any) -> None:
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, handler)
    # wake up now and then: a signal handler runs only between bytecodes of this thread
    while not stop.wait(0.5):
        pass


__all__ = ["APP_NAME", "LisaSRLDeployment", "app_builder", "application", "run_ray"]
