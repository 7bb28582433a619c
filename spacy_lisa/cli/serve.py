"""``spacy-lisa serve``: the pipeline over HTTP (see :mod:`spacy_lisa.serve`)."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..errors import Errors
from ..inputs import UserError
from ..serve.settings import ServeSettings
from ._app import Engine, app
from ._io import fail, stderr

SERVE_HELP = (
    "Serve a trained pipeline over HTTP: POST /v1/annotate gives the records of "
    "spacy-lisa predict, GET / is a demo page, GET /health and GET /metrics (Prometheus) "
    "watch it, GET /docs documents the API.\n\n"
    "Requests that arrive together are labelled in one nlp.pipe batch (up to --batch-size "
    "documents, or what has come within --max-wait-ms of the first). At most --max-queue "
    "documents wait; past that the server answers 503 with Retry-After. On SIGTERM it "
    "answers 503 to new requests while those in flight finish, then stops.\n\n"
    "The model runs in a process of its own, so that answering HTTP and labelling use "
    "different cores (--no-model-process: on a thread of the server's process).\n\n"
    "With --engine ray the same app runs on Ray Serve with --replicas replicas, each "
    "holding one pipeline (pip install 'spacy-lisa\\[ray-serve]')."
)


@app.command("serve", help=SERVE_HELP)
def serve_cli(
    model: str = typer.Argument(
        ..., metavar="MODEL", help="Trained pipeline: a directory or package name"
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on"),
    port: int = typer.Option(8080, "--port", "-p", min=0, max=65535, help="0: a free port"),
    batch_size: int = typer.Option(32, "--batch-size", "-b", min=1, help="Most docs per batch"),
    max_wait_ms: float = typer.Option(
        5.0, "--max-wait-ms", min=0, help="Longest a document waits for its batch to fill"
    ),
    max_chars: int = typer.Option(
        20_000, "--max-chars", min=1, help="Longest text (characters); longer ones get 413"
    ),
    max_texts: int = typer.Option(128, "--max-texts", min=1, help="Most texts per request"),
    max_queue: int = typer.Option(
        1024, "--max-queue", min=1, help="Most documents waiting for the model; then 503"
    ),
    drain_timeout: float = typer.Option(
        30.0, "--drain-timeout", min=0, help="Seconds SIGTERM waits for in-flight requests"
    ),
    torch_threads: Optional[int] = typer.Option(
        None, "--torch-threads", min=1, help="torch's threads (default: one per core)"
    ),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU to run on; -1 for the CPU"),
    access_log: bool = typer.Option(False, "--access-log", help="Log every request"),
    model_process: bool = typer.Option(
        True,
        "--model-process/--no-model-process",
        help="Run the model in a process of its own (local engine)",
    ),
    engine: Engine = typer.Option(
        Engine.local, "--engine", help="local: this process; ray: Ray Serve replicas"
    ),
    replicas: Optional[int] = typer.Option(
        None, "--replicas", min=1, help="--engine ray: replicas, each holding one pipeline"
    ),
    address: Optional[str] = typer.Option(
        None, "--address", help="--engine ray: Ray cluster address (default: a local one)"
    ),
    replica_cpus: Optional[float] = typer.Option(
        None, "--replica-cpus", min=0, help="--engine ray: CPUs per replica (default 1)"
    ),
    replica_gpus: Optional[float] = typer.Option(
        None, "--replica-gpus", min=0, help="--engine ray: GPUs per replica (default 0)"
    ),
) -> None:
    """The ``serve`` command (see :data:`SERVE_HELP`)."""
    try:
        try:
            settings = ServeSettings(
                batch_size=batch_size,
                max_wait_ms=max_wait_ms,
                max_chars=max_chars,
                max_texts=max_texts,
                max_queue=max_queue,
                drain_timeout=drain_timeout,
                torch_threads=torch_threads,
            )
        except ValueError as err:
            raise UserError(str(err)) from None
        if engine == Engine.ray:
            if gpu_id >= 0:
                raise UserError(Errors.E425)
            _serve_ray(
                model,
                settings,
                host=host,
                port=port,
                replicas=replicas or 1,
                address=address,
                replica_cpus=1.0 if replica_cpus is None else replica_cpus,
                replica_gpus=0.0 if replica_gpus is None else replica_gpus,
            )
            return
        ray_only: List[str] = [
            name
            for name, value in [
                ("--replicas", replicas),
                ("--address", address),
                ("--replica-cpus", replica_cpus),
                ("--replica-gpus", replica_gpus),
            ]
            if value is not None
        ]
        if ray_only:
            raise UserError(Errors.E419.format(options=", ".join(ray_only)))
        _serve_local(
            model,
            settings,
            host=host,
            port=port,
            gpu_id=gpu_id,
            access_log=access_log,
            model_process=model_process,
        )
    except (UserError, FileNotFoundError) as err:
        fail(err)


def _serve_local(
    model: str,
    settings: ServeSettings,
    *,
    host: str,
    port: int,
    gpu_id: int,
    access_log: bool,
    model_process: bool,
) -> None:
    try:
        from ..serve.model_process import ModelProcessError
        from ..serve.server import bind_socket, serve
        from ..serve.service import SRLService
    except ImportError as err:
        raise UserError(Errors.E417.format(detail=err)) from None
    # bind first: a port in use fails at once, before minutes of model loading
    try:
        bind_socket(host, port).close()
    except ValueError as err:
        raise UserError(str(err)) from None
    stderr(f"ℹ Loading {model}")
    try:
        service = SRLService.load(model, settings, gpu_id=gpu_id, model_process=model_process)
    except ModelProcessError as err:
        raise UserError(str(err)) from None
    try:
        serve(service, host=host, port=port, access_log=access_log, echo=stderr)
    except ValueError as err:  # the port was taken while the model loaded
        raise UserError(str(err)) from None


def _serve_ray(
    model: str,
    settings: ServeSettings,
    *,
    host: str,
    port: int,
    replicas: int,
    address: Optional[str],
    replica_cpus: float,
    replica_gpus: float,
) -> None:
    try:
        import fastapi  # noqa: F401
        import prometheus_client  # noqa: F401
    except ImportError as err:
        raise UserError(Errors.E417.format(detail=err)) from None
    try:
        from ..serve.ray_serve import run_ray
    except ImportError as err:
        raise UserError(Errors.E421.format(detail=err)) from None
    try:
        run_ray(
            model,
            settings,
            host=host,
            port=port,
            replicas=replicas,
            replica_cpus=replica_cpus,
            replica_gpus=replica_gpus,
            address=address,
            echo=stderr,
        )
    except ValueError as err:
        raise UserError(str(err)) from None


__all__ = ["serve_cli"]
