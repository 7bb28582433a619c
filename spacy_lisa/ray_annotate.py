"""Annotate corpora past one machine with Ray Data: ``spacy-lisa predict --engine ray``
and :func:`annotate_ray`.

The run is a Ray Data pipeline; scheduling, back-pressure, actor restarts and task
retries are Ray's:

1. The driver lists the input files (a file, a directory, a glob) and cuts each into
   *shards*: one shard per file, or fixed-size runs of ``shard_lines`` lines (Parquet:
   whole row groups). A shard is the unit of output and of re-runs.
2. Shards whose output is already complete (a ``.done`` marker beside it) are skipped.
3. A first Ray pass validates the remaining shards in parallel, with the same line
   parser as ``spacy-lisa predict``: an invalid line stops the run with its file and
   line before anything is written, unless ``skip_invalid`` counts it instead.
4. ``Dataset.flat_map`` reads the documents of each shard and ``Dataset.map_batches``
   labels them in a fixed pool of actors (``concurrency=workers``), each holding one
   loaded pipeline, restarted by Ray when its process dies (``max_restarts``,
   ``max_task_retries``). The records are those of ``predict``'s JSON lines, made by
   :func:`spacy_lisa.formats.doc_to_jsonl_records` with the input ``line`` and ``id``.
5. The driver receives the records in input order and writes each shard to a temporary
   name, checks it got exactly the shard's documents, renames it into place and only
   then writes the marker. A shard file without its marker is incomplete and is
   rewritten by the next run, so re-runs never duplicate or drop a record.

Inputs (and a model given as a directory) must be readable at the same path on every
node of the cluster; the output directory is written by the driver only.
"""

from __future__ import annotations

import glob
import json
import logging
import os
import time
import uuid
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

from .cli._io import (
    CLIError,
    InputDoc,
    InputFormat,
    InputProblem,
    InputSource,
    detect_format,
    parse_line,
)

if TYPE_CHECKING:
    import pyarrow as pa

PathLike = Union[str, Path]
SHARD_LINES = 10_000
MANIFEST = "_spacy_lisa_ray.json"
DONE_SUFFIX = ".done"
TMP_SUFFIX = ".tmp"
OUTPUT_FORMATS = ("jsonl", "parquet")
INPUT_FORMATS = ("auto", "text", "jsonl", "parquet")
PARQUET_SUFFIXES = (".parquet", ".pq")
# skip reasons, in the order they are reported
REASONS = ("blank", "not_utf8", "invalid_json", "bad_object")
REASON_NAMES = {
    "blank": "blank line(s)",
    "not_utf8": "not UTF-8",
    "invalid_json": "invalid JSON",
    "bad_object": 'no string "text"',
}
# Fault injection for the tests: "ID|MARKER_FILE" makes an actor exit (os._exit) the
# first time it sees a document with that input id, if MARKER_FILE does not exist yet
# (it is created first, so the restarted actor goes on).
CRASH_ENV = "SPACY_LISA_RAY_CRASH_ONCE"


class RayAnnotateError(CLIError):
    """A user-facing error of a Ray run (printed by the CLI, exit status 1)."""


@dataclass(frozen=True)
class Shard:
    """A run of lines (rows) of one input file, written to ``<name>.<format>``."""

    index: int
    name: str
    path: str
    format: str  # text | jsonl | parquet
    first_line: int  # 1-based number of the shard's first line (Parquet: row)
    n_lines: int
    offset: int = 0  # byte offset of the first line (text, JSONL)
    row_groups: str = ""  # Parquet: comma-separated row group indices


# ------------------------------------------------------------------ planning --------
def _has_magic(part: str) -> bool:
    return any(c in part for c in "*?[")


def _visible(path: Path, base: Path) -> bool:
    """Ray's readers skip names starting with ``.`` or ``_``; so do we."""
    return not any(p.startswith((".", "_")) for p in path.relative_to(base).parts)


