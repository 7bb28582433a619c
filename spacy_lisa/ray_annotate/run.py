"""The Ray side of a run: connecting to a cluster, and the Ray Data pipeline that
validates, labels and writes the shards."""

from __future__ import annotations

import inspect
import json
import logging
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from tqdm import tqdm

from ..errors import Errors
from ..input_docs import INVALID_REASONS, KEPT_PROBLEMS, SKIP_INVALID_HINT, TOO_LONG, InputProblem
from .actors import Annotator
from .output import ShardWriter
from .shards import RayAnnotateError, Shard, scan_shard, shard_docs


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


@dataclass(frozen=True)
class ActorPool:
    """The actors that label a run's documents: ``workers`` of them, each asking Ray for
    ``cpus`` CPUs and ``gpus`` GPUs and labelling batches of ``batch_size`` documents
    (``None``: the pipeline's own). Ray restarts an actor whose process dies at most
    ``max_restarts`` times, and retries a failed batch at most ``max_task_retries``
    times."""

    workers: int
    cpus: float
    gpus: float
    batch_size: Optional[int]
    max_restarts: int
    max_task_retries: int

    @property
    def retries(self) -> Dict[str, int]:
        """The limits as ``map_batches`` takes them (and E326, E348 name them)."""
        return {"max_restarts": self.max_restarts, "max_task_retries": self.max_task_retries}


@dataclass(frozen=True)
class Labelling:
    """What a run's shards are made with: the pipeline (``model``: its ``name``, a path
    resolved, and its ``fingerprint``), the ``output_format``, each frame's BIO ``tags``
    in the records or not; ``skip_invalid``: invalid lines are counted, else they stop
    the run; ``srl_options``: the ``lisa_srl`` options set on the actors' pipelines."""

    model: Dict[str, str]
    output_format: str
    tags: bool
    skip_invalid: bool
    srl_options: Dict[str, Any] = field(default_factory=dict)

    @property
    def marker(self) -> Dict[str, Any]:
        """What every shard's marker records besides its source and counts."""
        return {"model": self.model, "output_format": self.output_format}


def run_on_ray(
    ray: Any,
    address: Optional[str],
    todo: List[Shard],
    out_dir: Path,
    stats: Dict[str, Any],
    labelling: Labelling,
    pool: ActorPool,
) -> Tuple[int, float]:
    """Connect to Ray (see :func:`connect`; shut down after, if this call started it),
    check the cluster has the actors' GPUs and :func:`run_shards`; returns the documents
    labelled and the seconds it took (nothing to do: ``(0, 0.0)``, Ray left alone)."""
    if not todo:
        return 0, 0.0
    start = time.perf_counter()
    started = connect(address)
    check_cluster_gpus(ray, pool.workers, pool.gpus)
    ctx = ray.data.DataContext.get_current()
    saved = (ctx.execution_options.preserve_order, ctx.enable_progress_bars)
    ctx.execution_options.preserve_order = True  # records come back in input order
    ctx.enable_progress_bars = False  # one bar, ours, counting documents
    try:
        run_docs = run_shards(ray, todo, out_dir, stats, labelling, pool)
    finally:
        ctx.execution_options.preserve_order, ctx.enable_progress_bars = saved
        if started:
            ray.shutdown()
    return run_docs, time.perf_counter() - start


def run_shards(
    ray: Any,
    todo: List[Shard],
    out_dir: Path,
    stats: Dict[str, Any],
    labelling: Labelling,
    pool: ActorPool,
) -> int:
    """Validate, label and write the shards of ``todo``; returns the documents done and
    adds to ``stats`` (``problems``: the first invalid lines skipped, as
    :class:`spacy_lisa.input_docs.InputProblem`)."""
    _check_retries(ray, pool.retries)
    rows = [asdict(s) for s in todo]
    scans = _scan(ray, rows, {s.index: s for s in todo}, labelling.skip_invalid)
    problems: List[InputProblem] = stats.setdefault("problems", [])
    problems.extend(p for i in sorted(scans) for p in scans[i]["problems"])
    del problems[KEPT_PROBLEMS:]  # all are counted; the first few are shown
    labelled = _labelled(ray, rows, todo, labelling, pool)
    in_order = _ShardsInOrder(todo, out_dir, scans, stats, labelling)
    total = sum(s["docs"] for s in scans.values())
    columns = ("shard", "line", "records", "frames", "problem")
    with tqdm(total=total, unit="doc", delay=1.0, mininterval=0.5, file=sys.stderr) as bar:
        try:
            for batch in labelled.iter_batches(batch_size=None, batch_format="numpy"):
                for shard, line, records, frames, problem in zip(
                    *(batch[c] for c in columns), strict=True
                ):
                    in_order.add(int(shard), int(line), str(records), int(frames), str(problem))
                    bar.update(1)
            in_order.finish()
        except BaseException as err:
            in_order.abort()
            if isinstance(err, Exception) and not isinstance(err, RayAnnotateError):
                raise _stopped(err, in_order.unfinished(), pool.retries) from err
            raise
    return in_order.run_docs


