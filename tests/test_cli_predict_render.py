"""``spacy-lisa predict`` and ``spacy-lisa render`` through typer's CliRunner, on a tiny
``lisa_srl`` pipeline trained here on hand-made sentences (with a Label Attention
Layer that stores its attention, so ``render`` has a heatmap to draw)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
import spacy
from spacy.language import Language
from srl_testing import TEXT_SENTENCES, TINY_MODEL, assert_same_frames, train_tiny_pipeline
from typer.testing import CliRunner

from spacy_lisa.cli import app
from spacy_lisa.corpus.conll2005 import read_conll2005
from spacy_lisa.formats import doc_to_allennlp, doc_to_conll2005_text, doc_to_jsonl_records

pytestmark = pytest.mark.slow  # trains a small pipeline once per module (worker)

SENTENCES = TEXT_SENTENCES

# the shared tiny model with a Label Attention Layer on top, whose attention is stored
TINY_LAL_MODEL: Dict[str, Any] = {
    **TINY_MODEL,
    "top_layer": {
        "@architectures": "spacy-lisa.LabelAttentionLayer.v1",
        "n_heads": 4,
        "head_width": 8,
        "dropout": 0.0,
    },
}

# two documents, the first with two sentences, and a blank line between them
TEXT_INPUT = "John sold the car to Mary. She said she would come.\n\nTom gave Anna flowers.\n"
TEXTS = ["John sold the car to Mary. She said she would come.", "Tom gave Anna flowers."]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sentencizer + tiny lisa_srl pipeline, overfit on SENTENCES, saved to disk."""
    nlp = train_tiny_pipeline(SENTENCES, TINY_LAL_MODEL, steps=40, store_attention=True)
    path = tmp_path_factory.mktemp("cli_model") / "lisa"
    nlp.to_disk(path)
    return path


@pytest.fixture(scope="module")
def nlp(model_dir: Path) -> Language:
    return spacy.load(model_dir)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def jsonl(text: str) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def expected_jsonl(
    nlp: Language, texts: List[str], lines: List[int], *, tags: bool = False
) -> List[Dict[str, Any]]:
    """The records predict writes: without the per-frame BIO tags unless --tags."""
    records = []
    for text, line in zip(texts, lines, strict=True):
        records.extend(doc_to_jsonl_records(nlp(text), extra={"line": line}, tags=tags))
    return json.loads(json.dumps(records))


# ------------------------------------------------------------------------- predict ------
def test_predict_text_to_jsonl_stdout(
    runner: CliRunner, model_dir: Path, nlp: Language, tmp_path: Path
) -> None:
    path = tmp_path / "docs.txt"
    path.write_text(TEXT_INPUT, encoding="utf8")
    result = runner.invoke(app, ["predict", str(model_dir), str(path)])
    assert result.exit_code == 0, result.output
    records = jsonl(result.stdout)
    # one record per sentence; "line" maps records to input lines (line 2 was blank)
    assert [(r["line"], r["sentence"]) for r in records] == [(1, 0), (1, 1), (3, 0)]
    assert_same_frames(records, expected_jsonl(nlp, TEXTS, [1, 3]))
    assert any(r["frames"] for r in records), "the tiny model should find frames"
    assert "Labelled 2 doc(s), 3 sentence(s)" in result.stderr
    assert "Skipped 1 blank line(s)" in result.stderr
    # the per-frame BIO tags (as serve returns them) only on request: JSON lines alone
    result = runner.invoke(app, ["predict", str(model_dir), str(path), "--tags"])
    assert result.exit_code == 0, result.output
    assert_same_frames(jsonl(result.stdout), expected_jsonl(nlp, TEXTS, [1, 3], tags=True))
    result = runner.invoke(app, ["predict", str(model_dir), str(path), "--tags", "-f", "allennlp"])
    assert result.exit_code == 1 and "E319" in result.stderr


