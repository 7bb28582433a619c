"""The output of a Ray run: each shard written to a temporary name, renamed into place
when complete, then marked done (``<shard>.done``); the manifest and the clean-up of an
interrupted run that make re-runs redo exactly the shards without a marker."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

from .inputs import RayAnnotateError, Shard

if TYPE_CHECKING:
    import pyarrow as pa

MANIFEST = "_spacy_lisa_ray.json"
DONE_SUFFIX = ".done"
TMP_SUFFIX = ".tmp"
OUTPUT_FORMATS = ("jsonl", "parquet")


# -------------------------------------------------------------------- output --------
def parquet_schema() -> pa.Schema:
    """The Arrow schema of Parquet output: ``predict``'s JSON record, with ``id`` as a
    string (a string id as it is, any other JSON value JSON-encoded)."""
    import pyarrow as pa

    i64, s = pa.int64(), pa.string()
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
    frame = pa.struct(
        [
            ("frame", i64),
            ("roleset", s),
            ("lemma", s),
            ("predicate", pa.struct(offsets)),
            ("roles", pa.list_(pa.struct([("label", s), *offsets]))),
            ("tags", pa.list_(s)),
            ("untagged_roles", pa.list_(i64)),
        ]
    )
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
    """One shard's output: written to a temporary name, renamed into place when all
    its documents are in, then marked done."""

    def __init__(self, out_dir: Path, shard: Shard, output_format: str, expected_docs: int):
        self.shard = shard
        self.format = output_format
        self.final = out_dir / f"{shard.name}.{output_format}"
        self.marker = out_dir / f"{shard.name}{DONE_SUFFIX}"
        self.tmp = out_dir / f".{shard.name}.{uuid.uuid4().hex[:8]}{TMP_SUFFIX}"
        self.expected_docs = expected_docs
        self.docs = 0
        self.records = 0
        self.frames = 0
        self._last_line = -1
        self._pending: List[Dict[str, Any]] = []
        self._file: Any = None
        self._parquet: Any = None
        if output_format == "jsonl":
            self._file = open(self.tmp, "w", encoding="utf8", newline="\n")
        else:
            import pyarrow.parquet as pq

            self._schema = parquet_schema()
            self._parquet = pq.ParquetWriter(self.tmp, self._schema)

    def write(self, line: int, record: str, frames: int) -> None:
        if line != self._last_line:
            self.docs += 1
            self._last_line = line
        self.records += 1
        self.frames += frames
        if self._file is not None:
            self._file.write(record + "\n")
        else:
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

    def close(self, stats: Dict[str, Any]) -> None:
        """Finish the shard: check the document count, rename, write the marker."""
        try:
            if self._file is not None:
                self._file.close()
            else:
                self._flush()
                self._parquet.close()
            if self.docs != self.expected_docs:
                raise RayAnnotateError(
                    f"Shard {self.shard.name} ({self.shard.path}, lines "
                    f"{self.shard.first_line}-{self.shard.first_line + self.shard.n_lines - 1}"
                    f"): expected {self.expected_docs} document(s), got {self.docs}. Nothing "
                    "was kept for this shard; run the same command again to redo it."
                )
            os.replace(self.tmp, self.final)
        except BaseException:
            self.abort()
            raise
        marker = {**stats, "docs": self.docs, "records": self.records, "frames": self.frames}
        marker.update(input=self.shard.path, first_line=self.shard.first_line)
        marker["n_lines"] = self.shard.n_lines
        tmp_marker = self.marker.with_name(f".{self.marker.name}{TMP_SUFFIX}")
        tmp_marker.write_text(json.dumps(marker) + "\n", encoding="utf8")
        os.replace(tmp_marker, self.marker)

    def abort(self) -> None:
        for handle in (self._file, self._parquet):
            if handle is not None:
                try:
                    handle.close()
                except Exception:  # noqa: S110 (closing a half-written file on the way out)
                    pass
        self.tmp.unlink(missing_ok=True)


def prepare_output(out_dir: Path, shards: List[Shard], output_format: str, shard_lines: int):
    """Create or check ``out_dir``; remove temporary files and unmarked shard files of
    an interrupted run. Returns the markers (parsed) of the shards already done."""
    if out_dir.exists() and not out_dir.is_dir():
        raise RayAnnotateError(
            f"--output {out_dir} is a file; --engine ray writes a directory of shards. "
            "Pass a directory (new or from an earlier run of the same command)."
        )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise RayAnnotateError(
            f"Cannot write to {out_dir}: {err.strerror or err}. Check the path and its permissions."
        ) from None
    manifest = {"format": output_format, "shard_lines": shard_lines}
    manifest_path = out_dir / MANIFEST
    if manifest_path.exists():
        old = json.loads(manifest_path.read_text(encoding="utf8"))
        if old != manifest:
            raise RayAnnotateError(
                f"{out_dir} holds the output of a run with {old} and this run has "
                f"{manifest}: re-runs must cut the input the same way. Pass the same "
                "options, or a new output directory."
            )
    elif any(p.name.endswith(DONE_SUFFIX) for p in out_dir.iterdir()):
        raise RayAnnotateError(
            f"{out_dir} holds shards but no {MANIFEST}. Pass a new output directory."
        )
    else:
        manifest_path.write_text(json.dumps(manifest) + "\n", encoding="utf8")
    for stale in out_dir.glob(f".*{TMP_SUFFIX}"):
        stale.unlink(missing_ok=True)
    done: Dict[int, Dict[str, Any]] = {}
    for shard in shards:
        final = out_dir / f"{shard.name}.{output_format}"
        marker = out_dir / f"{shard.name}{DONE_SUFFIX}"
        if marker.exists() and final.exists():
            done[shard.index] = json.loads(marker.read_text(encoding="utf8"))
            continue
        # half-written: nothing of it survives
        marker.unlink(missing_ok=True)
        final.unlink(missing_ok=True)
    return done
