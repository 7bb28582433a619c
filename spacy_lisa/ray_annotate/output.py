"""The output of a Ray run: each shard written to a temporary name, checked, renamed
into place, then marked done by ``<shard>.done``, a marker that records what the shard
was made from (its input, cut and fingerprint, the model). Re-runs keep the shards whose
marker matches, redo those whose input changed, and refuse a directory made from other
inputs, another model or other options (the output format, the shard size, per-frame
tags, the ``lisa_srl`` options of the run) unless told to overwrite it. One run at a
time: a lock file."""

from __future__ import annotations

import json
import os
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, NoReturn, Optional, Set, Tuple

from ..errors import Errors
from ..input_docs import SKIP_REASONS
from .shards import DocLines, RayAnnotateError, Shard

if TYPE_CHECKING:
    import pyarrow as pa

MANIFEST = "_spacy_lisa_ray.json"
# "_": Ray's readers and `cat frames/*.jsonl` pass it over
LOCK = "_spacy_lisa_ray.lock"
DONE_SUFFIX = ".done"
TMP_SUFFIX = ".tmp"
OUTPUT_FORMATS = ("jsonl", "parquet")


# -------------------------------------------------------------------- output --------
def parquet_schema(tags: bool = False) -> pa.Schema:
    """The Arrow schema of Parquet output: ``predict``'s JSON record, with ``id`` as a
    string (a string id as it is, any other JSON value JSON-encoded); each frame's
    ``tags`` and ``untagged_roles`` only with ``tags`` (``predict --tags``)."""
    import pyarrow as pa

    i64, s, f64 = pa.int64(), pa.string(), pa.float64()
    offsets = [
        ("text", s),
        ("start", i64),
        ("end", i64),
        ("start_char", i64),
        ("end_char", i64),
        ("sent_start", i64),
        ("sent_end", i64),
        ("sent_start_char", i64),
        ("sent_end_char", i64),
    ]
    frame_fields = [
        ("frame", i64),
        ("roleset", s),
        ("lemma", s),
        ("predicate", pa.struct(offsets)),
        ("roles", pa.list_(pa.struct([("label", s), *offsets, ("score", f64)]))),
        ("score", f64),
        ("roleset_score", f64),
    ]
    if tags:
        frame_fields += [("tags", pa.list_(s)), ("untagged_roles", pa.list_(i64))]
    frame = pa.struct(frame_fields)
    return pa.schema(
        [
            ("line", i64),
            ("id", s),
            ("sentence", i64),
            ("text", s),
            ("start", i64),
            ("end", i64),
            ("start_char", i64),
            ("end_char", i64),
            ("tokens", pa.list_(s)),
            ("frames", pa.list_(frame)),
        ]
    )