def test_predict_jsonl_input_detection_and_ids(
    runner: CliRunner, model_dir: Path, nlp: Language, tmp_path: Path
) -> None:
    lines = [json.dumps({"text": TEXTS[0], "id": "a"}), json.dumps({"text": TEXTS[1], "id": 7})]
    content = "\n".join(lines) + "\n"
    by_extension = tmp_path / "docs.jsonl"
    by_content = tmp_path / "docs.data"  # no telling extension: sniffed from line 1
    by_extension.write_text(content, encoding="utf8")
    by_content.write_text(content, encoding="utf8")
    outputs = []
    for args, stdin in [
        ([str(by_extension)], None),
        ([str(by_content)], None),
        (["-"], content),
        ([str(by_content), "--input-format", "jsonl"], None),
    ]:
        result = runner.invoke(app, ["predict", str(model_dir), *args], input=stdin)
        assert result.exit_code == 0, result.output
        outputs.append(jsonl(result.stdout))
    assert all(out == outputs[0] for out in outputs)
    assert [(r["line"], r["id"]) for r in outputs[0]] == [(1, "a"), (1, "a"), (2, 7)]
    expected = expected_jsonl(nlp, TEXTS, [1, 2])
    assert_same_frames([{k: v for k, v in r.items() if k != "id"} for r in outputs[0]], expected)
    # forced to text, the JSON lines are documents of their own
    result = runner.invoke(
        app, ["predict", str(model_dir), str(by_content), "--input-format", "text"]
    )
    assert result.exit_code == 0, result.output
    assert jsonl(result.stdout)[0]["tokens"][0] == "{"


def test_predict_stdin_text(runner: CliRunner, model_dir: Path, nlp: Language) -> None:
    result = runner.invoke(app, ["predict", str(model_dir), "-"], input=TEXT_INPUT)
    assert result.exit_code == 0, result.output
    assert_same_frames(jsonl(result.stdout), expected_jsonl(nlp, TEXTS, [1, 3]))


def test_predict_allennlp(
    runner: CliRunner, model_dir: Path, nlp: Language, tmp_path: Path
) -> None:
    path = tmp_path / "docs.txt"
    path.write_text(TEXT_INPUT, encoding="utf8")
    result = runner.invoke(app, ["predict", str(model_dir), str(path), "--format", "allennlp"])
    assert result.exit_code == 0, result.output
    out = jsonl(result.stdout)
    assert out == [s for text in TEXTS for s in doc_to_allennlp(nlp(text))]
    for sentence in out:
        assert set(sentence) == {"verbs", "words"}
        for verb in sentence["verbs"]:
            assert set(verb) == {"verb", "description", "tags"}
            assert len(verb["tags"]) == len(sentence["words"])
            assert f"[V: {verb['verb']}]" in verb["description"]


