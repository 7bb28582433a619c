"""Input reading (:mod:`spacy_lisa.input_docs`) and output writing of ``spacy-lisa
predict``/``render`` (no model)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from spacy_lisa.errors import UserError
from spacy_lisa.input_docs import (
    InputDoc,
    InputFormat,
    InputProblem,
    InputSkip,
    InputSource,
    detect_format,
    input_error,
    iter_docs,
    parse_line,
    parse_row,
    scan_input,
    skip_report,
)
from spacy_lisa.predict import open_output


def source_with(tmp_path: Path, name: str, data: bytes) -> InputSource:
    path = tmp_path / name
    path.write_bytes(data)
    return InputSource(path)


def test_lines_drop_line_endings_and_the_bom(tmp_path: Path) -> None:
    source = source_with(tmp_path, "a.txt", b"\xef\xbb\xbfone\r\ntwo\n\nthree")
    assert list(source.lines()) == [b"one", b"two", b"", b"three"]
    summary = scan_input(source, InputFormat.auto)
    assert (summary.format, summary.n_docs, summary.blank_lines) == (InputFormat.text, 3, 1)
    assert list(iter_docs(source, summary.format)) == [
        InputDoc(1, "one"),
        InputDoc(2, "two"),
        InputDoc(4, "three"),
    ]


@pytest.mark.parametrize(
    "name, data, expected",
    [
        ("a.jsonl", b"plain text\n", InputFormat.jsonl),  # the extension wins
        ("a.NDJSON", b"x\n", InputFormat.jsonl),
        ("a.txt", b'{"text": "a"}\n', InputFormat.text),
        ("a.data", b'\n  {"text": "a"}\n', InputFormat.jsonl),  # first non-blank line
        ("a.data", b'{"text": broken\n', InputFormat.jsonl),  # fails on its line, later
        ("a.data", b"Just text {with braces}\n", InputFormat.text),
        ("a.data", b"", InputFormat.text),
    ],
)
def test_detect_format(tmp_path: Path, name: str, data: bytes, expected: InputFormat) -> None:
    source = source_with(tmp_path, name, data)
    assert detect_format(source, InputFormat.auto) == expected
    assert detect_format(source, InputFormat.text) == InputFormat.text


def test_parse_line() -> None:
    assert parse_line(b"   ", 1, InputFormat.jsonl, "f") == InputSkip(1, "blank")
    assert parse_line(b"  a text ", 2, InputFormat.text, "f") == InputDoc(2, "  a text ")
    doc = parse_line(b'{"text": "t", "id": [1]}', 3, InputFormat.jsonl, "f")
    assert doc == InputDoc(3, "t", [1])
    problem = parse_line(b"\xff", 4, InputFormat.text, "f")
    assert isinstance(problem, InputProblem) and problem.message.startswith("[E312] f:4:")
    assert problem.reason == "not_utf8"
    problem = parse_line(b'{"text": null}', 5, InputFormat.jsonl, "f")
    assert isinstance(problem, InputProblem) and '"text" is NoneType' in problem.message
    assert problem.reason == "bad_object"
    problem = parse_line(b"{x", 5, InputFormat.jsonl, "f")
    assert isinstance(problem, InputProblem) and problem.reason == "invalid_json"
    # JSON can carry a lone surrogate, which is not text (no UTF-8 output can hold it)
    problem = parse_line(b'{"text": "a\\ud800b"}', 6, InputFormat.jsonl, "f")
    assert isinstance(problem, InputProblem) and problem.reason == "bad_object"
    assert "unpaired UTF-16 surrogate (\\ud800 at character 1)" in problem.message
    pair = parse_line(b'{"text": "a\\ud83d\\ude00"}', 7, InputFormat.jsonl, "f")
    assert pair == InputDoc(7, "a\U0001f600")  # a surrogate pair is one character


def test_empty_text_is_one_rule_for_jsonl_and_table_rows() -> None:
    # an empty or white-space "text" is no document (the model could give it no
    # record): skipped and counted as empty_text, a JSONL line and a Parquet row alike
    for text in ("", " \t "):
        line = json.dumps({"text": text, "id": 1}).encode()
        assert parse_line(line, 6, InputFormat.jsonl, "f") == InputSkip(6, "empty_text")
        assert parse_row(text, 1, 6, "f") == InputSkip(6, "empty_text")
    assert parse_row("a text", "x", 7, "f") == InputDoc(7, "a text", "x")
    problem = parse_row(None, None, 8, "t.parquet")
    assert isinstance(problem, InputProblem) and problem.message.startswith("[E342]")
    assert "t.parquet:8" in problem.message and problem.reason == "bad_object"


def test_skips_are_counted_and_reported_by_reason(tmp_path: Path) -> None:
    data = b'{"text": "a"}\n\n{"text": ""}\n{"text": 1}\n{"text": "  "}\n'
    summary = scan_input(source_with(tmp_path, "a.jsonl", data), InputFormat.auto)
    assert summary.n_docs == 1
    assert summary.skipped == {
        "blank": 1,
        "empty_text": 2,
        "not_utf8": 0,
        "invalid_json": 0,
        "bad_object": 1,
        "bad_id": 0,
        "too_long": 0,
    }
    report = skip_report(summary.skipped, summary.problems)
    assert report[:3] == [
        "ℹ Skipped 1 blank line(s)",
        "ℹ Skipped 2 document(s) with empty text",
        '⚠ Skipped 1 invalid line(s) (--skip-invalid): no string "text": 1',
    ]
    assert report[3].startswith("  [E311]")


def test_input_error_names_the_first_line_and_counts_the_rest(tmp_path: Path) -> None:
    lines = b"".join(b"{bad\n" for _ in range(8))
    summary = scan_input(source_with(tmp_path, "a.jsonl", lines), InputFormat.auto)
    message = input_error(summary)
    assert message.splitlines()[0].startswith("[E310]")
    assert f"{tmp_path / 'a.jsonl'}:1: invalid JSON" in message
    assert "7 more invalid line(s): 2, 3, 4, 5, 6, ..." in message


def test_missing_input_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="E313"):
        InputSource(tmp_path / "missing.txt")


def test_stdin_is_read_once_and_replayed(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b'{"text": "a"}\n{"text": "b"}\n'), encoding="utf8")
    monkeypatch.setattr(sys, "stdin", stdin)
    source = InputSource("-")
    assert source.name == "<stdin>"
    summary = scan_input(source, InputFormat.auto)
    assert (summary.format, summary.n_docs) == (InputFormat.jsonl, 2)
    assert [d.text for d in iter_docs(source, summary.format)] == ["a", "b"]


def test_output_file_appears_only_on_success(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.jsonl"
    with open_output(target) as out:
        out.write("ünïcode\n")
        assert not target.exists()  # written next to it, moved into place at the end
    assert target.read_text(encoding="utf8") == "ünïcode\n"
    with pytest.raises(RuntimeError), open_output(target) as out:
        out.write("half")
        raise RuntimeError("model failed")
    assert target.read_text(encoding="utf8") == "ünïcode\n"  # the old output is intact
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.jsonl"]


def test_output_to_an_unwritable_place(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UserError, match="E318"), open_output(blocker / "out.jsonl"):
        pass


def test_stdout_output_is_utf8(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="ascii"))
    with open_output(None) as out:
        out.write("café\n")
    assert raw.getvalue() == "café\n".encode()
    sys.stdout.write("still usable\n")  # stdout was detached from, not closed
    sys.stdout.flush()
    assert raw.getvalue().endswith(b"still usable\n")
