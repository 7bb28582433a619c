"""The Ray side of a run: connecting to a cluster, and the Ray Data pipeline that
validates, labels and writes the shards."""

from __future__ import annotations

import json
import logging
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Any, Dict, List, Optional

from .actors import Annotator
from .inputs import RayAnnotateError, Shard, scan_shard, shard_docs
from .output import ShardWriter


def connect(address: Optional[str]) -> bool:
    """Connect to Ray (``address``, a running session, ``RAY_ADDRESS`` or a new local
    cluster); True when this call started it."""
    import ray

    if ray.is_initialized():
        return False
    try:
        ray.init(address=address, logging_level=logging.WARNING)
    except (ConnectionError, ValueError, RuntimeError) as err:
        raise RayAnnotateError(
            f"Cannot connect to Ray at {address}: {err}. Start a cluster with "
            "'ray start --head' and pass the address it prints (e.g. 10.0.0.1:6379), or "
            "leave --address out to start a local one."
        ) from None
    return True


def run_shards(
    ray: Any,
    todo: List[Shard],
    out_dir: Path,
    stats: Dict[str, Any],
    *,
    model: str,
    output_format: str,
    workers: int,
    worker_cpus: float,
    worker_gpus: float,
    batch_size: Optional[int],
    skip_invalid: bool,
    ray_args: Dict[str, Any],
    bar: Any,
) -> int:
    """Validate, label and write the shards of ``todo``; returns the documents done."""
    import sys

    rows = [asdict(s) for s in todo]
    # reading is light and asks for no CPU: all CPUs can go to the actors (a task asking
    # for even 0.1 CPU would wait forever for actors holding every CPU)
    scans = (
        ray.data.from_items(rows, override_num_blocks=len(rows))
        .map(scan_shard, num_cpus=0)
        .take_all()
    )
    scans.sort(key=lambda r: r["index"])
    problems = [(p, s["index"]) for s in scans for p in json.loads(s["problems"])]
    counts = {s["index"]: json.loads(s["skipped"]) for s in scans}
    n_invalid = sum(n for c in counts.values() for r, n in c.items() if r != "blank")
    if n_invalid and not skip_invalid:
        message = problems[0][0][1]
        if n_invalid > 1:
            message += f"\n  {n_invalid - 1} more invalid line(s) in the input"
        raise RayAnnotateError(message)
    expected = {s["index"]: int(s["docs"]) for s in scans}
    by_index = {s.index: s for s in todo}
    docs = ray.data.from_items(rows, override_num_blocks=len(rows)).flat_map(shard_docs, num_cpus=0)
    kwargs: Dict[str, Any] = dict(
        fn_constructor_kwargs={
            "model": model,
            "use_gpu": worker_gpus > 0,
            "batch_size": batch_size,
            "threads": int(worker_cpus) or 1,
        },
        batch_size=batch_size or 64,
        compute=ray.data.ActorPoolStrategy(size=workers),
        num_cpus=worker_cpus,
        num_gpus=worker_gpus or None,
        batch_format="numpy",
    )
    with warnings.catch_warnings():
        # Ray 2.5x deprecates passing actor options such as max_restarts this way but
        # has no other way yet; without them Ray Data restarts actors without limit
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            ds = docs.map_batches(Annotator, **kwargs, **ray_args)
        except TypeError:  # a Ray that no longer takes them: its defaults apply
            ds = docs.map_batches(Annotator, **kwargs)
    pending = [s.index for s in todo]  # shard indices still to write, in order
    writer: Optional[ShardWriter] = None
    run_docs = 0

    def finish(index: int, w: Optional[ShardWriter]) -> None:
        nonlocal run_docs
        w = w or ShardWriter(out_dir, by_index[index], output_format, expected[index])
        w.close({"skipped": counts[index]})
        stats["docs"] += w.docs
        stats["records"] += w.records
        stats["frames"] += w.frames
        for reason, n in counts[index].items():
            stats["skipped"][reason] += n
        stats["shards_written"] += 1
        run_docs += w.docs

    total = sum(expected.values())
    with bar(total=total, unit="doc", delay=1.0, mininterval=0.5, file=sys.stderr) as progress:
        try:
            for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
                for shard, line, record, frames in zip(
                    batch["shard"], batch["line"], batch["record"], batch["frames"], strict=True
                ):
                    shard = int(shard)
                    while pending[0] != shard:  # earlier shards are complete (in order)
                        finish(pending.pop(0), writer)
                        writer = None
                    if writer is None:
                        writer = ShardWriter(
                            out_dir, by_index[shard], output_format, expected[shard]
                        )
                    before = writer.docs
                    writer.write(int(line), str(record), int(frames))
                    progress.update(writer.docs - before)
            while pending:
                finish(pending.pop(0), writer)
                writer = None
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
    return run_docs
