"""Annotate corpora past one machine with Ray Data: ``spacy-lisa predict --engine ray``
and :func:`annotate_ray`.

The run is a Ray Data pipeline; scheduling, back-pressure, actor restarts and task
retries are Ray's:

1. The driver lists the input files (a file, a directory, a glob) and cuts each into
   *shards*: one shard per file, or fixed-size runs of ``shard_lines`` lines (Parquet:
   whole row groups). A shard is the unit of output and of re-runs.
2. The output directory is locked for the run. Shards whose output is complete (a
   ``.done`` marker beside it) and whose marker matches this run (the same input file,
   cut the same way, with the same fingerprint of its contents, the same model) are
   kept; shards whose input changed are redone; shards made from other inputs or with
   another model stop the run unless ``overwrite``.
3. A first Ray pass validates the remaining shards in parallel, with the same line
   reader and parser as ``spacy-lisa predict``: an invalid line stops the run with its
   file and line before anything is written, unless ``skip_invalid`` counts it instead.
4. ``Dataset.flat_map`` reads the documents of each shard and ``Dataset.map_batches``
   labels them in a fixed pool of actors (``concurrency=workers``), each holding one
   loaded pipeline, restarted by Ray when its process dies, a bounded number of times
   (``max_restarts``, ``max_task_retries``). The records are those of ``predict``'s
   JSON lines, made by :func:`spacy_lisa.formats.doc_to_jsonl_records` with the input
   ``line`` and ``id`` (each frame's BIO tags only with ``tags``). A document longer
   than the pipeline's ``nlp.max_length``, which only the actors know, is not labelled:
   it stops the run there, naming its line (the shards finished so far are kept),
   unless ``skip_invalid`` counts it as ``too_long``.
5. The driver receives one row per document in input order and writes each shard to a
   temporary name, checks it got exactly the shard's documents (the same input lines,
   in the same order), renames it into place and only then writes the marker. A shard
   file without its marker is incomplete and is rewritten by the next run, so re-runs
   never duplicate or drop a record.

Inputs (and a model given as a directory) must be readable at the same path on every
node of the cluster; the output directory is written by the driver only.

The modules: :mod:`.shards` (steps 1 and 3: files, shards, reading), :mod:`.output`
(steps 2 and 5: shard files, markers, re-runs), :mod:`.actors` (the labelling actors of
step 4) and :mod:`.run` (connecting to Ray, the pipeline of steps 3-5).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from ..errors import Errors
from ..input_docs import SKIP_REASONS, skip_report
from ..loading import pipeline_fingerprint
from .output import OUTPUT_FORMATS, make_output_dir, output_lock, prepare_output
from .run import ActorPool, Labelling, run_on_ray
from .shards import SHARD_LINES, PathLike, RayAnnotateError, Shard, plan_shards, resolve_inputs


def _model_path(model: str) -> str:
    path = Path(model).expanduser()
    return str(path.resolve()) if path.exists() else model


def annotate_ray(
    model: str,
    inputs: Union[PathLike, Sequence[PathLike]],
    output: PathLike,
    *,
    output_format: str = "jsonl",
    input_format: str = "auto",
    address: Optional[str] = None,
    workers: int = 1,
    worker_cpus: float = 1.0,
    worker_gpus: float = 0.0,
    batch_size: Optional[int] = None,
    skip_invalid: bool = False,
    tags: bool = False,
    shard_lines: int = SHARD_LINES,
    max_restarts: int = 3,
    max_task_retries: int = 3,
    overwrite: bool = False,
    srl_options: Optional[Mapping[str, Any]] = None,
    echo: Optional[Callable[[str], None]] = None,
) -> Dict[str, Any]:
    """Label ``inputs`` (text, JSONL or Parquet: a file, a directory, a glob or a list
    of them) with the pipeline ``model`` in a pool of ``workers`` Ray actors, and write
    ``predict``'s JSON records per shard to the directory ``output`` (``<shard>.jsonl``
    or ``<shard>.parquet``, each with a ``<shard>.done`` marker), each frame's BIO
    ``tags`` and ``untagged_roles`` only with ``tags`` (``predict --tags``). A re-run
    into the same directory only does the shards without a marker or whose input
    changed; a directory made from other inputs, with another model or other options
    (``tags`` too) is refused unless ``overwrite``. An actor is restarted at most
    ``max_restarts`` times, a batch retried at most ``max_task_retries`` times; then the
    run stops, naming the shard. ``srl_options``: ``lisa_srl`` options of the run over
    the pipeline's config (``--predicate-pos``: ``{"predicate_pos": ["VERB"]}``), set on
    every actor's pipeline; a directory labelled with other ones is refused as well.

    Returns the counts: ``docs`` (labelled), ``records`` (one per sentence),
    ``frames``, ``skipped`` (by reason: blank, empty_text, not_utf8, invalid_json,
    bad_object, bad_id, too_long), ``shards``, ``shards_written``,
    ``shards_done_before``, ``seconds`` and ``docs_per_second`` (this run's documents
    only), ``problems`` (the first invalid lines this run skipped, each an
    :class:`~spacy_lisa.input_docs.InputProblem` with its line and message); all
    but the last four cover the shards done by earlier runs too.
    """
    ray = _import_ray()
    pool = ActorPool(workers, worker_cpus, worker_gpus, batch_size, max_restarts, max_task_retries)
    _check_options(output_format, pool)
    out_dir = Path(output).expanduser().resolve()
    make_output_dir(out_dir)
    with output_lock(out_dir):
        shards = plan_shards(inputs, input_format, shard_lines)
        model_id = {"name": _model_path(model), "fingerprint": pipeline_fingerprint(model)}
        options = dict(srl_options or {})
        done = prepare_output(
            out_dir,
            shards,
            output_format,
            shard_lines,
            model_id,
            overwrite,
            tags=tags,
            srl_options=options,
        )
        stats = _counts_done_before(shards, done)
        todo = [s for s in shards if s.index not in done]
        labelling = Labelling(model_id, output_format, tags, skip_invalid, options)
        run_docs, seconds = run_on_ray(ray, address, todo, out_dir, stats, labelling, pool)
    _end_of_run(stats, run_docs, seconds, out_dir, output_format, echo)
    return stats


def _import_ray() -> Any:
    """The ``ray`` module; E328 where the ``spacy-lisa[ray]`` extra is missing."""
    try:
        import ray
    except ImportError:
        raise RayAnnotateError(Errors.E328) from None
    return ray


def _check_options(output_format: str, pool: ActorPool) -> None:
    """E329 (an output format shards cannot take), E330 (an empty or negative pool)."""
    if output_format not in OUTPUT_FORMATS:
        raise RayAnnotateError(
            Errors.E329.format(formats=" or ".join(OUTPUT_FORMATS), format=output_format)
        )
    if pool.workers < 1 or pool.cpus < 0 or pool.gpus < 0:
        raise RayAnnotateError(
            Errors.E330.format(workers=pool.workers, cpus=pool.cpus, gpus=pool.gpus)
        )


def _end_of_run(
    stats: Dict[str, Any],
    run_docs: int,
    seconds: float,
    out_dir: Path,
    output_format: str,
    echo: Optional[Callable[[str], None]],
) -> None:
    """Add this run's time and speed to ``stats``, and give ``echo`` the summary."""
    stats["seconds"] = seconds
    stats["docs_per_second"] = run_docs / seconds if seconds > 0 and run_docs else 0.0
    say = echo or (lambda message: None)
    say(
        f"✔ Labelled {stats['docs']} doc(s): {stats['records']} record(s) (sentences), "
        f"{stats['frames']} frame(s) → {out_dir} ({output_format}; "
        f"{stats['shards_written']} shard(s) written in {seconds:.1f}s, "
        f"{stats['docs_per_second']:.1f} docs/s; {stats['shards_done_before']} done before)"
    )
    for line in skip_report(stats["skipped"], stats["problems"]):
        say(line)


def _counts_done_before(shards: List[Shard], done: Dict[int, Dict[str, Any]]) -> Dict[str, Any]:
    """The run's counts to start from: those of the shards done before, from their
    markers (the run adds its own shards')."""
    stats: Dict[str, Any] = {
        "docs": 0,
        "records": 0,
        "frames": 0,
        "skipped": dict.fromkeys(SKIP_REASONS, 0),
        "shards": len(shards),
        "shards_written": 0,
        "shards_done_before": len(done),
        "problems": [],
    }
    for marker in done.values():
        for key in ("docs", "records", "frames"):
            stats[key] += marker.get(key, 0)
        for reason, n in marker.get("skipped", {}).items():
            stats["skipped"][reason] = stats["skipped"].get(reason, 0) + n
    return stats


__all__ = ["annotate_ray", "plan_shards", "resolve_inputs", "RayAnnotateError", "Shard"]