def _labelled(
    ray: Any, rows: List[Dict[str, Any]], todo: List[Shard], labelling: Labelling, pool: ActorPool
) -> Any:
    """The Ray Data pipeline of the labelling: the documents of each shard, read in tasks,
    labelled by the pool of :class:`Annotator` actors; one row per document."""
    docs = ray.data.from_items(rows, override_num_blocks=len(rows)).flat_map(shard_docs, num_cpus=0)
    with warnings.catch_warnings():
        # Ray 2.5x-2.6x deprecates these extra keyword arguments, but has no other way
        # yet to pass the actors' max_restarts and max_task_retries (checked before)
        warnings.filterwarnings(
            "ignore", message=".*ray_remote_args.*", category=DeprecationWarning
        )
        return docs.map_batches(
            Annotator,
            fn_constructor_kwargs={
                "model": labelling.model["name"],
                "use_gpu": pool.gpus > 0,
                "batch_size": pool.batch_size,
                "threads": int(pool.cpus) or 1,
                "tags": labelling.tags,
                "paths": {s.index: s.path for s in todo},
                "srl_options": labelling.srl_options,
            },
            batch_size=pool.batch_size or 64,
            compute=ray.data.ActorPoolStrategy(size=pool.workers),
            num_cpus=pool.cpus,
            num_gpus=pool.gpus or None,
            batch_format="numpy",
            **pool.retries,
        )


class _ShardsInOrder:
    """The labelled documents, which come in input order, written shard by shard: a
    shard is complete once a document of a later one comes (or the run ends); it is
    then closed with its marker and counted into the run's ``stats``."""

    def __init__(
        self,
        todo: List[Shard],
        out_dir: Path,
        scans: Dict[int, Dict[str, Any]],
        stats: Dict[str, Any],
        labelling: Labelling,
    ) -> None:
        self.by_index = {s.index: s for s in todo}
        self.pending = [s.index for s in todo]  # shard indices still to write, in order
        self.out_dir = out_dir
        self.scans = scans
        self.stats = stats
        self.labelling = labelling
        self.writer: Optional[ShardWriter] = None
        self.run_docs = 0

    def add(self, shard: int, line: int, records: str, frames: int, problem: str) -> None:
        """One labelled document (``problem``: E351 for one too long to label)."""
        while self.pending[0] != shard:  # earlier shards are complete (in order)
            self._finish_first()
        if self.writer is None:
            self.writer = self._open(shard)
        if problem:
            _stop_on_too_long(problem, self.labelling.skip_invalid)
            self.writer.skip(line, TOO_LONG)
            problems = self.stats["problems"]
            if len(problems) < KEPT_PROBLEMS:
                problems.append(InputProblem(line, problem, TOO_LONG))
        else:
            self.writer.write(line, records, frames)

    def finish(self) -> None:
        """The run has labelled every document: the shards left are complete."""
        while self.pending:
            self._finish_first()

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.abort()

    def unfinished(self) -> List[Shard]:
        """The shards not written, first the one being written."""
        return [self.by_index[i] for i in self.pending]

    def _open(self, index: int) -> ShardWriter:
        labelling = self.labelling
        shard, scan = self.by_index[index], self.scans[index]
        return ShardWriter(self.out_dir, shard, labelling.output_format, scan, tags=labelling.tags)

    def _finish_first(self) -> None:
        index = self.pending[0]
        w = self.writer or self._open(index)
        # the validation pass's skips, and the documents the actors skipped
        skipped = {r: n + w.skipped.get(r, 0) for r, n in self.scans[index]["skipped"].items()}
        w.close({**self.labelling.marker, "skipped": skipped})
        stats = self.stats
        stats["docs"] += w.docs
        stats["records"] += w.records
        stats["frames"] += w.frames
        for reason, n in skipped.items():
            stats["skipped"][reason] += n
        stats["shards_written"] += 1
        self.run_docs += w.docs
        self.pending.pop(0)
        self.writer = None


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