def resolve_inputs(inputs: Union[PathLike, Sequence[PathLike]]) -> List[tuple[Path, str]]:
    """The input files, each with its name relative to what was given (a file's name, a
    path under a directory, the path under a glob's fixed prefix), sorted."""
    specs = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    if not specs:
        raise RayAnnotateError("No input given. Pass a file, a directory or a glob.")
    found: List[tuple[Path, str]] = []
    for spec in specs:
        text = str(spec)
        if text == "-":
            raise RayAnnotateError(
                "--engine ray cannot read stdin: Ray workers read the input files "
                "themselves. Save the input to a file (on storage every node can read)."
            )
        path = Path(text).expanduser()
        if path.is_dir():
            base = path
            files = [p for p in path.rglob("*") if p.is_file() and _visible(p, base)]
        elif path.is_file():
            base, files = path.parent, [path]
        elif _has_magic(text):
            parts = Path(text).parts
            fixed = [p for p in parts[: next(i for i, p in enumerate(parts) if _has_magic(p))]]
            base = Path(*fixed) if fixed else Path(".")
            files = [Path(p) for p in glob.glob(text, recursive=True) if Path(p).is_file()]
        else:
            raise RayAnnotateError(
                f"Input not found: {text}. Pass an existing file, a directory or a glob "
                "such as 'corpus/*.jsonl' (quoted, so the shell leaves it to spacy-lisa)."
            )
        if not files:
            raise RayAnnotateError(
                f"No input files in {text}. Pass a file, a directory with files or a glob "
                "that matches files (names starting with '.' or '_' are skipped)."
            )
        for f in sorted(files):
            rel = f.resolve().relative_to(base.resolve()).as_posix().replace("/", "__")
            found.append((f.resolve(), rel))
    names = [rel for _, rel in found]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise RayAnnotateError(
            f"Two inputs give the same output name ({', '.join(clash)}). Pass one directory "
            "or glob above them instead of several, so their names stay apart."
        )
    return found


def file_format(path: Path, requested: str) -> str:
    """``requested`` unless ``auto``: ``.parquet`` files are Parquet, else as ``predict``
    decides (``.jsonl``/``.ndjson`` JSONL, ``.txt`` text, else by the first line)."""
    if requested not in INPUT_FORMATS:
        raise RayAnnotateError(
            f"Unknown input format {requested!r}: use one of {', '.join(INPUT_FORMATS)}."
        )
    if requested != "auto":
        return requested
    if path.suffix.lower() in PARQUET_SUFFIXES:
        return "parquet"
    return detect_format(InputSource(path), InputFormat.auto).value


def _plan_lines(path: Path, fmt: str, rel: str, shard_lines: int) -> List[Shard]:
    """Shards of ``shard_lines`` lines, with the byte offset each starts at."""
    shards: List[Shard] = []
    first, offset, n, pos = 1, 0, 0, 0

    def add(n_lines: int) -> None:
        name = f"{rel}-{len(shards):05d}"
        shards.append(Shard(0, name, str(path), fmt, first, n_lines, offset))

    with open(path, "rb") as f:
        for raw in f:
            n += 1
            pos += len(raw)
            if n - first + 1 == shard_lines:
                add(shard_lines)
                first, offset = n + 1, pos
    if n >= first or not shards:
        add(n - first + 1)
    return shards


