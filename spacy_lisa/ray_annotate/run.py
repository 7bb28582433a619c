"""The Ray side of a run: connecting to a cluster, and the Ray Data pipeline that
validates, labels and writes the shards."""

from __future__ import annotations

import inspect
import json
import logging
import sys
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..errors import Errors
from ..inputs import INVALID_REASONS, KEPT_PROBLEMS, SKIP_INVALID_HINT, TOO_LONG, InputProblem
from .actors import Annotator
from .inputs import RayAnnotateError, Shard, scan_shard, shard_docs
from .output import ShardWriter


def connect(address: Optional[str]) -> bool:
    """Connect to Ray (``address``, Ray already initialised here, ``RAY_ADDRESS`` or a new local
    cluster); True when this call started it."""
    import ray

    if ray.is_initialized():
        return False
    try:
        ray.init(address=address, logging_level=logging.WARNING)
    except (ConnectionError, ValueError, RuntimeError) as err:
        raise RayAnnotateError(Errors.E340.format(address=address, detail=err)) from None
    return True


def check_cluster_gpus(ray: Any, workers: int, worker_gpus: float) -> None:
    """The cluster must have the GPUs the actors ask for (``workers`` x ``worker_gpus``),
    or Ray leaves them waiting for one forever. E349 names what it has."""
    if worker_gpus <= 0:
        return
    have = float(ray.cluster_resources().get("GPU", 0.0))
    if have < workers * worker_gpus:
        raise RayAnnotateError(Errors.E349.format(workers=workers, gpus=worker_gpus, have=have))


def _scan(ray: Any, rows: List[Dict[str, Any]], by_index: Dict[int, Shard], skip_invalid: bool):
    """The validation pass, in parallel: per shard its documents (count and hash of
    their lines), skips and first problems, by index. Stops on invalid lines (unless
    ``skip_invalid``) and on a shard whose input changed since it was planned (E347)."""
    # reading is light and asks for no CPU: all CPUs can go to the actors (a task asking
    # for even 0.1 CPU would wait forever for actors holding every CPU)
    scans = (
        ray.data.from_items(rows, override_num_blocks=len(rows))
        .map(scan_shard, num_cpus=0)
        .take_all()
    )
    scans.sort(key=lambda r: r["index"])
    for scan in scans:
        shard = by_index[scan["index"]]
        if scan["fingerprint"] != shard.fingerprint:
            raise RayAnnotateError(Errors.E347.format(shard=shard.where()))
    problems = [InputProblem(**p) for s in scans for p in json.loads(s["problems"])]
    if problems and not skip_invalid:
        n_invalid = sum(
            n for s in scans for r, n in json.loads(s["skipped"]).items() if r in INVALID_REASONS
        )
        message = problems[0].message
        if n_invalid > 1:
            message += f"\n  {n_invalid - 1} more invalid line(s) in the input"
        # the first problem's numbered message, then how to skip such lines instead
        message += f"\n  {SKIP_INVALID_HINT}"
        raise RayAnnotateError(message)
    return {
        s["index"]: {
            **s,
            "skipped": json.loads(s["skipped"]),
            "problems": [InputProblem(**p) for p in json.loads(s["problems"])],
        }
        for s in scans
    }


def _stop_on_too_long(problem: str, skip_invalid: bool) -> None:
    """Stop the run on a document the actors found longer than the pipeline takes
    (E351), unless ``skip_invalid``: found only once an actor has loaded the pipeline,
    so the shards finished before it are kept."""
    if not skip_invalid:
        # E351 (the actor's), then what is kept and how to skip such documents instead
        problem += (
            "\n  The shards finished before it are kept: a re-run does only the rest."
            f"\n  {SKIP_INVALID_HINT}"
        )
        raise RayAnnotateError(problem)


def _check_retries(ray: Any, retries: Dict[str, int]) -> None:
    """Ray Data restarts actors and retries their tasks without end unless told a limit,
    which it takes as extra keyword arguments of ``map_batches``: refuse a Ray that no
    longer does (E327), and limits that are not limits (E348)."""
    if any(n < 0 for n in retries.values()):
        raise RayAnnotateError(Errors.E348.format(**retries))
    params = inspect.signature(ray.data.Dataset.map_batches).parameters.values()
    if not any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params):
        raise RayAnnotateError(Errors.E327.format(version=ray.__version__))


