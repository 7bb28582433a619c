"""The inputs of a Ray run: finding the input files (a file, a directory, a glob),
cutting them into shards, each with a fingerprint of what it holds, and reading and
validating their lines (Parquet: rows) with the reader and parsers of
:mod:`spacy_lisa.input_docs`, those of ``spacy-lisa predict``: lines are counted as
``predict`` counts them (a line over ``MAX_LINE_BYTES`` skipped unread, an input that
starts with a UTF-16/UTF-32 byte order mark in its own lines, as one shard). The reading
functions run in Ray tasks."""

from __future__ import annotations

import glob
import hashlib
import itertools
import json
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import IO, Any, Dict, Iterator, List, Optional, Sequence, Union, cast

from ..errors import Errors, UserError
from ..input_docs import (
    SKIP_REASONS,
    InputDoc,
    InputFormat,
    InputItem,
    InputProblem,
    InputSource,
    RawLine,
    UnreadLine,
    detect_format,
    parse_line,
    parse_row,
    read_lines,
    unread_problem,
    wide_encoding,
)

PathLike = Union[str, Path]
SHARD_LINES = 10_000
INPUT_FORMATS = ("auto", "text", "jsonl", "parquet")
PARQUET_SUFFIXES = (".parquet", ".pq")
# bytes read at a time where a file is hashed or its lines counted: a long line is never
# held whole
_CHUNK = 1 << 20


class RayAnnotateError(UserError):
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
    # what the shard holds: a hash of its bytes (text, JSONL), or of the file's size and
    # modification time (Parquet, whose planning reads only the file's footer)
    fingerprint: str = ""

    def source(self) -> Dict[str, Any]:
        """What the shard is made from, as its marker records it: equal for a shard of
        unchanged input cut the same way."""
        return {k: v for k, v in asdict(self).items() if k != "index"}

    def where(self) -> str:
        """The shard for messages: its name, file and lines (rows)."""
        unit = "rows" if self.format == "parquet" else "lines"
        last = self.first_line + self.n_lines - 1
        return f"{self.name} ({self.path}, {unit} {self.first_line}-{last})"


class DocLines:
    """The input lines of a shard's documents in order, as a count and a hash (constant
    memory): the validation pass and the shard writer must arrive at the same."""

    def __init__(self) -> None:
        self.count = 0
        self.last = 0
        self._hash = hashlib.blake2b(digest_size=16)

    def add(self, line: int) -> None:
        self.count += 1
        self.last = line
        self._hash.update(line.to_bytes(8, "little"))

    @property
    def digest(self) -> str:
        return self._hash.hexdigest()


def _content_hash() -> Any:
    return hashlib.blake2b(digest_size=16)


def _hash_bytes(f: IO[bytes], start: int, end: Optional[int], content: Any) -> None:
    """Add the bytes ``[start, end)`` of ``f`` (to its end when ``end`` is None) to the
    hash ``content``, a chunk at a time."""
    f.seek(start)
    while end is None or f.tell() < end:
        chunk = f.read(_CHUNK if end is None else min(_CHUNK, end - f.tell()))
        if not chunk:
            return
        content.update(chunk)


def _parquet_fingerprint(path: str, row_groups: str) -> str:
    stat = Path(path).stat()
    return f"parquet:{stat.st_size}:{stat.st_mtime_ns}:{row_groups}"


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
        raise RayAnnotateError(Errors.E331)
    found: List[tuple[Path, str]] = []
    for spec in specs:
        text = str(spec)
        if text == "-":
            raise RayAnnotateError(Errors.E332)
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
            raise RayAnnotateError(Errors.E333.format(path=text))
        if not files:
            raise RayAnnotateError(Errors.E334.format(path=text))
        for f in sorted(files):
            rel = f.resolve().relative_to(base.resolve()).as_posix().replace("/", "__")
            found.append((f.resolve(), rel))
    names = [rel for _, rel in found]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise RayAnnotateError(Errors.E335.format(names=", ".join(clash)))
    return found


def file_format(path: Path, requested: str) -> str:
    """``requested`` unless ``auto``: ``.parquet`` files are Parquet, else as ``predict``
    decides (``.jsonl``/``.ndjson`` JSONL, ``.txt`` text, else by the first line)."""
    if requested not in INPUT_FORMATS:
        raise RayAnnotateError(
            Errors.E336.format(format=requested, formats=", ".join(INPUT_FORMATS))
        )
    if requested != "auto":
        return requested
    if path.suffix.lower() in PARQUET_SUFFIXES:
        return "parquet"
    return detect_format(InputSource(path), InputFormat.auto).value


