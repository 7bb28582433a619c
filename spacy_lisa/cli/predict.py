"""``spacy-lisa predict``: label documents with a trained pipeline and write the frames
as JSON lines, CoNLL-2005 columns or AllenNLP's SRL JSON."""

from __future__ import annotations

import json
import os
import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import typer
from spacy.tokens import Doc
from tqdm import tqdm

from ..device import GPU_INSTALL, gpu_problem, gpu_support, select_device
from ..errors import Errors
from ..formats import (
    doc_sentences,
    doc_to_allennlp,
    doc_to_conll2005_text,
    doc_to_jsonl_records,
)
from ..inputs import (
    InputDoc,
    InputFormat,
    InputSource,
    UserError,
    input_error,
    iter_docs,
    output_keys,
    scan_input,
    skip_report,
)
from ..loading import load_pipeline
from ..msgpack_codecs import cache_msgpack_codecs
from ._app import app
from ._io import fail, open_output, stderr


class OutputFormat(StrEnum):
    jsonl = "jsonl"
    conll2005 = "conll2005"
    allennlp = "allennlp"


class Engine(StrEnum):
    local = "local"
    ray = "ray"


def _jsonl(doc: Doc, source: InputDoc) -> str:
    records = doc_to_jsonl_records(doc, extra=output_keys(source.line, source.id))
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _allennlp(doc: Doc, source: InputDoc) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in doc_to_allennlp(doc))


def _conll2005(doc: Doc, source: InputDoc) -> str:
    return doc_to_conll2005_text(doc)


FORMATTERS: Dict[OutputFormat, Callable[[Doc, InputDoc], str]] = {
    OutputFormat.jsonl: _jsonl,
    OutputFormat.conll2005: _conll2005,
    OutputFormat.allennlp: _allennlp,
}