class ShardWriter:
    """One shard's output: written to a temporary name, checked to hold exactly the
    documents the validation pass found (the same lines, in the same order, those the
    actors skipped included), renamed into place, then marked done. ``tags``: the
    Parquet schema holds each frame's BIO tags."""

    def __init__(
        self,
        out_dir: Path,
        shard: Shard,
        output_format: str,
        expected: Dict[str, Any],
        *,
        tags: bool = False,
    ):
        self.shard = shard
        self.format = output_format
        self.final = shard_file(out_dir, shard.name, output_format)
        self.marker = out_dir / f"{shard.name}{DONE_SUFFIX}"
        self.tmp = out_dir / f".{shard.name}.{uuid.uuid4().hex[:8]}{TMP_SUFFIX}"
        self.expected = expected  # the validation pass's "docs" and "lines_digest"
        self.lines = DocLines()
        self.records = 0
        self.frames = 0
        # documents of the validation pass the actors did not label (too long), by reason
        self.skipped = dict.fromkeys(SKIP_REASONS, 0)
        self._pending: List[Dict[str, Any]] = []
        self._file: Any = None
        self._parquet: Any = None
        if output_format == "jsonl":
            self._file = open(self.tmp, "w", encoding="utf8", newline="\n")
        else:
            import pyarrow.parquet as pq

            self._schema = parquet_schema(tags)
            self._parquet = pq.ParquetWriter(self.tmp, self._schema)

    @property
    def docs(self) -> int:
        """The documents labelled."""
        return self.lines.count - sum(self.skipped.values())

    def _add_line(self, line: int) -> None:
        if line <= self.lines.last:
            last = self.lines.last
            self._fail(f"the document of line {line} came after that of line {last} (a repeat)")
        self.lines.add(line)

    def skip(self, line: int, reason: str) -> None:
        """One document the actors did not label (``reason``: ``too_long``): counted,
        with no record."""
        self._add_line(line)
        self.skipped[reason] += 1

    def write(self, line: int, records: str, frames: int) -> None:
        """One document: its input line and its records as JSON lines."""
        self._add_line(line)
        self.records += records.count("\n")
        self.frames += frames
        if self._file is not None:
            self._file.write(records)
            return
        for record in records.splitlines():
            obj = json.loads(record)
            if "id" in obj and not isinstance(obj["id"], str):
                obj["id"] = json.dumps(obj["id"], ensure_ascii=False)
            self._pending.append(obj)
        if len(self._pending) >= 1000:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if self._pending:
            table = pa.Table.from_pylist(self._pending, schema=self._schema)
            self._parquet.write_table(table)
            self._pending = []

    def _fail(self, problem: str) -> NoReturn:
        self.abort()
        raise RayAnnotateError(Errors.E325.format(shard=self.shard.where(), problem=problem))

    def close(self, marker: Dict[str, Any]) -> None:
        """Finish the shard: check its documents, rename it, write ``marker`` (with the
        shard's source and counts added)."""
        try:
            if self._file is not None:
                self._file.close()
            else:
                self._flush()
                self._parquet.close()
        except BaseException:
            self.abort()
            raise
        want, got = self.expected["docs"], self.lines.count
        if got != want:
            self._fail(f"expected {want} document(s), got {got}")
        if self.lines.digest != self.expected["lines_digest"]:
            self._fail(f"got {got} document(s), but not those of the shard's lines")
        os.replace(self.tmp, self.final)
        counts = {"docs": self.docs, "records": self.records, "frames": self.frames}
        write_json(self.marker, {"source": self.shard.source(), **marker, **counts})

    def abort(self) -> None:
        for handle in (self._file, self._parquet):
            if handle is not None:
                try:
                    handle.close()
                except Exception:  # noqa: S110 (closing a half-written file on the way out)
                    pass
        self.tmp.unlink(missing_ok=True)


def shard_file(out_dir: Path, name: str, output_format: str) -> Path:
    return out_dir / f"{name}.{output_format}"


def write_json(path: Path, obj: Dict[str, Any]) -> None:
    """``obj`` as ``path``, atomically (a marker is either there in full or not at all)."""
    tmp = path.with_name(f".{path.name}{TMP_SUFFIX}")
    tmp.write_text(json.dumps(obj) + "\n", encoding="utf8")
    os.replace(tmp, path)


# ------------------------------------------------------------- the directory --------
def make_output_dir(out_dir: Path) -> None:
    """Create ``out_dir`` (E339 if it is a file, E318 if it cannot be written)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise RayAnnotateError(Errors.E339.format(path=out_dir))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise RayAnnotateError(
            Errors.E318.format(path=out_dir, detail=err.strerror or err)
        ) from None


@contextmanager
def output_lock(out_dir: Path) -> Iterator[None]:
    """Hold ``out_dir``'s lock file for the block; E322 at once if another run holds it.
    The lock is the operating system's (``flock``): it goes with the process that held
    it, so a run that crashed or was killed leaves no stale lock behind."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(out_dir / LOCK), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise RayAnnotateError(Errors.E322.format(path=out_dir, lock=out_dir / LOCK)) from None
    try:
        yield
    finally:
        lock.release()


def _remove_shard(out_dir: Path, name: str, output_format: str) -> None:
    # the shard first, then its marker: a marker never outlives its shard unseen
    shard_file(out_dir, name, output_format).unlink(missing_ok=True)
    (out_dir / f"{name}{DONE_SUFFIX}").unlink(missing_ok=True)


def _read_markers(out_dir: Path) -> Dict[str, Dict[str, Any]]:
    markers = {}
    for path in sorted(out_dir.glob(f"*{DONE_SUFFIX}")):
        try:
            markers[path.name[: -len(DONE_SUFFIX)]] = json.loads(path.read_text(encoding="utf8"))
        except (OSError, ValueError):
            markers[path.name[: -len(DONE_SUFFIX)]] = {}  # unreadable: made by no run we know
    return markers


