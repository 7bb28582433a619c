"""The inputs of a Ray run: finding the input files (a file, a directory, a glob),
cutting them into shards, and reading and validating their lines (Parquet: rows) with
the same line parser as ``spacy-lisa predict``. The reading functions run in Ray tasks."""

from __future__ import annotations

import glob
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Sequence, Union

from ..cli._io import (
    CLIError,
    InputDoc,
    InputFormat,
    InputProblem,
    InputSource,
    detect_format,
    parse_line,
)

PathLike = Union[str, Path]
SHARD_LINES = 10_000
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