def _plan_lines(path: Path, fmt: str, rel: str, shard_lines: int) -> List[Shard]:
    """Shards of ``shard_lines`` lines, with the byte offset each starts at and the hash
    of its bytes. Lines end at ``\\n`` as :func:`spacy_lisa.input_docs.read_lines` reads
    them, a chunk at a time; an input in UTF-16 or UTF-32 is one shard (see
    :func:`_plan_wide`)."""
    with open(path, "rb") as f:
        if wide_encoding(f.read(4)) is not None:
            return [_plan_wide(f, path, fmt, rel)]
        f.seek(0)
        shards: List[Shard] = []
        first, offset, n, pos = 1, 0, 0, 0
        content = _content_hash()

        def add(n_lines: int) -> None:
            name = f"{rel}-{len(shards):05d}"
            shards.append(
                Shard(0, name, str(path), fmt, first, n_lines, offset, "", content.hexdigest())
            )

        partial_line = False  # the last chunk read ends inside a line
        for raw in iter(partial(f.readline, _CHUNK), b""):
            pos += len(raw)
            content.update(raw)
            partial_line = not raw.endswith(b"\n")
            if partial_line:
                continue
            n += 1
            if n - first + 1 == shard_lines:
                add(shard_lines)
                first, offset, content = n + 1, pos, _content_hash()
        if partial_line:  # a last line without its newline
            n += 1
    if n >= first or not shards:
        add(n - first + 1)
    return shards


def _plan_wide(f: IO[bytes], path: Path, fmt: str, rel: str) -> Shard:
    """The one shard of an input that starts with a UTF-16/UTF-32 byte order mark: its
    lines counted in its own encoding, as ``predict`` counts them (a byte-wise split
    would cut its characters and add a phantom line); none of them is a document, so its
    shard holds no record however long it is."""
    f.seek(0)  # read_lines takes the stream's first bytes from where it stands
    n_lines = sum(1 for _ in read_lines(f))
    content = _content_hash()
    _hash_bytes(f, 0, None, content)
    return Shard(0, f"{rel}-00000", str(path), fmt, 1, n_lines, 0, "", content.hexdigest())


