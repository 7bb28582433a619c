"""``spacy-lisa predict --engine ray`` / :func:`spacy_lisa.annotate_ray` on a real local
Ray cluster (one per pytest run) and, once, on a cluster started with ``ray start --head``
and reached by its address, with a tiny ``lisa_srl`` pipeline trained here.

Faults are injected from here: the run's actor class is swapped (monkeypatch) for a
subclass, defined in a function so that Ray ships it to the workers by value, whose
process exits on a given document, or that waits for a file before labelling."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pyarrow.parquet as pq
import pytest
import ray
from srl_testing import (
    TEXT_SENTENCES,
    TINY_MODEL,
    assert_same_frames,
    frame_scores_in,
    make_texts,
    train_tiny_pipeline,
)
from typer.testing import CliRunner

from spacy_lisa.cli import app
from spacy_lisa.predict import predict
from spacy_lisa.ray_annotate import RayAnnotateError, annotate_ray
from spacy_lisa.ray_annotate import run as ray_run
from spacy_lisa.ray_annotate.actors import Annotator
from spacy_lisa.ray_annotate.output import ShardWriter
from spacy_lisa.ray_annotate.shards import plan_shards, scan_shard

pytestmark = pytest.mark.slow

CRASH_ID = "crash-me"

TRAIN = TEXT_SENTENCES


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sentencizer + tiny lisa_srl pipeline, overfit on TRAIN, saved to disk."""
    nlp = train_tiny_pipeline(TRAIN, TINY_MODEL, steps=30)
    path = tmp_path_factory.mktemp("ray_model") / "lisa"
    nlp.to_disk(path)
    return path


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    """One local Ray cluster (2 CPUs) for the pytest run, always shut down."""
    try:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
        yield
    finally:
        ray.shutdown()


def crashing_annotator(crash_id: str, once: Optional[Path] = None) -> type:
    """An Annotator whose process exits (as a segfault or the OOM killer ends it) on a
    batch with the document id ``crash_id``: every time, or, with ``once``, only while
    that file does not exist (it is created first, so the restarted actor goes on)."""

    class CrashingAnnotator(Annotator):
        def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
            if json.dumps(crash_id) in [str(i) for i in batch["id"]]:
                if once is None or not once.exists():
                    if once is not None:
                        once.touch()
                    os._exit(1)
            return super().__call__(batch)

    return CrashingAnnotator


def waiting_annotator(go: Path) -> type:
    """An Annotator that labels nothing until the file ``go`` exists (2 minutes at most)."""

    class WaitingAnnotator(Annotator):
        def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
            deadline = time.monotonic() + 120
            while not go.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            return super().__call__(batch)

    return WaitingAnnotator


