"""``spacy-lisa predict``: label documents with a trained pipeline and write the frames
as JSON lines, CoNLL-2005 columns or AllenNLP's SRL JSON."""

from __future__ import annotations

import json
import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import typer
from spacy.tokens import Doc
from tqdm import tqdm

from ..formats import (
    doc_sentences,
    doc_to_allennlp,
    doc_to_conll2005_text,
    doc_to_jsonl_records,
)
from ._app import app
from ._io import (
    CLIError,
    InputDoc,
    InputFormat,
    InputSource,
    fail,
    input_error,
    iter_docs,
    load_pipeline,
    open_output,
    report_skipped,
    scan_input,
    stderr,
)


class OutputFormat(StrEnum):
    jsonl = "jsonl"
    conll2005 = "conll2005"
    allennlp = "allennlp"


class Engine(StrEnum):
    local = "local"
    ray = "ray"


def _jsonl(doc: Doc, source: InputDoc) -> str:
    extra = {"line": source.line} if source.id is None else {"line": source.line, "id": source.id}
    records = doc_to_jsonl_records(doc, extra=extra)
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
    "Blank lines are skipped and counted. An invalid line (not UTF-8, bad JSON, no string "
    '"text") stops the run with its line number and exit code 1 before anything is '
    "written, unless --skip-invalid is given. JSONL records carry the input line number "
    '("line") and the input "id" when the JSONL line has one.'
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
        1, "--n-process", "-n", min=1, help="Worker processes for nlp.pipe"
    ),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU to run on; -1 for the CPU"),
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
            )
            return
        if address is not None or workers != 1 or parquet:
            raise CLIError(
                "--address, --workers and --parquet are options of --engine ray; add "
                "--engine ray, or use -n for worker processes on this machine."
            )
        if output is not None and output.is_dir():
            raise CLIError(
                f"--output {output} is a directory. Pass a file name (a directory of "
                "shards is written by --engine ray)."
            )
        predict(model, input_path, output=output, **common)
    except (CLIError, FileNotFoundError) as err:
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
) -> None:
    """``--engine ray``: the options checked here, the run in :mod:`spacy_lisa.ray_annotate`."""
    from ..ray_annotate import annotate_ray

    if output is None or str(output) == "-":
        raise CLIError(
            "--engine ray writes a directory of shards: pass --output DIR (a new directory, "
            "or that of an earlier run to finish it)."
        )
    if n_process != 1 or gpu_id >= 0:
        raise CLIError(
            "-n and --gpu-id are for --engine local; with --engine ray use --workers and "
            "--worker-gpus (Ray gives each actor its GPUs)."
        )
    if output_format != OutputFormat.jsonl:
        raise CLIError(
            f"--engine ray writes JSONL (or Parquet with --parquet), not {output_format.value}. "
            "Use --engine local for that format."
        )
    annotate_ray(
        model,
        input_path,
        output,
        output_format="parquet" if parquet else "jsonl",
        input_format=input_format.value,
        address=address,
        workers=workers,
        worker_cpus=worker_cpus,
        worker_gpus=worker_gpus,
        batch_size=batch_size,
        skip_invalid=skip_invalid,
        shard_lines=shard_lines,
        echo=stderr,
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
) -> Dict[str, float]:
    """The ``predict`` command as a function; returns the run's counts and timing."""
    source = InputSource(input_path)
    summary = scan_input(source, input_format)
    if summary.problems and not skip_invalid:
        raise CLIError(input_error(summary))
    nlp = load_pipeline(model, gpu_id)
    formatter = FORMATTERS[OutputFormat(output_format)]
    stats = {"docs": 0.0, "sentences": 0.0, "frames": 0.0}
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
    report_skipped(summary, echo=stderr)
    return stats


__all__: List[str] = ["predict", "predict_cli", "OutputFormat", "Engine"]