def run_shards(
    ray: Any,
    todo: List[Shard],
    out_dir: Path,
    stats: Dict[str, Any],
    *,
    model: str,
    marker: Dict[str, Any],
    output_format: str,
    workers: int,
    worker_cpus: float,
    worker_gpus: float,
    batch_size: Optional[int],
    skip_invalid: bool,
    retries: Dict[str, int],
    bar: Any,
    tags: bool = False,
) -> int:
    """Validate, label and write the shards of ``todo``, each marked with ``marker``
    (what every shard of the run shares: the model, the output format); returns the
    documents done and adds to ``stats`` (``problems``: the first invalid lines skipped,
    as :class:`spacy_lisa.inputs.InputProblem`). ``retries``: ``max_restarts`` and
    ``max_task_retries``; ``tags``: each frame's BIO tags in the records."""
    _check_retries(ray, retries)
    rows = [asdict(s) for s in todo]
    by_index = {s.index: s for s in todo}
    scans = _scan(ray, rows, by_index, skip_invalid)
    problems: List[InputProblem] = stats.setdefault("problems", [])
    problems.extend(p for i in sorted(scans) for p in scans[i]["problems"])
    del problems[KEPT_PROBLEMS:]  # all are counted; the first few are shown
    docs = ray.data.from_items(rows, override_num_blocks=len(rows)).flat_map(shard_docs, num_cpus=0)
    with warnings.catch_warnings():
        # Ray 2.5x-2.6x deprecates these extra keyword arguments, but has no other way
        # yet to pass the actors' max_restarts and max_task_retries (checked above)
        warnings.filterwarnings(
            "ignore", message=".*ray_remote_args.*", category=DeprecationWarning
        )
        ds = docs.map_batches(
            Annotator,
            fn_constructor_kwargs={
                "model": model,
                "use_gpu": worker_gpus > 0,
                "batch_size": batch_size,
                "threads": int(worker_cpus) or 1,
                "tags": tags,
                "paths": {s.index: s.path for s in todo},
            },
            batch_size=batch_size or 64,
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=worker_cpus,
            num_gpus=worker_gpus or None,
            batch_format="numpy",
            **retries,
        )
    pending = [s.index for s in todo]  # shard indices still to write, in order
    writer: Optional[ShardWriter] = None
    run_docs = 0

    def finish(index: int, w: Optional[ShardWriter]) -> None:
        nonlocal run_docs
        w = w or ShardWriter(out_dir, by_index[index], output_format, scans[index], tags=tags)
        # the validation pass's skips, and the documents the actors skipped
        skipped = {r: n + w.skipped.get(r, 0) for r, n in scans[index]["skipped"].items()}
        w.close({**marker, "skipped": skipped})
        stats["docs"] += w.docs
        stats["records"] += w.records
        stats["frames"] += w.frames
        for reason, n in skipped.items():
            stats["skipped"][reason] += n
        stats["shards_written"] += 1
        run_docs += w.docs

    total = sum(s["docs"] for s in scans.values())
    with bar(total=total, unit="doc", delay=1.0, mininterval=0.5, file=sys.stderr) as progress:
        try:
            for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
                columns = ("shard", "line", "records", "frames", "problem")
                for shard, line, records, frames, problem in zip(
                    *(batch[c] for c in columns), strict=True
                ):
                    shard = int(shard)
                    while pending[0] != shard:  # earlier shards are complete (in order)
                        finish(pending[0], writer)
                        pending.pop(0)
                        writer = None
                    if writer is None:
                        writer = ShardWriter(
                            out_dir, by_index[shard], output_format, scans[shard], tags=tags
                        )
                    if problem:
                        _stop_on_too_long(str(problem), skip_invalid)
                        writer.skip(int(line), TOO_LONG)
                        if len(problems) < KEPT_PROBLEMS:
                            problems.append(InputProblem(int(line), str(problem), TOO_LONG))
                    else:
                        writer.write(int(line), str(records), int(frames))
                    progress.update(1)
            while pending:
                finish(pending[0], writer)
                pending.pop(0)
                writer = None
        except BaseException as err:
            if writer is not None:
                writer.abort()
            if isinstance(err, Exception) and not isinstance(err, RayAnnotateError):
                raise _stopped(err, [by_index[i] for i in pending], retries) from err
            raise
    return run_docs


def _stopped(err: Exception, unfinished: List[Shard], retries: Dict[str, int]) -> RayAnnotateError:
    """The error of a run that Ray gave up on (a worker that kept dying, a batch that
    kept failing): the shards left unfinished, first the one being written."""
    # the first line: Ray's own messages go on for lines (actor ids, pids, advice)
    detail = next((line.strip() for line in str(err).splitlines() if line.strip()), "")
    names = ", ".join(s.name for s in unfinished[1:6])
    more = f"; not finished either: {names}" if names else ""
    if len(unfinished) > 6:
        more += f" and {len(unfinished) - 6} more"
    return RayAnnotateError(
        Errors.E326.format(
            shard=unfinished[0].where(),
            more=more,
            error=type(err).__name__,
            detail=detail[:300],
            **retries,
        )
    )