def in_thread(fn: Callable[[], Any]) -> Callable[[float], Any]:
    """Start ``fn`` in a thread; returns a function that waits for its result (or
    exception) at most that many seconds, and fails the test past it."""
    outcome: Dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["result"] = fn()
        except BaseException as err:  # handed to the test's thread
            outcome["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    thread.start()

    def result(seconds: float) -> Any:
        thread.join(seconds)
        assert not thread.is_alive(), f"still running after {seconds} s"
        if "error" in outcome:
            raise outcome["error"]
        return outcome["result"]

    return result


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    """A text file (with blank lines) and a JSONL file (ids of several JSON types), 230
    documents in all, in a directory of their own."""
    root = tmp_path_factory.mktemp("ray_corpus")
    texts = make_texts(230)
    text_lines = []
    for i, text in enumerate(texts[:130]):
        text_lines.append(text)
        if i % 40 == 5:
            text_lines.append("")
    (root / "a.txt").write_text("\n".join(text_lines) + "\n", encoding="utf8")
    jsonl_lines = []
    for i, text in enumerate(texts[130:]):
        obj: Dict[str, Any] = {"text": text}
        if i % 3 == 0:
            obj["id"] = f"doc-{i}"
        elif i % 3 == 1:
            obj["id"] = i
        jsonl_lines.append(json.dumps(obj))
    (root / "b.jsonl").write_text("\n".join(jsonl_lines) + "\n", encoding="utf8")
    return {"dir": root, "text": root / "a.txt", "jsonl": root / "b.jsonl"}


def read_jsonl(path: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf8").splitlines()]


def predicted(model_dir: Path, path: Path, tmp_path: Path) -> List[Dict[str, Any]]:
    """Single-process ``predict``'s JSONL records for ``path``, as the command line
    writes them by default (no per-frame tags: nor does Ray without ``tags``)."""
    out = tmp_path / f"{path.name}.predict.jsonl"
    predict(str(model_dir), str(path), output=out, tags=False)
    return read_jsonl(out)


def shard_records(out_dir: Path, prefix: str, suffix: str = "jsonl") -> List[Dict[str, Any]]:
    """The records of the finished shards of one input, in shard order."""
    records: List[Dict[str, Any]] = []
    for path in sorted(out_dir.glob(f"{prefix}-*.{suffix}")):
        assert path.with_suffix(".done").exists(), f"{path} has no marker"
        if suffix == "jsonl":
            records.extend(read_jsonl(path))
        else:
            records.extend(pq.read_table(path).to_pylist())
    return records


@pytest.fixture(scope="module")
def expected(model_dir: Path, corpus: Dict[str, Path], tmp_path_factory) -> Dict[str, Any]:
    tmp = tmp_path_factory.mktemp("ray_predict")
    return {
        "a.txt": predicted(model_dir, corpus["text"], tmp),
        "b.jsonl": predicted(model_dir, corpus["jsonl"], tmp),
    }


# -------------------------------------------------------------------------------------
def test_ray_equals_predict_with_two_workers(
    ray_session: None, model_dir: Path, corpus: Dict[str, Path], expected, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    stats = annotate_ray(
        str(model_dir), corpus["dir"], out, workers=2, shard_lines=50, batch_size=16
    )
    assert_same_frames(shard_records(out, "a.txt"), expected["a.txt"])
    assert_same_frames(shard_records(out, "b.jsonl"), expected["b.jsonl"])
    n_records = len(expected["a.txt"]) + len(expected["b.jsonl"])
    assert stats["docs"] == 230
    assert stats["records"] == n_records
    assert stats["skipped"]["blank"] == 4
    assert stats["shards"] == stats["shards_written"] == 3 + 2  # 134 + 100 lines by 50
    assert any(r["frames"] for r in expected["a.txt"]), "the tiny model should find frames"
    assert any(isinstance(r.get("id"), int) for r in expected["b.jsonl"])


def test_marked_mode_records_agree_in_one_process_two_processes_and_ray(
    ray_session: None, corpus: Dict[str, Path], tmp_path_factory, tmp_path: Path
) -> None:
    """A predicate-aware lisa_srl (spacy-lisa.PredicateAwareLISA.v1: two model calls per
    batch) writes the same records through predict -n 1, predict -n 2 and Ray on the
    230-document corpus."""
    import copy

    model = copy.deepcopy(TINY_MODEL)
    model["@architectures"] = "spacy-lisa.PredicateAwareLISA.v1"
    model_dir = tmp_path_factory.mktemp("ray_marked") / "lisa"
    train_tiny_pipeline(TRAIN, model, steps=30).to_disk(model_dir)
    one = predicted(model_dir, corpus["text"], tmp_path) + predicted(
        model_dir, corpus["jsonl"], tmp_path
    )
    assert sum(len(r["frames"]) for r in one) > 100, "the tiny model should find frames"
    two = []
    for path in (corpus["text"], corpus["jsonl"]):
        # a fresh interpreter: this test process has used torch's threads, and forking it
        # would deadlock the workers (see test_cli_predict_render)
        proc = subprocess.run(
            [sys.executable, "-m", "spacy_lisa", "predict", str(model_dir), str(path), "-n", "2"],
            capture_output=True,
            text=True,
            encoding="utf8",
            timeout=600,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        two.extend(json.loads(line) for line in proc.stdout.splitlines())
    assert two == one
    out = tmp_path / "out"
    annotate_ray(str(model_dir), corpus["dir"], out, workers=2, shard_lines=50, batch_size=16)
    assert_same_frames(shard_records(out, "a.txt") + shard_records(out, "b.jsonl"), one)
    assert frame_scores_in(one)  # the confidence scores are in Ray's records


def test_parquet_in_and_out(
    ray_session: None, model_dir: Path, corpus: Dict[str, Path], expected, tmp_path: Path
) -> None:
    import pyarrow as pa

    rows = read_jsonl(corpus["jsonl"])
    source = tmp_path / "in" / "docs.parquet"
    source.parent.mkdir()
    ids = [None if "id" not in r else json.dumps(r["id"]) for r in rows]
    table = pa.table({"text": [r["text"] for r in rows], "id": ids})
    pq.write_table(table, source, row_group_size=40)
    out = tmp_path / "out"
    stats = annotate_ray(
        str(model_dir), str(tmp_path / "in" / "*.parquet"), out, output_format="parquet"
    )
    assert stats["docs"] == len(rows)
    got = shard_records(out, "docs.parquet", "parquet")
    # the JSON ids were stored as JSON strings in the input: decode them back
    for record in got:
        raw = record.pop("id")
        if raw is not None:
            record["id"] = json.loads(raw)
    assert_same_frames(got, expected["b.jsonl"])


def test_worker_that_dies_is_restarted(
    ray_session: None,
    model_dir: Path,
    expected,
    corpus: Dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = read_jsonl(corpus["jsonl"])[:60]
    rows[37] = {"text": rows[37]["text"], "id": CRASH_ID}
    source = tmp_path / "crash.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf8")
    want = predicted(model_dir, source, tmp_path)
    crashed = tmp_path / "crashed"
    monkeypatch.setattr(ray_run, "Annotator", crashing_annotator(CRASH_ID, once=crashed))
    stats = annotate_ray(str(model_dir), source, tmp_path / "out", shard_lines=25, batch_size=8)
    assert crashed.exists(), "the actor should have died once"
    assert_same_frames(shard_records(tmp_path / "out", "crash.jsonl"), want)
    assert stats["docs"] == 60 and stats["records"] == len(want)


def test_worker_that_always_dies_stops_the_run(
    ray_session: None, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows: List[Dict[str, Any]] = [{"text": t} for t in make_texts(20, seed=3)]
    rows[14]["id"] = CRASH_ID  # line 15: the second shard
    source = tmp_path / "dies.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf8")
    out = tmp_path / "out"
    monkeypatch.setattr(ray_run, "Annotator", crashing_annotator(CRASH_ID))
    run = in_thread(
        lambda: annotate_ray(
            str(model_dir), source, out, shard_lines=10, max_restarts=1, max_task_retries=1
        )
    )
    # Ray gives up after one restart: an error naming the shards left, not a hang
    with pytest.raises(RayAnnotateError, match="E326") as err:
        run(300)
    assert "dies.jsonl-00001" in str(err.value) and "ActorDiedError" in str(err.value)
    assert not (out / "dies.jsonl-00001.done").exists()
    with pytest.raises(RayAnnotateError, match="E348"):  # -1 (no limit) is refused
        annotate_ray(str(model_dir), source, out, shard_lines=10, max_restarts=-1)
    # the cause gone, the same command finishes the run: nothing lost
    monkeypatch.undo()
    stats = annotate_ray(str(model_dir), source, out, shard_lines=10)
    assert stats["docs"] == 20 and stats["shards"] == 2
    assert_same_frames(shard_records(out, "dies.jsonl"), predicted(model_dir, source, tmp_path))


def test_rerun_writes_only_missing_shards(
    ray_session: None, model_dir: Path, corpus: Dict[str, Path], expected, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    first = annotate_ray(str(model_dir), corpus["text"], out, shard_lines=50)
    assert first["shards_written"] == 3
    shards = sorted(out.glob("a.txt-*.jsonl"))
    # interrupted: shard 1 half-written (renamed but no marker), shard 2 still a temp file
    half = shards[1]
    half.with_suffix(".done").unlink()
    half.write_text(half.read_text(encoding="utf8").splitlines()[0] + "\n", encoding="utf8")
    shards[2].with_suffix(".done").unlink()
    shards[2].rename(out / ".a.txt-00002.1234abcd.tmp")
    kept = shards[0].stat().st_mtime_ns, shards[0].with_suffix(".done").stat().st_mtime_ns
    second = annotate_ray(str(model_dir), corpus["text"], out, shard_lines=50)
    assert second["shards_written"] == 2 and second["shards_done_before"] == 1
    assert (shards[0].stat().st_mtime_ns, shards[0].with_suffix(".done").stat().st_mtime_ns) == kept
    assert_same_frames(shard_records(out, "a.txt"), expected["a.txt"])
    assert not list(out.glob(".*"))  # no temporary file survives
    # every count covers the whole input, whichever run did the shard
    for key in ("docs", "records", "frames", "skipped"):
        assert second[key] == first[key]
    third = annotate_ray(str(model_dir), corpus["text"], out, shard_lines=50)
    assert third["shards_written"] == 0 and third["docs"] == first["docs"]
    # cutting the input differently into the same directory is refused
    with pytest.raises(RayAnnotateError, match="same options"):
        annotate_ray(str(model_dir), corpus["text"], out, shard_lines=20)


def test_rerun_redoes_changed_input_and_refuses_other_inputs_or_models(
    ray_session: None, model_dir: Path, tmp_path: Path
) -> None:
    source = tmp_path / "in" / "docs.txt"
    source.parent.mkdir()
    lines = make_texts(60, seed=5)
    source.write_text("\n".join(lines) + "\n", encoding="utf8")
    out = tmp_path / "out"

    def run(**options: Any) -> Dict[str, Any]:
        return annotate_ray(str(model_dir), source, out, shard_lines=25, **options)

    def mtimes() -> Dict[str, int]:
        # the lock file left out: taking the lock rewrites it
        return {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.suffix != ".lock"}

    assert run()["shards_written"] == 3  # lines 1-25, 26-50, 51-60
    marker = json.loads((out / "docs.txt-00001.done").read_text(encoding="utf8"))
    assert marker["source"]["path"] == str(source.resolve())
    assert (marker["source"]["first_line"], marker["source"]["n_lines"]) == (26, 25)
    assert marker["source"]["format"] == "text" and marker["source"]["fingerprint"]
    assert marker["model"]["fingerprint"].startswith("directory:")
    # a line added at the end: the last shard is redone, the others kept
    before = mtimes()
    source.write_text("\n".join(lines + ["Tom gave Anna flowers."]) + "\n", encoding="utf8")
    stats = run()
    assert (stats["shards_written"], stats["shards_done_before"], stats["docs"]) == (1, 2, 61)
    after = mtimes()
    assert all(
        after[f"docs.txt-0000{i}.{ext}"] == before[f"docs.txt-0000{i}.{ext}"]
        for i in (0, 1)
        for ext in ("jsonl", "done")
    )
    # a line changed in the middle (the file keeps its size): that shard is redone
    lines[30] = lines[30].replace(".", "!")
    source.write_text("\n".join(lines + ["Tom gave Anna flowers."]) + "\n", encoding="utf8")
    assert run()["shards_written"] == 1
    assert_same_frames(shard_records(out, "docs.txt"), predicted(model_dir, source, tmp_path))
    # another corpus with the same file name, another model: refused, nothing touched
    other = tmp_path / "other" / "docs.txt"
    other.parent.mkdir()
    other.write_text("Mary bought a book.\n", encoding="utf8")
    before = mtimes()
    with pytest.raises(RayAnnotateError, match="E320") as err:
        annotate_ray(str(model_dir), other, out, shard_lines=25)
    assert "docs.txt-00000" in str(err.value) and str(source.resolve()) in str(err.value)
    retrained = tmp_path / "retrained"
    shutil.copytree(model_dir, retrained)
    meta = json.loads((retrained / "meta.json").read_text(encoding="utf8"))
    (retrained / "meta.json").write_text(json.dumps({**meta, "version": "9.9.9"}))
    cli = ["predict", str(retrained), str(source), "-o", str(out), "--engine", "ray"]
    cli += ["--shard-lines", "25"]
    result = CliRunner().invoke(app, cli)
    assert result.exit_code == 1 and "E321" in result.stderr and "docs.txt-0000" in result.stderr
    assert mtimes() == before
    # --overwrite labels them again with that model
    result = CliRunner().invoke(app, [*cli, "--overwrite"])
    assert result.exit_code == 0, result.stderr
    assert "3 shard(s) written" in result.stderr and "Labelled 61 doc(s)" in result.stderr
    marker = json.loads((out / "docs.txt-00000.done").read_text(encoding="utf8"))
    assert marker["model"]["name"] == str(retrained.resolve())


def test_predicate_pos_reaches_the_actors_and_the_rerun_check(
    ray_session: None, tmp_path: Path
) -> None:
    """``--predicate-pos`` on the saved-pipeline fixture (whose tiny model tags every
    predicate it finds as a verb): the actors keep only the types given, the manifest
    records them, and a re-run with others is refused as one of other options."""
    model = Path(__file__).parent / "fixtures" / "saved_pipeline" / "pipeline"
    source = tmp_path / "docs.txt"
    source.write_text("John sold the car to Mary.\nTom gave Anna flowers.\n", encoding="utf8")
    out = tmp_path / "out"
    cli = ["predict", str(model), str(source), "-o", str(out), "--engine", "ray"]
    result = CliRunner().invoke(app, [*cli, "--predicate-pos", "NOUN", "--predicate-pos", "ADJ"])
    assert result.exit_code == 0, result.stderr
    records = shard_records(out, "docs.txt")
    assert len(records) == 2 and all(r["frames"] == [] for r in records)
    manifest = json.loads((out / "_spacy_lisa_ray.json").read_text(encoding="utf8"))
    assert manifest["srl_options"] == {"predicate_pos": ["NOUN", "ADJ"]}
    # the pipeline's own types: refused before Ray starts, then labelled with --overwrite
    result = CliRunner().invoke(app, cli)
    assert result.exit_code == 1 and "E323" in result.stderr
    result = CliRunner().invoke(app, [*cli, "--predicate-pos", "VERB", "--overwrite"])
    assert result.exit_code == 0, result.stderr
    assert [len(r["frames"]) for r in shard_records(out, "docs.txt")] == [1, 1]


def test_second_run_into_the_same_directory_is_refused(
    ray_session: None,
    model_dir: Path,
    corpus: Dict[str, Path],
    expected,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    go = tmp_path / "go"
    out = tmp_path / "out"
    monkeypatch.setattr(ray_run, "Annotator", waiting_annotator(go))
    first = in_thread(lambda: annotate_ray(str(model_dir), corpus["text"], out, shard_lines=50))
    try:
        deadline = time.monotonic() + 60
        while not (out / "_spacy_lisa_ray.json").exists():  # the first run holds the lock
            assert time.monotonic() < deadline, "the first run did not start"
            time.sleep(0.1)
        started = time.monotonic()
        with pytest.raises(RayAnnotateError, match="E322"):
            annotate_ray(str(model_dir), corpus["text"], out, shard_lines=50)
        assert time.monotonic() - started < 10, "refused at once, not after waiting"
    finally:
        go.touch()
    assert first(300)["docs"] == 130
    assert_same_frames(shard_records(out, "a.txt"), expected["a.txt"])  # the first run undisturbed


def test_empty_text_is_counted_alike_on_every_path(
    ray_session: None, model_dir: Path, tmp_path: Path
) -> None:
    import pyarrow as pa

    texts = make_texts(12, seed=7)
    texts[2], texts[5], texts[9] = "", "   ", ""
    inputs = tmp_path / "in"
    inputs.mkdir()
    # JSONL: empty texts and a blank line (last, so that lines are also Parquet's rows)
    jsonl_lines = [json.dumps({"text": t}) for t in texts] + [""]
    (inputs / "docs.jsonl").write_text("\n".join(jsonl_lines) + "\n", encoding="utf8")
    pq.write_table(pa.table({"text": texts}), inputs / "docs.parquet", row_group_size=5)
    # text: one document a line, so an empty text is a blank line
    (inputs / "docs.txt").write_text("\n".join(texts) + "\n", encoding="utf8")
    local = {}
    for name in ("docs.jsonl", "docs.txt"):
        out = tmp_path / f"{name}.predict.jsonl"
        local[name] = predict(str(model_dir), str(inputs / name), output=out, tags=False)
        local[name]["records"] = read_jsonl(out)
    none = {"not_utf8": 0, "invalid_json": 0, "bad_object": 0, "bad_id": 0, "too_long": 0}
    assert local["docs.jsonl"]["skipped"] == {"blank": 1, "empty_text": 3, **none}
    assert local["docs.txt"]["skipped"] == {"blank": 3, "empty_text": 0, **none}
    assert local["docs.jsonl"]["docs"] == local["docs.txt"]["docs"] == 9
    out = tmp_path / "out"
    stats = annotate_ray(str(model_dir), inputs, out, shard_lines=100)
    assert stats["docs"] == 27
    assert stats["skipped"] == {"blank": 4, "empty_text": 6, **none}

    def ray_counts(prefix: str) -> Dict[str, int]:
        counts: Dict[str, int] = {}
        for marker in sorted(out.glob(f"{prefix}-*.done")):
            for reason, n in json.loads(marker.read_text(encoding="utf8"))["skipped"].items():
                counts[reason] = counts.get(reason, 0) + n
        return counts

    assert ray_counts("docs.jsonl") == local["docs.jsonl"]["skipped"]
    assert ray_counts("docs.txt") == local["docs.txt"]["skipped"]
    assert ray_counts("docs.parquet") == {"blank": 0, "empty_text": 3, **none}
    assert_same_frames(shard_records(out, "docs.jsonl"), local["docs.jsonl"]["records"])
    assert_same_frames(shard_records(out, "docs.txt"), local["docs.txt"]["records"])
    assert_same_frames(shard_records(out, "docs.parquet", "jsonl"), local["docs.jsonl"]["records"])


def test_shard_check_wants_the_exact_lines_in_order(tmp_path: Path) -> None:
    # no Ray: the writer's check on its own, against the validation pass of a real file
    source = tmp_path / "five.txt"
    source.write_text("a\nb\n\nc\nd\n", encoding="utf8")  # documents on lines 1, 2, 4, 5
    (shard,) = plan_shards(source, "auto", 10)
    scan = scan_shard(asdict(shard))
    assert scan["docs"] == 4

    def writer() -> ShardWriter:
        return ShardWriter(tmp_path, shard, "jsonl", scan)

    duplicate = writer()
    duplicate.write(1, "{}\n", 0)
    with pytest.raises(RayAnnotateError, match=r"E325.*line 1 came after that of line 1"):
        duplicate.write(1, "{}\n", 0)  # an adjacent duplicate
    wrong_lines = writer()
    for line in (1, 2, 3, 5):  # four documents, but line 3 is blank and line 4 missing
        wrong_lines.write(line, "{}\n", 0)
    with pytest.raises(RayAnnotateError, match=r"E325.*not those of the shard's lines"):
        wrong_lines.close({})
    right = writer()
    for line in (1, 2, 4, 5):
        right.write(line, "", 0)  # a document with no record is still a document
    right.close({})
    assert json.loads((tmp_path / "five.txt-00000.done").read_text())["docs"] == 4
    assert not list(tmp_path.glob(".*.tmp"))


def test_invalid_line_stops_or_is_counted(
    ray_session: None, model_dir: Path, tmp_path: Path
) -> None:
    source = tmp_path / "bad.jsonl"
    lines = [json.dumps({"text": t}) for t in make_texts(30)]
    lines[12] = '{"text": "unclosed'
    lines[20] = json.dumps({"txt": "no text"})
    source.write_text("\n".join(lines) + "\n", encoding="utf8")
    out = tmp_path / "out"
    with pytest.raises(RayAnnotateError, match=r"bad\.jsonl:13: invalid JSON") as err:
        annotate_ray(str(model_dir), source, out, shard_lines=10)
    assert "1 more invalid line" in str(err.value)
    assert not list(out.glob("*.jsonl")), "nothing is written when a line is invalid"
    stats = annotate_ray(str(model_dir), source, out, shard_lines=10, skip_invalid=True)
    assert stats["docs"] == 28
    assert stats["skipped"]["invalid_json"] == 1 and stats["skipped"]["bad_object"] == 1
    assert sorted({r["line"] for r in shard_records(out, "bad.jsonl")}) == [
        n for n in range(1, 31) if n not in (13, 21)
    ]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def ray_head(tmp_path: Path) -> Iterator[str]:
    """A cluster started as a user would, ``ray start --head``, in a process of its own
    and process group (``--block``), stopped by signalling that group: its processes and
    only them (``ray stop`` would stop every Ray process of this user on the machine,
    the pytest run's cluster and other people's runs included)."""
    port = _free_port()
    ray_cli = Path(sys.executable).with_name("ray")
    # a temp dir of its own: the cluster's address file must not outlive it in /tmp/ray,
    # where a later ray.init() would take it for a running cluster (short: socket paths)
    temp_dir = tempfile.mkdtemp(prefix="rayhead")
    log = open(tmp_path / "ray_head.log", "w")  # noqa: SIM115 (closed in the finally)
    head = subprocess.Popen(
        [
            str(ray_cli),
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--node-ip-address=127.0.0.1",
            "--num-cpus=1",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={temp_dir}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        # Ray 2.60 turns token authentication on for `ray start`; on a box whose node IP
        # is not the loopback (Ray then dials the node IP for "127.0.0.1"), the CLI was
        # refused with InvalidAuthToken. A private test cluster needs no token.
        env={**os.environ, "RAY_AUTH_MODE": "disabled"},
    )
    try:
        yield f"127.0.0.1:{port}"
    finally:
        # SIGTERM to the cluster's own process group (what `ray stop` sends each Ray
        # process), then SIGKILL to whatever of that group is left
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(head.pid, sig)
                head.wait(timeout=5)
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
            time.sleep(1)  # let the other processes of the group go too
        head.wait()
        log.close()
        shutil.rmtree(temp_dir, ignore_errors=True)


def test_cli_on_a_cluster_by_address(
    ray_head: str, model_dir: Path, corpus: Dict[str, Path], expected, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "spacy_lisa", "predict", str(model_dir), str(corpus["jsonl"])]
    cmd += ["-o", str(out), "--engine", "ray", "--address", ray_head, "--workers", "1"]
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}  # as the head (see ray_head)
    deadline = time.monotonic() + 120
    while True:  # the head may still be starting: the CLI then cannot connect yet
        result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        if result.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert result.returncode == 0, result.stderr[-3000:]
    assert_same_frames(shard_records(out, "b.jsonl"), expected["b.jsonl"])
    assert "Labelled 100 doc(s)" in result.stderr


def test_actors_asking_for_gpus_the_cluster_lacks_are_refused(
    ray_session: None, model_dir: Path, corpus: Dict[str, Path], tmp_path: Path
) -> None:
    """The test cluster has no GPU: actors asking for one would wait forever, so the run
    stops at once with E349 (on a cluster reached by address as on a local one)."""
    start = time.perf_counter()
    with pytest.raises(RayAnnotateError, match=r"E349.*0 GPU"):
        annotate_ray(str(model_dir), corpus["text"], tmp_path / "out", workers=1, worker_gpus=1)
    assert time.perf_counter() - start < 120