def _check_manifest(out_dir: Path, manifest: Dict[str, Any], overwrite: bool) -> None:
    """Refuse (E323) or, with ``overwrite``, clear the output of a run with other
    options; refuse a directory with markers but no manifest (E324)."""
    path = out_dir / MANIFEST
    if path.exists():
        # a manifest without "tags" is that of a run from before --tags, which wrote them;
        # one without "srl_options", of a run before --predicate-pos: the pipeline's own
        old = {"tags": True, "srl_options": {}, **json.loads(path.read_text(encoding="utf8"))}
        if old == manifest:
            return
        if not overwrite:
            raise RayAnnotateError(Errors.E323.format(path=out_dir, old=old, new=manifest))
        for name in _read_markers(out_dir):
            _remove_shard(out_dir, name, str(old.get("format", manifest["format"])))
    elif any(out_dir.glob(f"*{DONE_SUFFIX}")):
        raise RayAnnotateError(Errors.E324.format(path=out_dir, manifest=MANIFEST))
    write_json(path, manifest)


def _marker_conflict(
    marker: Dict[str, Any], shard: Optional[Shard], inputs: Set[str], model: Dict[str, str]
) -> Optional[str]:
    """Why a done shard can be neither kept nor redone, or ``None``: "model" (made with
    another model) or "input" (made from a file that is not this shard's input)."""
    if (marker.get("model") or {}).get("fingerprint") != model["fingerprint"]:
        return "model"
    path = (marker.get("source") or {}).get("path")
    if shard is None:  # past the end of an input that got shorter: dropped, not refused
        return None if path in inputs else "input"
    return None if path == shard.path else "input"


def prepare_output(
    out_dir: Path,
    shards: List[Shard],
    output_format: str,
    shard_lines: int,
    model: Dict[str, str],
    overwrite: bool = False,
    tags: bool = False,
    srl_options: Optional[Dict[str, Any]] = None,
) -> Dict[int, Dict[str, Any]]:
    """Check ``out_dir`` (its lock held) against this run and tidy it: remove temporary
    files, shards without a marker and shards whose input changed (they are redone),
    and refuse shards made from other inputs or with another model (E320, E321) unless
    ``overwrite``, which removes them. Returns the markers of the shards kept, by index.

    ``model``: ``name`` (for messages) and ``fingerprint``
    (:func:`spacy_lisa.loading.pipeline_fingerprint`); ``tags``: whether the records
    carry each frame's BIO tags, ``srl_options``: the ``lisa_srl`` options of the run (a
    directory written otherwise is refused the same way)."""
    manifest = {
        "format": output_format,
        "shard_lines": shard_lines,
        "tags": tags,
        "srl_options": dict(srl_options or {}),
    }
    _check_manifest(out_dir, manifest, overwrite)
    planned = {s.name: s for s in shards}
    inputs = {s.path for s in shards}
    conflicts: List[Tuple[str, str, Dict[str, Any]]] = []
    redo: List[str] = []
    done: Dict[int, Dict[str, Any]] = {}
    for name, marker in _read_markers(out_dir).items():
        shard = planned.get(name)
        conflict = _marker_conflict(marker, shard, inputs, model)
        if conflict is not None:
            conflicts.append((name, conflict, marker))
        elif shard is not None and marker.get("source") == shard.source():
            if shard_file(out_dir, name, output_format).exists():
                done[shard.index] = marker
        else:  # its input changed: redo it (or drop it, when past the input's end)
            redo.append(name)
    if conflicts and not overwrite:  # refused: nothing in the directory is touched
        raise RayAnnotateError(_conflict_message(out_dir, conflicts, planned, model))
    for stale in out_dir.glob(f".*{TMP_SUFFIX}"):
        stale.unlink(missing_ok=True)
    for name in redo + [name for name, _, _ in conflicts]:
        _remove_shard(out_dir, name, output_format)
    for shard in shards:
        if shard.index not in done:  # half-written: nothing of it survives
            _remove_shard(out_dir, shard.name, output_format)
    return done


def _conflict_message(
    out_dir: Path,
    conflicts: List[Tuple[str, str, Dict[str, Any]]],
    planned: Dict[str, Shard],
    model: Dict[str, str],
) -> str:
    name, kind, marker = conflicts[0]
    source = marker.get("source") or {}
    if kind == "model":
        found = (marker.get("model") or {}).get("name", "an unknown model")
        return Errors.E321.format(
            path=out_dir, shard=name, found=found, model=model["name"], n=len(conflicts)
        )
    shard = planned.get(name)
    return Errors.E320.format(
        path=out_dir,
        shard=name,
        found=source.get("path", "an unknown input"),
        expected=shard.path if shard is not None else "no input of this run",
        n=len(conflicts),
    )
