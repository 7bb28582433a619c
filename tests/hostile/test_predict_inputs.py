"""``spacy-lisa predict`` and its reader (:mod:`spacy_lisa.input_docs`) on hostile input: a
line past the pipeline's ``nlp.max_length``, JSON nested past the parser's recursion, a
long unpunctuated sentence, UTF-16/UTF-32 and NUL-laden input, pipes, ids JSON cannot
hold. Every input is generated here; one bad line never costs the others, and every line
ends as exactly one record or one counted skip."""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from spacy_lisa import input_source
from spacy_lisa.cli import app
from spacy_lisa.errors import UserError
from spacy_lisa.input_docs import (
    InputDoc,
    InputFormat,
    InputProblem,
    InputSkip,
    InputSource,
    iter_input,
    parse_line,
    scan_input,
    skip_report,
    wide_encoding,
)
from spacy_lisa.predict import open_output

# a line of English without sentence punctuation: one sentence, however long
WORDS = "John sold the car to Mary she said she would come Tom gave Anna flowers".split()
GOOD = "Tom gave Anna flowers."


def unpunctuated(n_tokens: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(n_tokens))


def strict_json(line: str) -> Dict[str, Any]:
    """A JSON line parsed as RFC 8259 reads it (no NaN, no Infinity)."""

    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    return json.loads(line, parse_constant=refuse)


def source_with(tmp_path: Path, name: str, data: bytes) -> InputSource:
    path = tmp_path / name
    path.write_bytes(data)
    return InputSource(path)