# one string per paragraph: typer's rich help keeps a docstring's line breaks
PREDICT_HELP = (
    "Label documents with semantic roles and write one record per sentence.\n\n"
    "Blank lines and documents with an empty text are skipped and counted. An invalid "
    'line (not UTF-8, bad JSON, no string "text") stops the run with its line number and '
    "exit code 1 before anything is written, unless --skip-invalid is given. JSONL "
    'records carry the input line number ("line") and the input "id" when the JSONL line '
    "has one."
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
    # the options both engines take
    common: Dict[str, Any] = dict(
        output_format=output_format,
        input_format=input_format,
        batch_size=batch_size,
        n_process=n_process,
        gpu_id=gpu_id,
        skip_invalid=skip_invalid,
    )
    try:
        if engine == Engine.ray:
            _predict_ray(
                model,
                input_path,
                output,
                **common,
                address=address,
                workers=workers,
                worker_cpus=worker_cpus,
                worker_gpus=worker_gpus,
                shard_lines=shard_lines,
                parquet=parquet,
                overwrite=overwrite,
            )
            return
        if address is not None or workers != 1 or parquet or overwrite:
            raise UserError(Errors.E343)
        if output is not None and output.is_dir():
            raise UserError(Errors.E344.format(output=output))
        predict(model, input_path, output=output, **common)
    except (UserError, FileNotFoundError) as err:
        fail(err)


def _predict_ray(
    model: str,
    input_path: str,
    output: Optional[Path],
    *,
    output_format: OutputFormat,
    input_format: InputFormat,
    batch_size: Optional[int],
    n_process: int,
    gpu_id: int,
    skip_invalid: bool,
    address: Optional[str],
    workers: int,
    worker_cpus: float,
    worker_gpus: float,
    shard_lines: int,
    parquet: bool,
    overwrite: bool,
) -> None:
    """``--engine ray``: the options checked here, the run in :mod:`spacy_lisa.ray_annotate`."""
    from ..ray_annotate import annotate_ray

    if output is None or str(output) == "-":
        raise UserError(Errors.E345)
    if n_process != 1 or gpu_id >= 0:
        raise UserError(Errors.E346)
    if worker_gpus > 0 and address is None and not os.environ.get("RAY_ADDRESS"):
        _check_local_gpus(worker_gpus)
    annotate_ray(
        model,
        input_path,
        output,
        # --parquet turns JSON lines into Parquet; annotate_ray refuses other formats
        output_format="parquet" if parquet and output_format == "jsonl" else output_format.value,
        input_format=input_format.value,
        address=address,
        workers=workers,
        worker_cpus=worker_cpus,
        worker_gpus=worker_gpus,
        batch_size=batch_size,
        skip_invalid=skip_invalid,
        shard_lines=shard_lines,
        overwrite=overwrite,
        echo=stderr,
    )


def _check_local_gpus(worker_gpus: float) -> None:
    """``--worker-gpus`` on the local Ray cluster (this machine's): E458 before Ray starts
    when this machine has no GPU that spacy-lisa can use, where Ray would hold the actors
    waiting for one forever."""
    support = gpu_support()
    if gpu_problem(0, support) is not None:
        reason = support.missing or "no CUDA device is visible to torch"
        raise UserError(
            Errors.E458.format(gpus=f"{worker_gpus:g}", reason=reason, install=GPU_INSTALL)
        )


def predict(
    model: str,
    input_path: str,
    *,
    output: Optional[Path] = None,
    output_format: OutputFormat = OutputFormat.jsonl,
    input_format: InputFormat = InputFormat.auto,
    batch_size: Optional[int] = None,
    n_process: int = 1,
    gpu_id: int = -1,
    skip_invalid: bool = False,
) -> Dict[str, Any]:
    """The ``predict`` command as a function; returns the run's counts (``docs``,
    ``sentences``, ``frames``, ``skipped`` lines by reason) and timing. The device is
    checked first: a GPU that cannot be used stops the run before the input is read."""
    if n_process != 1 and gpu_id >= 0:
        raise UserError(Errors.E456.format(n_process=n_process, gpu_id=gpu_id))
    select_device(gpu_id)
    source = InputSource(input_path)
    summary = scan_input(source, input_format)
    if summary.problems and not skip_invalid:
        raise UserError(input_error(summary))
    nlp = load_pipeline(model, gpu_id)
    if n_process != 1:
        # the workers send every doc back through srsly's msgpack: without the cache,
        # each call scans the codec registries (this process and the workers it forks)
        cache_msgpack_codecs()
    formatter = FORMATTERS[OutputFormat(output_format)]
    stats: Dict[str, Any] = {"docs": 0, "sentences": 0, "frames": 0}
    start = time.perf_counter()
    inputs = ((item.text, item) for item in iter_docs(source, summary.format))
    with open_output(output) as out:
        # delay: short runs (and tests) print no bar; long ones show docs/s on stderr
        with tqdm(
            total=summary.n_docs,
            unit="doc",
            delay=1.0,
            mininterval=0.5,
            file=sys.stderr,
            leave=False,
        ) as bar:
            docs = nlp.pipe(inputs, as_tuples=True, batch_size=batch_size, n_process=n_process)
            for doc, item in docs:
                out.write(formatter(doc, item))
                stats["docs"] += 1
                stats["sentences"] += len(doc_sentences(doc))
                stats["frames"] += len(doc._.srl_frames)
                bar.update(1)
        out.flush()
    seconds = time.perf_counter() - start
    stats["seconds"] = seconds
    stats["docs_per_second"] = stats["docs"] / seconds if seconds > 0 else 0.0
    where = str(output) if output is not None and str(output) != "-" else "stdout"
    stderr(
        f"✔ Labelled {int(stats['docs'])} doc(s), {int(stats['sentences'])} sentence(s), "
        f"{int(stats['frames'])} frame(s) in {seconds:.1f}s "
        f"({stats['docs_per_second']:.1f} docs/s) → {where} ({output_format.value})"
    )
    for line in skip_report(summary.skipped, summary.problems):
        stderr(line)
    stats["skipped"] = dict(summary.skipped)
    return stats


__all__: List[str] = ["predict", "predict_cli", "OutputFormat", "Engine"]
