"""``spacy-lisa serve``: the pipeline over HTTP (see :mod:`spacy_lisa.serve`)."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Dict, Iterator, List, Optional, Type

import typer

from ..errors import Errors, UserError
from ..serve.settings import ServeSettings
from ._app import Engine, app
from ._io import fail, stderr
from .options import GpuIdOpt, ModelArg, PredicatePosOpt, srl_options

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


HostOpt = Annotated[str, typer.Option("--host", help="Address to listen on")]
PortOpt = Annotated[int, typer.Option("--port", "-p", min=0, max=65535, help="0: a free port")]
BatchSizeOpt = Annotated[int, typer.Option("--batch-size", "-b", min=1, help="Most docs per batch")]
MaxWaitMsOpt = Annotated[
    float,
    typer.Option("--max-wait-ms", min=0, help="Longest a document waits for its batch to fill"),
]
MaxCharsOpt = Annotated[
    int,
    typer.Option("--max-chars", min=1, help="Longest text (characters); longer ones get 413"),
]
MaxTextsOpt = Annotated[int, typer.Option("--max-texts", min=1, help="Most texts per request")]
MaxQueueOpt = Annotated[
    int,
    typer.Option("--max-queue", min=1, help="Most documents waiting for the model; then 503"),
]
DrainTimeoutOpt = Annotated[
    float,
    typer.Option("--drain-timeout", min=0, help="Seconds SIGTERM waits for in-flight requests"),
]
TorchThreadsOpt = Annotated[
    Optional[int],
    typer.Option("--torch-threads", min=1, help="torch's threads (default: one per core)"),
]
AccessLogOpt = Annotated[bool, typer.Option("--access-log", help="Log every request")]
ModelProcessOpt = Annotated[
    bool,
    typer.Option(
        "--model-process/--no-model-process",
        help="Run the model in a process of its own (local engine)",
    ),
]
EngineOpt = Annotated[
    Engine, typer.Option("--engine", help="local: this process; ray: Ray Serve replicas")
]
# the options of --engine ray alone: None where not given, so that the local engine
# can name the ones it refuses (E419)
ReplicasOpt = Annotated[
    Optional[int],
    typer.Option("--replicas", min=1, help="--engine ray: replicas, each holding one pipeline"),
]
AddressOpt = Annotated[
    Optional[str],
    typer.Option("--address", help="--engine ray: Ray cluster address (default: a local one)"),
]
ReplicaCpusOpt = Annotated[
    Optional[float],
    typer.Option("--replica-cpus", min=0, help="--engine ray: CPUs per replica (default 1)"),
]
ReplicaGpusOpt = Annotated[
    Optional[float],
    typer.Option("--replica-gpus", min=0, help="--engine ray: GPUs per replica (default 0)"),
]


@dataclass(frozen=True)
class RayOptions:
    """The options that only ``--engine ray`` takes; ``None`` where not given."""

    replicas: Optional[int]
    address: Optional[str]
    replica_cpus: Optional[float]
    replica_gpus: Optional[float]

    def given(self) -> List[str]:
        """The names of those given: the local engine refuses them (E419)."""
        names = ("--replicas", "--address", "--replica-cpus", "--replica-gpus")
        values = (self.replicas, self.address, self.replica_cpus, self.replica_gpus)
        return [name for name, value in zip(names, values, strict=True) if value is not None]


@app.command("serve", help=SERVE_HELP)
def serve_cli(
    model: ModelArg,
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8080,
    batch_size: BatchSizeOpt = 32,
    max_wait_ms: MaxWaitMsOpt = 5.0,
    max_chars: MaxCharsOpt = 20_000,
    max_texts: MaxTextsOpt = 128,
    max_queue: MaxQueueOpt = 1024,
    drain_timeout: DrainTimeoutOpt = 30.0,
    torch_threads: TorchThreadsOpt = None,
    gpu_id: GpuIdOpt = -1,
    access_log: AccessLogOpt = False,
    model_process: ModelProcessOpt = True,
    predicate_pos: PredicatePosOpt = None,
    engine: EngineOpt = Engine.local,
    replicas: ReplicasOpt = None,
    address: AddressOpt = None,
    replica_cpus: ReplicaCpusOpt = None,
    replica_gpus: ReplicaGpusOpt = None,
) -> None:
    """The ``serve`` command (see :data:`SERVE_HELP`)."""
    ray = RayOptions(replicas, address, replica_cpus, replica_gpus)
    try:
        with _user_error(ValueError):  # E418, the settings' own message
            settings = ServeSettings(
                batch_size=batch_size,
                max_wait_ms=max_wait_ms,
                max_chars=max_chars,
                max_texts=max_texts,
                max_queue=max_queue,
                drain_timeout=drain_timeout,
                torch_threads=torch_threads,
            )
        options = srl_options(predicate_pos)
        if engine == Engine.ray:
            _serve_ray(model, settings, host, port, gpu_id=gpu_id, ray=ray, srl_options=options)
            return
        if ray.given():
            raise UserError(Errors.E419.format(options=", ".join(ray.given())))
        _serve_local(
            model,
            settings,
            host,
            port,
            gpu_id=gpu_id,
            access_log=access_log,
            model_process=model_process,
            srl_options=options,
        )
    except (UserError, FileNotFoundError) as err:
        fail(err)


@contextmanager
def _user_error(kind: Type[Exception], message: Optional[str] = None) -> Iterator[None]:
    """End the command on an error of ``kind`` raised within: with its own message (the
    server's errors are numbered), or with ``message`` and the error as its detail."""
    try:
        yield
    except kind as err:
        raise UserError(str(err) if message is None else message.format(detail=err)) from None


def _serve_local(
    model: str,
    settings: ServeSettings,
    host: str,
    port: int,
    *,
    gpu_id: int,
    access_log: bool,
    model_process: bool,
    srl_options: Dict[str, Any],
) -> None:
    with _user_error(ImportError, Errors.E417):
        from ..serve.model_process import ModelProcessError
        from ..serve.server import bind_socket, serve
        from ..serve.service import SRLService
    # bind first: a port in use fails at once, before minutes of model loading
    with _user_error(ValueError):
        bind_socket(host, port).close()
    stderr(f"ℹ Loading {model}")
    with _user_error(ModelProcessError):
        service = SRLService.load(
            model, settings, gpu_id=gpu_id, model_process=model_process, srl_options=srl_options
        )
    with _user_error(ValueError):  # the port was taken while the model loaded
        serve(service, host=host, port=port, access_log=access_log, echo=stderr)


def _serve_ray(
    model: str,
    settings: ServeSettings,
    host: str,
    port: int,
    *,
    gpu_id: int,
    ray: RayOptions,
    srl_options: Dict[str, Any],
) -> None:
    if gpu_id >= 0:
        raise UserError(Errors.E425)
    with _user_error(ImportError, Errors.E417):
        import fastapi  # noqa: F401
        import prometheus_client  # noqa: F401
    with _user_error(ImportError, Errors.E421):
        from ..serve.ray_serve import run_ray
    with _user_error(ValueError):
        run_ray(
            model,
            settings,
            host=host,
            port=port,
            replicas=ray.replicas or 1,
            replica_cpus=1.0 if ray.replica_cpus is None else ray.replica_cpus,
            replica_gpus=0.0 if ray.replica_gpus is None else ray.replica_gpus,
            address=ray.address,
            srl_options=srl_options,
            echo=stderr,
        )


__all__ = ["serve_cli"]
