"""``spacy-lisa predict``: label documents with a trained pipeline and write the frames
as JSON lines, CoNLL-2005 columns or AllenNLP's SRL JSON."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Dict, Optional

import typer

from ..device import GPU_INSTALL, gpu_problem, gpu_support
from ..errors import Errors, UserError
from ..formats import OutputFormat
from ..input_docs import STDIN, InputFormat
from ..predict import predict
from ._app import Engine, app
from ._io import Input, check_output_paths, fail, pipeline_dir, stderr
from .options import GPU_ID_HELP, ModelArg, PredicatePosOpt, srl_options

# one string per paragraph: typer's rich help keeps a docstring's line breaks
PREDICT_HELP = (
    "Label documents with semantic roles and write one record per sentence.\n\n"
    "Blank lines and documents with an empty text are skipped and counted. An invalid "
    'line (not UTF-8, bad JSON, no string "text", an unusable "id", a text longer than '
    "the pipeline's nlp.max_length) stops the run with its line number and exit code 1 "
    "before anything is written, unless --skip-invalid is given. JSONL records carry the "
    'input line number ("line") and the input "id" when the JSONL line has one; each '
    "frame's BIO tags only with --tags."
)

InputArg = Annotated[
    str,
    typer.Argument(
        metavar="INPUT",
        help='Text file (one document per line), JSONL ({"text": ...} per line) or - (stdin)',
    ),
]
OutputOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--output",
        "-o",
        help="Output file (default: stdout); with --engine ray a directory of shards",
    ),
]
FormatOpt = Annotated[
    OutputFormat,
    typer.Option("--format", "-f", help="Output format, one record per sentence"),
]
InputFormatOpt = Annotated[
    InputFormat,
    typer.Option(
        "--input-format",
        help="auto: .jsonl/.ndjson are JSONL, .txt text, else JSONL if line 1 starts with {",
    ),
]
BatchSizeOpt = Annotated[
    Optional[int],
    typer.Option(
        "--batch-size",
        "-b",
        min=1,
        help="Docs per batch (default: the pipeline's [nlp] batch_size)",
    ),
]
NProcessOpt = Annotated[
    int,
    typer.Option(
        "--n-process",
        "-n",
        min=1,
        help="Worker processes for nlp.pipe, on the CPU (several GPUs: --engine ray "
        "--worker-gpus 1)",
    ),
]
PredictGpuIdOpt = Annotated[
    int, typer.Option("--gpu-id", "-g", help=f"{GPU_ID_HELP} (GPU build: make install-gpu)")
]
SkipInvalidOpt = Annotated[
    bool,
    typer.Option(
        "--skip-invalid",
        help="Skip invalid lines (counted, reported at the end) instead of failing",
    ),
]
TagsOpt = Annotated[
    bool,
    typer.Option(
        "--tags",
        help="JSON lines: add each frame's BIO tags over its sentence (and untagged_roles), "
        "as serve returns them; the output then grows with sentence length x predicates",
    ),
]
EngineOpt = Annotated[
    Engine,
    typer.Option(
        "--engine",
        help="local: nlp.pipe in this process (-n workers); ray: a pool of Ray actors, "
        "INPUT a file, directory or glob of text/JSONL/Parquet, -o a directory of shards",
    ),
]
# the options of --engine ray alone
AddressOpt = Annotated[
    Optional[str],
    typer.Option(
        "--address", help="--engine ray: Ray cluster address (default: local/RAY_ADDRESS)"
    ),
]
WorkersOpt = Annotated[
    int, typer.Option("--workers", min=1, help="--engine ray: actors, each holding one pipeline")
]
WorkerCpusOpt = Annotated[
    float, typer.Option("--worker-cpus", min=0, help="--engine ray: CPUs/actor")
]
WorkerGpusOpt = Annotated[
    float, typer.Option("--worker-gpus", min=0, help="--engine ray: GPUs/actor")
]
ShardLinesOpt = Annotated[
    int, typer.Option("--shard-lines", min=1, help="--engine ray: lines (rows) per output shard")
]
ParquetOpt = Annotated[bool, typer.Option("--parquet", help="--engine ray: write Parquet shards")]
OverwriteOpt = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="--engine ray: replace the shards in --output made from other inputs, with "
        "another model or with other options (by default such a directory is refused)",
    ),
]


@dataclass(frozen=True)
class RayOptions:
    """The options that only ``--engine ray`` takes."""

    address: Optional[str]
    workers: int
    worker_cpus: float
    worker_gpus: float
    shard_lines: int
    parquet: bool
    overwrite: bool


@app.command("predict", help=PREDICT_HELP)
def predict_cli(
    model: ModelArg,
    input_path: InputArg,
    output: OutputOpt = None,
    output_format: FormatOpt = OutputFormat.jsonl,
    input_format: InputFormatOpt = InputFormat.auto,
    batch_size: BatchSizeOpt = None,
    n_process: NProcessOpt = 1,
    gpu_id: PredictGpuIdOpt = -1,
    skip_invalid: SkipInvalidOpt = False,
    tags: TagsOpt = False,
    predicate_pos: PredicatePosOpt = None,
    engine: EngineOpt = Engine.local,
    address: AddressOpt = None,
    workers: WorkersOpt = 1,
    worker_cpus: WorkerCpusOpt = 1.0,
    worker_gpus: WorkerGpusOpt = 0.0,
    shard_lines: ShardLinesOpt = 10_000,
    parquet: ParquetOpt = False,
    overwrite: OverwriteOpt = False,
) -> None:
    """The ``predict`` command (see :data:`PREDICT_HELP`)."""
    ray = RayOptions(address, workers, worker_cpus, worker_gpus, shard_lines, parquet, overwrite)
    try:
        if tags and output_format != OutputFormat.jsonl:
            raise UserError(Errors.E319.format(format=OutputFormat(output_format).value))
        options = srl_options(predicate_pos)
        if engine == Engine.ray:
            shards = _ray_output(output, n_process, gpu_id, ray)
            _predict_ray(
                model,
                input_path,
                shards,
                ray,
                output_format=output_format,
                input_format=input_format,
                batch_size=batch_size,
                skip_invalid=skip_invalid,
                tags=tags,
                srl_options=options,
            )
            return
        _check_local(output, input_path, model, ray)
        predict(
            model,
            input_path,
            output=output,
            output_format=output_format,
            input_format=input_format,
            batch_size=batch_size,
            n_process=n_process,
            gpu_id=gpu_id,
            skip_invalid=skip_invalid,
            tags=tags,
            srl_options=options,
            echo=stderr,
        )
    except (UserError, FileNotFoundError) as err:
        fail(err)


def _check_local(output: Optional[Path], input_path: str, model: str, ray: RayOptions) -> None:
    """The local engine: no option of ``--engine ray`` (E343), a file ``--output``
    (E344) that is neither the input (the output replaces its path when the run ends)
    nor lies in the pipeline read (E037/E038); checked before any work."""
    if ray.address is not None or ray.workers != 1 or ray.parquet or ray.overwrite:
        raise UserError(Errors.E343)
    if output is not None and output.is_dir():
        raise UserError(Errors.E344.format(output=output))
    if output is None or str(output) == STDIN:
        return
    inputs = [] if input_path == STDIN else [Input("INPUT", Path(input_path))]
    folder = pipeline_dir(model)
    if folder is not None:
        inputs.append(Input("MODEL", folder))
    check_output_paths([("--output", output)], inputs)


def _ray_output(output: Optional[Path], n_process: int, gpu_id: int, ray: RayOptions) -> Path:
    """``--engine ray``: its output directory, after checking the options it cannot take
    and ``--worker-gpus`` on the local Ray cluster (this machine's): E458 before Ray
    starts when this machine has no GPU that spacy-lisa can use, where Ray would hold the
    actors waiting for one forever."""
    if output is None or str(output) == "-":
        raise UserError(Errors.E345)
    if n_process != 1 or gpu_id >= 0:
        raise UserError(Errors.E346)
    gpus = ray.worker_gpus
    if gpus > 0 and ray.address is None and not os.environ.get("RAY_ADDRESS"):
        support = gpu_support()
        if gpu_problem(0, support) is not None:
            reason = support.missing or "no CUDA device is visible to torch"
            raise UserError(
                Errors.E458.format(gpus=f"{gpus:g}", reason=reason, install=GPU_INSTALL)
            )
    return output


def _predict_ray(
    model: str,
    input_path: str,
    output: Path,
    ray: RayOptions,
    *,
    output_format: OutputFormat,
    input_format: InputFormat,
    batch_size: Optional[int],
    skip_invalid: bool,
    tags: bool,
    srl_options: Dict[str, Any],
) -> None:
    """``--engine ray``: the shards of :func:`spacy_lisa.ray_annotate.annotate_ray`."""
    from ..ray_annotate import annotate_ray

    # --parquet turns JSON lines into Parquet; annotate_ray refuses other formats
    ray_format = "parquet" if ray.parquet and output_format == "jsonl" else output_format
    annotate_ray(
        model,
        input_path,
        output,
        output_format=str(ray_format),
        input_format=input_format.value,
        address=ray.address,
        workers=ray.workers,
        worker_cpus=ray.worker_cpus,
        worker_gpus=ray.worker_gpus,
        batch_size=batch_size,
        skip_invalid=skip_invalid,
        shard_lines=ray.shard_lines,
        overwrite=ray.overwrite,
        tags=tags,
        srl_options=srl_options,
        echo=stderr,
    )


__all__ = ["predict_cli"]