def _plan_parquet(path: Path, rel: str, shard_lines: int) -> List[Shard]:
    """Shards of whole row groups, about ``shard_lines`` rows each."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(path)
    except (OSError, pa.ArrowInvalid) as err:
        raise RayAnnotateError(Errors.E337.format(path=path, detail=err)) from None
    schema = meta.schema_arrow
    if "text" not in schema.names or not (
        pa.types.is_string(schema.field("text").type)
        or pa.types.is_large_string(schema.field("text").type)
    ):
        raise RayAnnotateError(Errors.E338.format(path=path, columns=", ".join(schema.names)))
    shards: List[Shard] = []
    groups: List[int] = []
    first, rows = 1, 0

    def add() -> None:
        name, row_groups = f"{rel}-{len(shards):05d}", ",".join(map(str, groups))
        fingerprint = _parquet_fingerprint(str(path), row_groups)
        shards.append(Shard(0, name, str(path), "parquet", first, rows, 0, row_groups, fingerprint))

    for g in range(meta.metadata.num_row_groups):
        groups.append(g)
        rows += meta.metadata.row_group(g).num_rows
        if rows >= shard_lines:
            add()
            first, rows, groups = first + rows, 0, []
    if groups or not shards:
        add()
    return shards


def plan_shards(
    inputs: Union[PathLike, Sequence[PathLike]], input_format: str, shard_lines: int
) -> List[Shard]:
    """All shards of all inputs, numbered in input order."""
    if shard_lines < 1:
        raise RayAnnotateError(Errors.E341.format(shard_lines=shard_lines))
    shards: List[Shard] = []
    for path, rel in resolve_inputs(inputs):
        fmt = file_format(path, input_format)
        if fmt == "parquet":
            shards.extend(_plan_parquet(path, rel, shard_lines))
        else:
            shards.extend(_plan_lines(path, fmt, rel, shard_lines))
    return [Shard(**{**asdict(s), "index": i}) for i, s in enumerate(shards)]


# ------------------------------------------------------------------- reading --------
class _FileFrom:
    """A binary file seen from byte ``start`` on, as a stream that begins there: what
    :func:`spacy_lisa.input_docs.read_lines` reads a shard through."""

    def __init__(self, f: IO[bytes], start: int) -> None:
        self._f, self._start = f, start
        f.seek(start)

    def seek(self, pos: int, whence: int = 0) -> int:
        if whence == 0:
            pos += self._start
        return self._f.seek(pos, whence) - self._start

    def tell(self) -> int:
        return self._f.tell() - self._start

    def __getattr__(self, name: str) -> Any:  # read, readline: the file's own
        return getattr(self._f, name)


def _shard_lines(f: IO[bytes], offset: int) -> Iterator[RawLine]:
    """The lines of ``f`` from byte ``offset`` on, read as ``predict`` reads a file. A
    shard past the first starts right after a newline: it is read from that newline on,
    so that the reader sees an empty first line, dropped here, and treats none of the
    shard's lines as the input's first (no byte order mark removed, no encoding told by
    its first bytes)."""
    if offset == 0:
        f.seek(0)  # read_lines takes the stream's first bytes from where it stands
        return read_lines(f)
    lines = read_lines(cast(IO[bytes], _FileFrom(f, offset - 1)))
    next(lines, None)  # the newline that ends the line before the shard
    return lines


def iter_shard(shard: Dict[str, Any], content: Optional[Any] = None) -> Iterator[InputItem]:
    """Every line (row) of a shard, parsed as ``predict`` parses it; the bytes of the
    lines read go into the hash ``content`` when one is given."""
    fmt, path, first = shard["format"], shard["path"], int(shard["first_line"])
    if fmt == "parquet":
        yield from _iter_parquet(shard)
        return
    offset = int(shard["offset"])
    with open(path, "rb") as f:
        wide = offset == 0 and wide_encoding(f.read(4)) is not None
        lines = itertools.islice(_shard_lines(f, offset), int(shard["n_lines"]))
        for line, raw in enumerate(lines, start=first):
            if isinstance(raw, UnreadLine):
                yield unread_problem(raw, line, path)
            else:
                yield parse_line(raw, line, InputFormat(fmt), path)
        if content is not None:
            # the bytes of the lines read (a UTF-16/UTF-32 input: all of it), as planned
            _hash_bytes(f, offset, None if wide else f.tell(), content)


def _iter_parquet(shard: Dict[str, Any]) -> Iterator[InputItem]:
    import pyarrow.parquet as pq

    groups = [int(g) for g in str(shard["row_groups"]).split(",") if g]
    if not groups:
        return
    pf = pq.ParquetFile(shard["path"])
    columns = ["text"] + (["id"] if "id" in pf.schema_arrow.names else [])
    table = pf.read_row_groups(groups, columns=columns)
    texts = table.column("text").to_pylist()
    ids = table.column("id").to_pylist() if "id" in columns else [None] * len(texts)
    for row, (text, id_) in enumerate(zip(texts, ids, strict=True), start=int(shard["first_line"])):
        yield parse_row(text, id_, row, shard["path"])


def scan_shard(shard: Dict[str, Any]) -> Dict[str, Any]:
    """The validation pass over one shard: its documents' lines (count and hash), skips
    by reason, the first few problems (line, message and reason, as JSON: Ray rows hold
    flat columns) and the fingerprint of what was read, to compare with the plan's."""
    skipped = dict.fromkeys(SKIP_REASONS, 0)
    problems: List[Dict[str, Any]] = []
    lines = DocLines()
    content = _content_hash()
    for item in iter_shard(shard, content):
        if isinstance(item, InputDoc):
            lines.add(item.line)
            continue
        skipped[item.reason] += 1
        if isinstance(item, InputProblem) and len(problems) < 5:
            problems.append(asdict(item))
    if shard["format"] == "parquet":
        fingerprint = _parquet_fingerprint(shard["path"], shard["row_groups"])
    else:
        fingerprint = content.hexdigest()
    return {
        "index": shard["index"],
        "docs": lines.count,
        "lines_digest": lines.digest,
        "fingerprint": fingerprint,
        "skipped": json.dumps(skipped),
        "problems": json.dumps(problems),
    }


def shard_docs(shard: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    """The documents of one shard as Ray rows; the id JSON-encoded ('' for none), so
    that ids of any JSON type share one string column."""
    for item in iter_shard(shard):
        if isinstance(item, InputDoc):
            yield {
                "shard": int(shard["index"]),
                "line": item.line,
                "text": item.text,
                "id": "" if item.id is None else json.dumps(item.id, default=str),
            }
