"""``spacy-lisa predict``: label documents with a trained pipeline and write the frames
as JSON lines, CoNLL-2005 columns or AllenNLP's SRL JSON."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer

from ..device import GPU_INSTALL, gpu_problem, gpu_support
from ..errors import Errors
from ..formats import OutputFormat
from ..inputs import STDIN, InputFormat, UserError
from ..predict import predict
from ._app import Engine, app
from ._io import Input, check_output_paths, fail, pipeline_dir, stderr

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


@app.command("predict", help=PREDICT_HELP)
def predict_cli(
    model: str = typer.Argument(
        ..., metavar="MODEL", help="Trained pipeline: a directory or package name"
    ),
    input_path: str = typer.Argument(
        ...,
        metavar="INPUT",
        help='Text file (one document per line), JSONL ({"text": ...} per line) or - (stdin)',
    ),
    output: Optional[Path] = typer.Option(
        None,
        "--output",
        "-o",
        help="Output file (default: stdout); with --engine ray a directory of shards",
    ),
    output_format: OutputFormat = typer.Option(
        OutputFormat.jsonl, "--format", "-f", help="Output format, one record per sentence"
    ),
    input_format: InputFormat = typer.Option(
        InputFormat.auto,
        "--input-format",
        help="auto: .jsonl/.ndjson are JSONL, .txt text, else JSONL if line 1 starts with {",
    ),
    batch_size: Optional[int] = typer.Option(
        None,
        "--batch-size",
        "-b",
        min=1,
        help="Docs per batch (default: the pipeline's [nlp] batch_size)",
    ),
    n_process: int = typer.Option(
        1,
        "--n-process",
        "-n",
        min=1,
        help="Worker processes for nlp.pipe, on the CPU (several GPUs: --engine ray "
        "--worker-gpus 1)",
    ),
    gpu_id: int = typer.Option(
        -1, "--gpu-id", "-g", help="GPU to run on; -1 for the CPU (GPU build: make install-gpu)"
    ),
    skip_invalid: bool = typer.Option(
        False,
        "--skip-invalid",
        help="Skip invalid lines (counted, reported at the end) instead of failing",
    ),
    tags: bool = typer.Option(
        False,
        "--tags",
        help="JSON lines: add each frame's BIO tags over its sentence (and untagged_roles), "
        "as serve returns them; the output then grows with sentence length x predicates",
    ),
    engine: Engine = typer.Option(
        Engine.local,
        "--engine",
        help="local: nlp.pipe in this process (-n workers); ray: a pool of Ray actors, "
        "INPUT a file, directory or glob of text/JSONL/Parquet, -o a directory of shards",
    ),
    address: Optional[str] = typer.Option(
        None, "--address", help="--engine ray: Ray cluster address (default: local/RAY_ADDRESS)"
    ),
    workers: int = typer.Option(
        1, "--workers", min=1, help="--engine ray: actors, each holding one pipeline"
    ),
    worker_cpus: float = typer.Option(1.0, "--worker-cpus", min=0, help="--engine ray: CPUs/actor"),
    worker_gpus: float = typer.Option(0.0, "--worker-gpus", min=0, help="--engine ray: GPUs/actor"),
    shard_lines: int = typer.Option(
        10_000, "--shard-lines", min=1, help="--engine ray: lines (rows) per output shard"
    ),
    parquet: bool = typer.Option(False, "--parquet", help="--engine ray: write Parquet shards"),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="--engine ray: replace the shards in --output made from other inputs, with "
        "another model or with other options (by default such a directory is refused)",
    ),
) -> None:
    """The ``predict`` command (see :data:`PREDICT_HELP`)."""
    try:
        if tags and output_format != OutputFormat.jsonl:
            raise UserError(Errors.E319.format(format=OutputFormat(output_format).value))
        if engine == Engine.ray:
            shards = _ray_output(output, n_process, gpu_id, address, worker_gpus)
            from ..ray_annotate import annotate_ray

            # --parquet turns JSON lines into Parquet; annotate_ray refuses other formats
            ray_format = "parquet" if parquet and output_format == "jsonl" else output_format
            annotate_ray(
                model,
                input_path,
                shards,
                output_format=str(ray_format),
                input_format=input_format.value,
                address=address,
                workers=workers,
                worker_cpus=worker_cpus,
                worker_gpus=worker_gpus,
                batch_size=batch_size,
                skip_invalid=skip_invalid,
                shard_lines=shard_lines,
                overwrite=overwrite,
                tags=tags,
                echo=stderr,
            )
            return
        if address is not None or workers != 1 or parquet or overwrite:
            raise UserError(Errors.E343)
        if output is not None and output.is_dir():
            raise UserError(Errors.E344.format(output=output))
        _check_output(output, input_path, model)
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
            echo=stderr,
        )
    except (UserError, FileNotFoundError) as err:
        fail(err)


def _check_output(output: Optional[Path], input_path: str, model: str) -> None:
    """E037/E038 before any work: a file ``--output`` must not be the input (the
    output replaces its path when the run ends) nor lie in the pipeline read."""
    if output is None or str(output) == STDIN:
        return
    inputs = [] if input_path == STDIN else [Input("INPUT", Path(input_path))]
    folder = pipeline_dir(model)
    if folder is not None:
        inputs.append(Input("MODEL", folder))
    check_output_paths([("--output", output)], inputs)


def _ray_output(
    output: Optional[Path], n_process: int, gpu_id: int, address: Optional[str], gpus: float
) -> Path:
    """``--engine ray``: its output directory, after checking the options it cannot take
    and ``--worker-gpus`` on the local Ray cluster (this machine's): E458 before Ray
    starts when this machine has no GPU that spacy-lisa can use, where Ray would hold the
    actors waiting for one forever."""
    if output is None or str(output) == "-":
        raise UserError(Errors.E345)
    if n_process != 1 or gpu_id >= 0:
        raise UserError(Errors.E346)
    if gpus > 0 and address is None and not os.environ.get("RAY_ADDRESS"):
        support = gpu_support()
        if gpu_problem(0, support) is not None:
            reason = support.missing or "no CUDA device is visible to torch"
            raise UserError(
                Errors.E458.format(gpus=f"{gpus:g}", reason=reason, install=GPU_INSTALL)
            )
    return output


__all__ = ["predict_cli"]