def test_predict_conll2005_to_file(
    runner: CliRunner, model_dir: Path, nlp: Language, tmp_path: Path
) -> None:
    path = tmp_path / "docs.txt"
    path.write_text(TEXT_INPUT, encoding="utf8")
    out = tmp_path / "out" / "pred.txt"  # the directory is created
    result = runner.invoke(
        app, ["predict", str(model_dir), str(path), "-f", "conll2005", "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    text = out.read_text(encoding="utf8")
    assert text == "".join(doc_to_conll2005_text(nlp(t)) for t in TEXTS)
    assert sorted(p.name for p in out.parent.iterdir()) == ["pred.txt"]  # no temp file left
    # the first column is a words file, the rest a props file the corpus reader reads
    words, props = [], []
    for line in text.splitlines():
        cols = line.split()
        words.append(cols[0] if cols else "")
        props.append(" ".join(cols[1:]))
    (tmp_path / "w").write_text("\n".join(words) + "\n", encoding="utf8")
    (tmp_path / "p").write_text("\n".join(props) + "\n", encoding="utf8")
    records = list(read_conll2005(tmp_path / "w", tmp_path / "p"))
    n_frames = sum(len(nlp(t)._.srl_frames) for t in TEXTS)
    assert len(records) == 3 and sum(len(r.predicates or []) for r in records) == n_frames


def test_predict_invalid_line_fails_before_loading(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text('{"text": "fine"}\n\n{"text": "broken"\n{"txt": "x"}\n', encoding="utf8")
    out = tmp_path / "out.jsonl"
    # the model path does not exist: the input error must come first
    result = runner.invoke(app, ["predict", str(tmp_path / "no-model"), str(path), "-o", str(out)])
    assert result.exit_code == 1
    assert f"{path}:3: invalid JSON" in result.stderr
    assert "1 more invalid line(s): 4" in result.stderr
    assert "--skip-invalid" in result.stderr
    assert not out.exists() and result.stdout == ""


@pytest.mark.parametrize(
    "line, problem",
    [
        ('{"text": 3}', '"text" is int, not a string'),
        ('["a list"]', "expected a JSON object, got list"),
        ('{"id": 1}', 'the object has no "text" field'),
        ("{nope", "invalid JSON"),
    ],
)
def test_predict_reports_each_kind_of_bad_line(
    runner: CliRunner, model_dir: Path, tmp_path: Path, line: str, problem: str
) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text('{"text": "Tom gave Anna flowers."}\n' + line + "\n", encoding="utf8")
    result = runner.invoke(app, ["predict", str(model_dir), str(path)])
    assert result.exit_code == 1
    assert f"{path}:2: {problem}" in result.stderr


def test_predict_skip_invalid(
    runner: CliRunner, model_dir: Path, nlp: Language, tmp_path: Path
) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_bytes(
        b'{"text": "Tom gave Anna flowers."}\n'
        b'{"text": 3}\n'
        b"not json\n"
        b'{"text": "caf\xe9"}\n'  # Latin-1, not UTF-8
        b"\n"
        b'{"text": "Mary bought a book yesterday."}\n'
    )
    result = runner.invoke(app, ["predict", str(model_dir), str(path), "--skip-invalid"])
    assert result.exit_code == 0, result.output
    records = jsonl(result.stdout)
    assert [r["line"] for r in records] == [1, 6]
    assert_same_frames(
        records,
        expected_jsonl(nlp, ["Tom gave Anna flowers.", "Mary bought a book yesterday."], [1, 6]),
    )
    assert "Skipped 3 invalid line(s)" in result.stderr
    for n, what in [(2, '"text" is int'), (3, "invalid JSON"), (4, "not valid UTF-8")]:
        assert f"{path}:{n}: {what}" in result.stderr
    assert "Skipped 1 blank line(s)" in result.stderr
    # without the flag, the same file fails on line 2
    result = runner.invoke(app, ["predict", str(model_dir), str(path)])
    assert result.exit_code == 1 and f"{path}:2:" in result.stderr


def test_predict_missing_input_and_bad_models(
    runner: CliRunner, model_dir: Path, tmp_path: Path
) -> None:
    result = runner.invoke(app, ["predict", str(model_dir), str(tmp_path / "nope.txt")])
    assert result.exit_code == 1 and "E313" in result.stderr
    path = tmp_path / "docs.txt"
    path.write_text("Tom gave Anna flowers.\n", encoding="utf8")
    result = runner.invoke(app, ["predict", str(tmp_path / "no-model"), str(path)])
    assert result.exit_code == 1 and "E317" in result.stderr
    plain = tmp_path / "plain"
    spacy.blank("en").to_disk(plain)
    result = runner.invoke(app, ["predict", str(plain), str(path)])
    assert result.exit_code == 1 and "E314" in result.stderr


def test_predict_gpu_id(model_dir: Path, tmp_path: Path) -> None:
    # in a subprocess: a successful require_gpu would switch this process's thinc ops
    from thinc.util import gpu_is_available

    path = tmp_path / "docs.txt"
    path.write_text("Tom gave Anna flowers.\n", encoding="utf8")
    cmd = [sys.executable, "-m", "spacy_lisa", "predict", str(model_dir), str(path), "-g", "0"]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, encoding="utf8", timeout=300, check=False
    )
    if gpu_is_available():
        assert proc.returncode == 0, proc.stderr
        assert len(jsonl(proc.stdout)) == 1
    else:  # a clear error, not a traceback
        assert proc.returncode == 1 and "E450" in proc.stderr, proc.stderr
        assert "--gpu-id -1" in proc.stderr and "Traceback" not in proc.stderr


def test_predict_batch_sizes_agree(runner: CliRunner, model_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "docs.txt"
    path.write_text("\n".join([s[0] for s in SENTENCES] * 3) + "\n", encoding="utf8")
    outputs = []
    for extra in (["--batch-size", "1"], ["--batch-size", "4"], []):
        result = runner.invoke(app, ["predict", str(model_dir), str(path), *extra])
        assert result.exit_code == 0, result.output
        outputs.append(jsonl(result.stdout))
    assert len(outputs[0]) == 15
    assert_same_frames(outputs[1], outputs[0])
    assert_same_frames(outputs[2], outputs[0])


def test_predict_console_script_with_two_processes(
    runner: CliRunner, model_dir: Path, tmp_path: Path
) -> None:
    # A new interpreter, as a user runs it: the factory and every registered
    # architecture must be found through entry points, stdout must carry nothing but
    # the records, and --n-process 2 must give the single-process output. (Not through
    # CliRunner: this test process has run torch already, and forking a process whose
    # OpenMP threads were used deadlocks the workers; a fresh CLI forks before any.)
    path = tmp_path / "docs.txt"
    path.write_text("\n".join([s[0] for s in SENTENCES] * 3) + "\n", encoding="utf8")
    proc = subprocess.run(
        [sys.executable, "-m", "spacy_lisa", "predict", str(model_dir), str(path), "-n", "2"],
        capture_output=True,
        text=True,
        encoding="utf8",
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},  # the output is UTF-8 regardless
    )
    assert proc.returncode == 0, proc.stderr
    result = runner.invoke(app, ["predict", str(model_dir), str(path)])
    assert jsonl(proc.stdout) == jsonl(result.stdout)
    assert "Labelled 15 doc(s)" in proc.stderr


# -------------------------------------------------------------------------- render ------
def test_render_text_to_file(
    runner: CliRunner, model_dir: Path, nlp: Language, tmp_path: Path
) -> None:
    out = tmp_path / "page.html"
    text = "John sold the car to Mary. She said she would come."
    result = runner.invoke(app, ["render", str(model_dir), text, "--output", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf8")
    assert page.startswith("<!DOCTYPE html>")
    doc = nlp(text)
    assert page.count('class="lisa-row lisa-frame"') == len(doc._.srl_frames) > 0
    assert 'data-parse-source="model"' in page and "source: model" in page
    # the Label Attention Layer's heads, one heatmap row each per sentence
    n_heads = len(doc._.srl_label_attention["heads"])
    assert page.count('class="lisa-row lisa-attention-row"') == 2 * n_heads
    assert "Rendered 1 doc(s)" in result.stderr


def test_render_input_file_limit_and_stdout(
    runner: CliRunner, model_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "docs.txt"
    path.write_text(TEXT_INPUT, encoding="utf8")
    result = runner.invoke(app, ["render", str(model_dir), "--input", str(path), "--minify"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("<!DOCTYPE html>")
    assert result.stdout.count('class="lisa-doc"') == 2
    result = runner.invoke(app, ["render", str(model_dir), "-i", str(path), "--limit", "1"])
    assert result.exit_code == 0, result.output
    assert result.stdout.count('class="lisa-doc"') == 1


def test_render_needs_exactly_one_source(
    runner: CliRunner, model_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "docs.txt"
    path.write_text(TEXT_INPUT, encoding="utf8")
    for args in ([], ["some text", "--input", str(path)]):
        result = runner.invoke(app, ["render", str(model_dir), *args])
        assert result.exit_code == 1 and "E315" in result.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf8")
    result = runner.invoke(app, ["render", str(model_dir), "--input", str(bad)])
    assert result.exit_code == 1 and f"{bad}:1: invalid JSON" in result.stderr