def n_lines(data: bytes) -> int:
    """Lines as a text editor counts them in a UTF-8 file."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


# ----------------------------------------------------------- through the command ----
@pytest.mark.slow
def test_a_line_longer_than_max_length_costs_only_itself(
    srl_model_dir: Path, tmp_path: Path
) -> None:
    # nlp.max_length is spaCy's 1,000,000 characters: spaCy raised E088 mid-run before
    long = "word " * 200_001
    path = tmp_path / "docs.txt"
    path.write_text(f"{GOOD}\n{long}\n{GOOD}\n", encoding="utf8")
    out = tmp_path / "out.jsonl"
    runner = CliRunner()
    result = runner.invoke(app, ["predict", str(srl_model_dir), str(path), "-o", str(out)])
    assert result.exit_code == 1 and not out.exists()
    assert "E351" in result.stderr and f"{path}:2:" in result.stderr
    assert "Pass --skip-invalid" in result.stderr
    assert len(result.stderr) < 2_000  # an excerpt of the line, never the line
    args = ["predict", str(srl_model_dir), str(path), "-o", str(out), "--skip-invalid"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    records = [strict_json(line) for line in out.read_text("utf8").splitlines()]
    assert [r["line"] for r in records] == [1, 3]
    assert "too long: 1" in result.stderr and "E351" in result.stderr
    assert "Pass --skip-invalid" not in result.stderr  # the refusal's hint, not a skip's
    assert len(result.stderr) < 2_000


@pytest.mark.slow
def test_hostile_json_lines_are_skipped_and_the_output_stays_json(
    srl_model_dir: Path, tmp_path: Path
) -> None:
    lines = [
        json.dumps({"text": GOOD, "id": "a"}),
        '{"text": "x", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}",  # RecursionError
        '{"text": "x", "id": NaN}',  # was written as a bare NaN
        '{"text": "x", "id": 1e400}',  # parsed as inf
        '{"text": "x", "n": ' + "1" * 5_000 + "}",  # past Python's int digits limit
        json.dumps({"text": "x", "id": "\ud800"}),  # an id no UTF-8 output can hold
        '{"text": "a\x00b"}',  # NUL: no text
        json.dumps({"text": GOOD, "id": 7}),
    ]
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf8", errors="surrogatepass")
    out = tmp_path / "out.jsonl"
    args = ["predict", str(srl_model_dir), str(path), "-o", str(out), "--skip-invalid"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    records = [strict_json(line) for line in out.read_text("utf8").splitlines()]
    assert [(r["line"], r["id"]) for r in records] == [(1, "a"), (8, 7)]
    for counted in ("invalid JSON: 2", 'unusable "id": 3', "not UTF-8: 1"):
        assert counted in result.stderr
    assert "Skipped 6 invalid line(s)" in result.stderr


@pytest.mark.slow
def test_a_long_sentence_gives_output_linear_in_its_length(
    srl_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import spacy_lisa.pipeline.batching as batching

    n_tokens = 3_000
    path = tmp_path / "long.txt"
    path.write_text(unpunctuated(n_tokens) + "\n", encoding="utf8")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["predict", str(srl_model_dir), str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    # its 24 windows ran in 3 calls of 8 (bounded memory): the output of one call on all
    monkeypatch.setattr(batching, "PREDICT_CHUNK_TOKENS", 10**9)
    one_call = tmp_path / "one_call.jsonl"
    args = ["predict", str(srl_model_dir), str(path), "-o", str(one_call)]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert one_call.read_bytes() == out.read_bytes()
    (record,) = [json.loads(line) for line in out.read_text("utf8").splitlines()]
    n_frames = len(record["frames"])
    size = out.stat().st_size
    # per-frame tags over the sentence wrote at least 5 bytes ('"O", ') per token and
    # frame: with the frames found here that is far over the bound below
    assert n_frames * n_tokens * 5 > 2_000 * n_tokens, "too few frames to tell"
    assert size < 2_000 * n_tokens, f"{size:,} bytes for {n_tokens:,} tokens"
    assert all("tags" not in frame for frame in record["frames"])
    assert all(frame["roles"] is not None for frame in record["frames"])


def test_predict_never_writes_over_its_input(tmp_path: Path) -> None:
    path = tmp_path / "docs.txt"
    path.write_text(f"{GOOD}\n", encoding="utf8")
    link = tmp_path / "link.txt"
    link.symlink_to(path)
    for output in (path, link):
        args = ["predict", str(tmp_path / "no-model"), str(path), "-o", str(output)]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 1 and "E037" in result.stderr
    assert path.read_text(encoding="utf8") == f"{GOOD}\n"


# ----------------------------------------------------------------- the reader -------
def test_deep_json_is_one_invalid_line(tmp_path: Path) -> None:
    deep = b'{"text": "x", "a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    data = b'{"text": "one"}\n' + deep + b'\n{"text": "two"}\n'
    source = source_with(tmp_path, "a.jsonl", data)
    summary = scan_input(source, InputFormat.auto, skip_invalid=True)
    assert summary.n_docs == 2 and summary.skipped["invalid_json"] == 1
    assert summary.problems[0].message.startswith(f"[E350] {source.name}:2:")
    with pytest.raises(UserError, match=r"E350.*:2:"):
        scan_input(source, InputFormat.auto, skip_invalid=False)


@pytest.mark.parametrize(
    "encoding, bom",
    [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-32-le", b"\xff\xfe\x00\x00")],
)
def test_utf16_and_utf32_input_is_reported_line_by_line_as_not_utf8(
    tmp_path: Path, encoding: str, bom: bytes
) -> None:
    # three lines: each reported as not UTF-8, none labelled as text, no phantom fourth
    data = bom + "John sold a car.\nMary bought it.\nTom left.\n".encode(encoding)
    source = source_with(tmp_path, "a.txt", data)
    summary = scan_input(source, InputFormat.auto, skip_invalid=True)
    assert summary.n_docs == 0
    assert summary.skipped["not_utf8"] == 3 and sum(summary.skipped.values()) == 3
    assert [p.line for p in summary.problems] == [1, 2, 3]
    assert all("[E353]" in p.message for p in summary.problems)
    # without a final newline the last line still counts once
    source = source_with(tmp_path, "b.txt", bom + "one\ntwo".encode(encoding))
    assert scan_input(source, InputFormat.auto).skipped["not_utf8"] == 2


def test_nul_laden_lines_are_not_text(tmp_path: Path) -> None:
    # UTF-16 without a byte order mark: every line starts or ends with a NUL byte
    data = b"fine\n" + "one\ntwo\n".encode("utf-16-le")
    summary = scan_input(source_with(tmp_path, "a.txt", data), InputFormat.text)
    assert summary.n_docs == 1
    assert all(
        p.reason == "not_utf8" and "NUL byte" in p.message and "[E312]" in p.message
        for p in summary.problems
    )


def test_skip_messages_do_not_tell_to_pass_skip_invalid(tmp_path: Path) -> None:
    source = source_with(tmp_path, "a.txt", b"fine\n\xff\xfe bad\n")
    summary = scan_input(source, InputFormat.text, skip_invalid=True)
    report = "\n".join(skip_report(summary.skipped, summary.problems))
    assert "[E312]" in report and "pass --skip-invalid" not in report.lower()
    with pytest.raises(UserError) as refusal:
        scan_input(source, InputFormat.text, skip_invalid=False)
    assert "Pass --skip-invalid" in str(refusal.value)


@pytest.mark.parametrize(
    "line, problem",
    [
        ('{"text": "a", "id": NaN}', "NaN"),
        ('{"text": "a", "id": -Infinity}', "-inf"),
        ('{"text": "a", "id": [1e999]}', "inf"),
        ('{"text": "a", "id": "\\udc00"}', "surrogate"),
        ('{"text": "a", "id": ' + "[" * 40 + "]" * 40 + "}", "nested more than 32"),
        ('{"text": "a", "id": "' + "x" * 2_000 + '"}', "characters of JSON"),
    ],
)
def test_ids_json_cannot_hold_are_refused(line: str, problem: str) -> None:
    item = parse_line(line.encode(), 3, InputFormat.jsonl, "f")
    assert isinstance(item, InputProblem) and item.reason == "bad_id"
    assert item.message.startswith("[E354] f:3:") and problem in item.message
    assert len(item.message) < 600
    ok = parse_line(b'{"text": "a", "id": {"k": [1, 2.5, null]}}', 4, InputFormat.jsonl, "f")
    assert ok == InputDoc(4, "a", {"k": [1, 2.5, None]})


def test_a_line_past_the_reader_limit_is_skipped_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(input_source, "MAX_LINE_BYTES", 1_000)
    data = b"first\n" + b"y" * 5_000 + b"\nlast\n"
    source = source_with(tmp_path, "a.txt", data)
    items = list(iter_input(source, InputFormat.text))
    assert [type(i) for i in items] == [InputDoc, InputProblem, InputDoc]
    problem = items[1]
    assert isinstance(problem, InputProblem) and problem.reason == "too_long"
    assert "[E352]" in problem.message and "5,000 bytes" in problem.message
    assert len(problem.message) < 600 and items[2] == InputDoc(3, "last")


def test_a_text_past_max_length_is_too_long_with_an_excerpt(tmp_path: Path) -> None:
    item = parse_line(b"z" * 1_000, 5, InputFormat.text, "f", max_length=100)
    assert isinstance(item, InputProblem) and item.reason == "too_long"
    assert "[E351] f:5:" in item.message and len(item.message) < 600
    line = json.dumps({"text": "z" * 1_000}).encode()
    assert parse_line(line, 6, InputFormat.jsonl, "f", max_length=100).reason == "too_long"
    assert parse_line(line, 6, InputFormat.jsonl, "f", max_length=1_000) == InputDoc(6, "z" * 1_000)


def test_pipes_fifos_and_directories(tmp_path: Path) -> None:
    data = b"one\n\ntwo\n"
    # process substitution, <(...): a /dev/fd path to a pipe
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    try:
        source = InputSource(f"/dev/fd/{read_end}")
        summary = scan_input(source, InputFormat.auto)  # a second read: the pipe is spent
        assert (summary.n_docs, summary.blank_lines) == (2, 1)
        docs = [i for i in iter_input(source, summary.format) if isinstance(i, InputDoc)]
        assert [d.text for d in docs] == ["one", "two"]
    finally:
        os.close(read_end)
    # a FIFO, written by another thread
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(data,))
    writer.start()
    source = InputSource(fifo)
    assert scan_input(source, InputFormat.auto).n_docs == 2
    writer.join(timeout=10)
    assert [type(i) for i in iter_input(source, InputFormat.text)] == [
        InputDoc,
        InputSkip,
        InputDoc,
    ]
    with pytest.raises(UserError, match="E316"):
        InputSource(tmp_path)


def test_output_files_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        with open_output(tmp_path / "a.jsonl") as out:
            out.write("{}\n")
        assert (tmp_path / "a.jsonl").stat().st_mode & 0o777 == 0o644
        os.umask(0o077)
        with open_output(tmp_path / "b.jsonl") as out:
            out.write("{}\n")
        assert (tmp_path / "b.jsonl").stat().st_mode & 0o777 == 0o600
        # an existing output keeps its mode, as a file opened for writing does
        (tmp_path / "a.jsonl").chmod(0o640)
        with open_output(tmp_path / "a.jsonl") as out:
            out.write("{}\n")
        assert (tmp_path / "a.jsonl").stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)


# ------------------------------------------------------------ property: one each ----
def json_values(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
        max_leaves=max_leaves,
    )


def json_line() -> st.SearchStrategy[str]:
    """A JSONL line, mostly an object with "text" (and "id"), sometimes anything."""
    record = st.fixed_dictionaries(
        {"text": st.text(max_size=20) | json_values(2)},
        optional={"id": json_values(), "other": json_values()},
    )
    deep = st.integers(0, 3_000).map(lambda n: '{"text": "x", "a": ' + "[" * n + "]" * n + "}")
    dumped = (record | json_values()).map(lambda v: json.dumps(v, allow_nan=True))
    return dumped | deep | st.text(max_size=30).filter(lambda t: "\n" not in t)


def assert_one_item_per_line(source: InputSource, expected: int, **kw: Any) -> None:
    """Every line is exactly one document or one counted skip, in order; a document
    holds text and an id that JSON output can hold."""
    summary = scan_input(source, InputFormat.auto, skip_invalid=True, **kw)
    items: List[Any] = list(iter_input(source, summary.format, **kw))
    assert [item.line for item in items] == list(range(1, expected + 1))
    assert summary.n_docs + sum(summary.skipped.values()) == expected
    assert summary.n_docs == sum(isinstance(i, InputDoc) for i in items)
    for item in items:
        if isinstance(item, InputDoc):
            assert item.text.strip()
            # a NUL byte is no text; JSON may escape one ("\u0000") on purpose
            assert summary.format == InputFormat.jsonl or "\x00" not in item.text
            item.text.encode("utf8")
            json.dumps(item.id, allow_nan=False).encode("utf8")
        else:
            assert item.reason in summary.skipped
            assert len(getattr(item, "message", "")) < 1_000


PROPERTY = settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@PROPERTY
@given(data=st.binary(max_size=300))
def test_random_bytes_end_as_one_record_or_one_skip_per_line(tmp_path: Path, data: bytes) -> None:
    if wide_encoding(data) is not None:  # counted in UTF-16/32 lines (a test above)
        data = b"x" + data
    assert_one_item_per_line(source_with(tmp_path, "in.data", data), n_lines(data))


@PROPERTY
@given(
    lines=st.lists(json_line(), max_size=8),
    max_length=st.none() | st.integers(1, 20),
)
def test_random_json_lines_end_as_one_record_or_one_skip_per_line(
    tmp_path: Path, lines: List[str], max_length: Any
) -> None:
    data = "".join(line + "\n" for line in lines).encode("utf8", "surrogatepass")
    source = source_with(tmp_path, "in.jsonl", data)
    assert_one_item_per_line(source, len(lines), max_length=max_length)


def test_the_property_helpers_see_nan() -> None:
    # the JSON strategy can write NaN, which strict JSON refuses (so the property above
    # exercises the "id" check)
    with pytest.raises(ValueError):
        strict_json(json.dumps({"id": math.nan}))