def _plan_parquet(path: Path, rel: str, shard_lines: int) -> List[Shard]:
    """Shards of whole row groups, about ``shard_lines`` rows each."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(path)
    except (OSError, pa.ArrowInvalid) as err:
        raise RayAnnotateError(
            f"{path}: not a readable Parquet file ({err}). Pass --input-format text or jsonl "
            "if it is not Parquet."
        ) from None
    schema = meta.schema_arrow
    if "text" not in schema.names or not (
        pa.types.is_string(schema.field("text").type)
        or pa.types.is_large_string(schema.field("text").type)
    ):
        raise RayAnnotateError(
            f'{path}: a Parquet input needs a string column "text" holding the documents '
            f"(columns: {', '.join(schema.names)}). Rename or convert the column."
        )
    shards: List[Shard] = []
    groups: List[int] = []
    first, rows = 1, 0
    for g in range(meta.metadata.num_row_groups):
        groups.append(g)
        rows += meta.metadata.row_group(g).num_rows
        if rows >= shard_lines:
            name = f"{rel}-{len(shards):05d}"
            shards.append(
                Shard(0, name, str(path), "parquet", first, rows, 0, ",".join(map(str, groups)))
            )
            first, rows, groups = first + rows, 0, []
    if groups or not shards:
        name = f"{rel}-{len(shards):05d}"
        shards.append(
            Shard(0, name, str(path), "parquet", first, rows, 0, ",".join(map(str, groups)))
        )
    return shards


def plan_shards(
    inputs: Union[PathLike, Sequence[PathLike]], input_format: str, shard_lines: int
) -> List[Shard]:
    """All shards of all inputs, numbered in input order."""
    if shard_lines < 1:
        raise RayAnnotateError(f"shard_lines must be at least 1, got {shard_lines}.")
    shards: List[Shard] = []
    for path, rel in resolve_inputs(inputs):
        fmt = file_format(path, input_format)
        if fmt == "parquet":
            shards.extend(_plan_parquet(path, rel, shard_lines))
        else:
            shards.extend(_plan_lines(path, fmt, rel, shard_lines))
    return [Shard(**{**asdict(s), "index": i}) for i, s in enumerate(shards)]


# ------------------------------------------------------------------- reading --------
def _reason(raw: bytes, fmt: str) -> str:
    try:
        text = raw.decode("utf8")
    except UnicodeDecodeError:
        return "not_utf8"
    if fmt == "jsonl":
        try:
            json.loads(text)
        except json.JSONDecodeError:
            return "invalid_json"
    return "bad_object"


def iter_shard(shard: Dict[str, Any]) -> Iterator[tuple[Union[InputDoc, InputProblem, None], str]]:
    """Every line (row) of a shard, parsed as ``predict`` parses it, with the skip
    reason of a problem or a blank line ('' for a document)."""
    fmt, path, first = shard["format"], shard["path"], int(shard["first_line"])
    if fmt == "parquet":
        yield from _iter_parquet(shard)
        return
    with open(path, "rb") as f:
        f.seek(int(shard["offset"]))
        for i in range(int(shard["n_lines"])):
            raw = f.readline().rstrip(b"\r\n")
            line = first + i
            if line == 1 and raw.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark
                raw = raw[3:]
            item = parse_line(raw, line, InputFormat(fmt), path)
            if item is None:
                yield None, "blank"
            elif isinstance(item, InputProblem):
                yield item, _reason(raw, fmt)
            else:
                yield item, ""


def _iter_parquet(
    shard: Dict[str, Any],
) -> Iterator[tuple[Union[InputDoc, InputProblem, None], str]]:
    import pyarrow.parquet as pq

    groups = [int(g) for g in str(shard["row_groups"]).split(",") if g]
    if not groups:
        return
    pf = pq.ParquetFile(shard["path"])
    columns = ["text"] + (["id"] if "id" in pf.schema_arrow.names else [])
    table = pf.read_row_groups(groups, columns=columns)
    texts = table.column("text").to_pylist()
    ids = table.column("id").to_pylist() if "id" in columns else [None] * len(texts)
    for i, (text, id_) in enumerate(zip(texts, ids, strict=True)):
        row = int(shard["first_line"]) + i
        if text is None:
            message = (
                f'{shard["path"]}:{row}: "text" is null. Each row needs a string "text"; '
                "fix the row, or pass --skip-invalid to skip bad rows."
            )
            yield InputProblem(row, message), "bad_object"
        elif not text.strip():
            yield None, "blank"
        else:
            yield InputDoc(row, text, id_), ""


def scan_shard(shard: Dict[str, Any]) -> Dict[str, Any]:
    """The validation pass over one shard: documents, skips by reason, the first few
    problems (as JSON: Ray rows hold flat columns)."""
    counts = dict.fromkeys(REASONS, 0)
    docs = 0
    problems: List[tuple[int, str]] = []
    for item, reason in iter_shard(shard):
        if reason:
            counts[reason] += 1
            if isinstance(item, InputProblem) and len(problems) < 5:
                problems.append((item.line, item.message))
        else:
            docs += 1
    return {
        "index": shard["index"],
        "docs": docs,
        "skipped": json.dumps(counts),
        "problems": json.dumps(problems),
    }


def shard_docs(shard: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    """The documents of one shard as Ray rows; the id JSON-encoded ('' for none), so
    that ids of any JSON type share one string column."""
    for item, reason in iter_shard(shard):
        if not reason and isinstance(item, InputDoc):
            yield {
                "shard": int(shard["index"]),
                "line": item.line,
                "text": item.text,
                "id": "" if item.id is None else json.dumps(item.id, default=str),
            }


# ------------------------------------------------------------------- workers --------
class Annotator:
    """The callable class of ``map_batches``: one loaded pipeline per Ray actor."""

    def __init__(self, model: str, use_gpu: bool, batch_size: Optional[int], threads: int):
        import torch

        from .cli._io import load_pipeline

        torch.set_num_threads(max(1, threads))
        # Ray sets CUDA_VISIBLE_DEVICES to the actor's GPU, which is then GPU 0
        self.nlp = load_pipeline(model, 0 if use_gpu else -1)
        self.batch_size = batch_size
        self.crash = os.environ.get(CRASH_ENV, "")

    def _maybe_crash(self, ids: List[str]) -> None:
        target, _, marker = self.crash.partition("|")
        if json.dumps(target) in ids and marker and not os.path.exists(marker):
            Path(marker).touch()
            os._exit(1)

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        from .formats import doc_to_jsonl_records

        texts = [str(t) for t in batch["text"]]
        ids = [str(i) for i in batch["id"]]
        if self.crash:
            self._maybe_crash(ids)
        shards: List[int] = []
        lines: List[int] = []
        records: List[str] = []
        frames: List[int] = []
        docs = self.nlp.pipe(texts, batch_size=self.batch_size)
        for doc, shard, line, id_ in zip(docs, batch["shard"], batch["line"], ids, strict=True):
            # the same extra keys as predict's JSON lines: "line", then "id" if given
            extra: Dict[str, Any] = {"line": int(line)}
            if id_:
                extra["id"] = json.loads(id_)
            for record in doc_to_jsonl_records(doc, extra=extra):
                shards.append(int(shard))
                lines.append(int(line))
                records.append(json.dumps(record, ensure_ascii=False))
                frames.append(len(record["frames"]))
        return {"shard": shards, "line": lines, "record": records, "frames": frames}


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


# ----------------------------------------------------------------------- run --------
def _connect(address: Optional[str]) -> bool:
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
    shard_lines: int = SHARD_LINES,
    max_restarts: int = 3,
    max_task_retries: int = 3,
    echo: Optional[Callable[[str], None]] = None,
) -> Dict[str, Any]:
    """Label ``inputs`` (text, JSONL or Parquet: a file, a directory, a glob or a list
    of them) with the pipeline ``model`` in a pool of ``workers`` Ray actors, and write
    ``predict``'s JSON records per shard to the directory ``output`` (``<shard>.jsonl``
    or ``<shard>.parquet``, each with a ``<shard>.done`` marker). A re-run into the same
    directory only does the shards without a marker.

    Returns the counts: ``docs`` (labelled), ``records`` (one per sentence),
    ``frames``, ``skipped`` (by reason: blank, not_utf8, invalid_json, bad_object),
    ``shards``, ``shards_written``, ``shards_done_before``, ``seconds`` and
    ``docs_per_second`` (this run's documents only); all but the last three cover the
    shards done by earlier runs too.
    """
    try:
        import ray
    except ImportError:
        raise RayAnnotateError(
            "--engine ray needs Ray Data: pip install 'spacy-lisa[ray]' (or 'ray[data]')."
        ) from None
    from tqdm import tqdm

    say = echo or (lambda message: None)
    if output_format not in OUTPUT_FORMATS:
        raise RayAnnotateError(
            f"--engine ray writes {' or '.join(OUTPUT_FORMATS)}, not {output_format!r}. "
            "Use --format jsonl (or --parquet), or --engine local for other formats."
        )
    if workers < 1 or worker_cpus < 0 or worker_gpus < 0:
        raise RayAnnotateError(
            "workers must be at least 1, worker_cpus and worker_gpus at least 0."
        )
    out_dir = Path(output).expanduser().resolve()
    shards = plan_shards(inputs, input_format, shard_lines)
    done = prepare_output(out_dir, shards, output_format, shard_lines)
    todo = [s for s in shards if s.index not in done]
    stats: Dict[str, Any] = {
        "docs": 0,
        "records": 0,
        "frames": 0,
        "skipped": dict.fromkeys(REASONS, 0),
        "shards": len(shards),
        "shards_written": 0,
        "shards_done_before": len(done),
    }
    for marker in done.values():
        for key in ("docs", "records", "frames"):
            stats[key] += marker.get(key, 0)
        for reason, n in marker.get("skipped", {}).items():
            stats["skipped"][reason] = stats["skipped"].get(reason, 0) + n
    start = time.perf_counter()
    run_docs = 0
    if todo:
        started = _connect(address)
        ctx = ray.data.DataContext.get_current()
        saved = (ctx.execution_options.preserve_order, ctx.enable_progress_bars)
        ctx.execution_options.preserve_order = True  # records come back in input order
        ctx.enable_progress_bars = False  # one bar, ours, counting documents
        try:
            run_docs = _run(
                ray,
                todo,
                out_dir,
                stats,
                model=_model_path(model),
                output_format=output_format,
                workers=workers,
                worker_cpus=worker_cpus,
                worker_gpus=worker_gpus,
                batch_size=batch_size,
                skip_invalid=skip_invalid,
                ray_args={"max_restarts": max_restarts, "max_task_retries": max_task_retries},
                bar=tqdm,
            )
        finally:
            ctx.execution_options.preserve_order, ctx.enable_progress_bars = saved
            if started:
                ray.shutdown()
    seconds = time.perf_counter() - start
    stats["seconds"] = seconds
    stats["docs_per_second"] = run_docs / seconds if seconds > 0 and run_docs else 0.0
    say(
        f"✔ Labelled {stats['docs']} doc(s): {stats['records']} record(s) (sentences), "
        f"{stats['frames']} frame(s) → {out_dir} ({output_format}; "
        f"{stats['shards_written']} shard(s) written in {seconds:.1f}s, "
        f"{stats['docs_per_second']:.1f} docs/s; {stats['shards_done_before']} done before)"
    )
    skipped = stats["skipped"]
    if skipped["blank"]:
        say(f"ℹ Skipped {skipped['blank']} blank line(s)")
    invalid = {r: n for r, n in skipped.items() if r != "blank" and n}
    if invalid:
        detail = ", ".join(f"{REASON_NAMES.get(r, r)}: {n}" for r, n in invalid.items())
        say(f"⚠ Skipped {sum(invalid.values())} invalid line(s) (--skip-invalid): {detail}")
    return stats


def _run(
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


__all__ = ["annotate_ray", "plan_shards", "resolve_inputs", "RayAnnotateError", "Shard"]
