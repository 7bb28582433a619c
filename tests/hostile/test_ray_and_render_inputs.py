"""``predict --engine ray``, ``render --input`` and ``serve`` on hostile input: a text past
the pipeline's ``nlp.max_length``, UTF-16/UTF-32 input, lines over the reader's limit, a
Parquet row without text, and per-frame BIO tags only on request. Every input is
generated here. Ray's reader must count every line as ``predict``'s does; a text too long
is skipped and counted, or refused naming its line, and never ends a run with spaCy's
E088."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from srl_testing import assert_same_frames
from typer.testing import CliRunner

from spacy_lisa import input_source
from spacy_lisa.cli import app
from spacy_lisa.input_docs import InputFormat, InputSource, iter_input, parse_row, scan_input

# past spaCy's default nlp.max_length of 1,000,000 characters (1,000,005)
LONG = "word " * 200_001
GOOD = "Tom gave Anna flowers."
TEXTS = [
    "John sold the car to Mary yesterday.",
    "Mary bought a book.",
    GOOD,
    "The company found a house in Paris.",
    "She said Bob saw the old bike.",
    "Anna gave Tom a book.",
    "Our neighbour sold its shares last year.",
]


def read_jsonl(path: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf8").splitlines()]


# ------------------------------------------------- Ray's reader, without a cluster ----
@pytest.mark.parametrize(
    "encoding, bom",
    [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-32-le", b"\xff\xfe\x00\x00")],
)
def test_ray_counts_utf16_and_utf32_lines_as_predict_does(
    tmp_path: Path, encoding: str, bom: bytes
) -> None:
    from spacy_lisa.ray_annotate.shards import plan_shards, scan_shard

    path = tmp_path / "wide.txt"
    path.write_bytes(bom + "John sold a car.\nMary bought it.\nTom left.\n".encode(encoding))
    # three lines, in one shard whatever --shard-lines: none of them is a document; a
    # byte-wise split found four (the last a phantom), the later ones starting with NUL
    (shard,) = plan_shards(path, "auto", 2)
    assert (shard.first_line, shard.n_lines) == (1, 3)
    scan = scan_shard(asdict(shard))
    assert scan["fingerprint"] == shard.fingerprint and scan["docs"] == 0
    skipped = json.loads(scan["skipped"])
    assert skipped == scan_input(InputSource(path), InputFormat.auto).skipped
    assert skipped["not_utf8"] == 3 and sum(skipped.values()) == 3
    problems = json.loads(scan["problems"])
    assert [p["line"] for p in problems] == [1, 2, 3]
    assert all(p["message"].startswith(f"[E353] {path}:") for p in problems)


def test_ray_reads_every_shard_as_predict_reads_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spacy_lisa.ray_annotate.shards import iter_shard, plan_shards, scan_shard

    # a low limit, so that a line over it is small enough for a test
    monkeypatch.setattr(input_source, "MAX_LINE_BYTES", 100)
    path = tmp_path / "odd.txt"
    path.write_bytes(
        b"\xef\xbb\xbfone\n"  # a byte order mark on line 1: removed
        b"\n"  # blank
        + b"x"
        * 300  # over the limit: skipped unread, not a document
        + b"\na\x00b\n"  # NUL: not text
        b"\xffbad\r\n"  # not UTF-8, a CRLF ending
        b"\xef\xbb\xbfthree\n"  # a byte order mark past line 1 is the text's own
        b"two"  # no final newline
    )
    expected = list(iter_input(InputSource(path), InputFormat.text))
    assert len(expected) == 7 and expected[2].reason == "too_long"
    for shard_lines in (1, 2, 3, 100):
        shards = plan_shards(path, "text", shard_lines)
        assert sum(s.n_lines for s in shards) == 7
        got = [item for s in shards for item in iter_shard(asdict(s))]
        assert got == expected, shard_lines
        for shard in shards:  # the validation pass reads the bytes the plan hashed
            assert scan_shard(asdict(shard))["fingerprint"] == shard.fingerprint


def test_parquet_row_message_leaves_the_hint_to_the_refusal() -> None:
    problem = parse_row(None, None, 3, "rows.parquet")
    assert problem.message.startswith('[E342] rows.parquet:3: "text" is null')
    # under --skip-invalid this message is a skip's: it must not tell to pass it
    assert "--skip-invalid" not in problem.message


def test_a_directory_written_with_other_tags_is_refused(tmp_path: Path) -> None:
    from spacy_lisa.ray_annotate import RayAnnotateError
    from spacy_lisa.ray_annotate.output import MANIFEST, prepare_output
    from spacy_lisa.ray_annotate.shards import plan_shards

    source = tmp_path / "docs.txt"
    source.write_text(f"{GOOD}\n", encoding="utf8")
    shards = plan_shards(source, "auto", 10)
    model = {"name": "m", "fingerprint": "f"}
    out = tmp_path / "out"
    out.mkdir()
    prepare_output(out, shards, "jsonl", 10, model, tags=False)
    with pytest.raises(RayAnnotateError, match=r"E323.*'tags': False.*'tags': True"):
        prepare_output(out, shards, "jsonl", 10, model, tags=True)
    # a directory of a run from before --tags holds records with tags
    (out / MANIFEST).write_text(json.dumps({"format": "jsonl", "shard_lines": 10}))
    prepare_output(out, shards, "jsonl", 10, model, tags=True)
    with pytest.raises(RayAnnotateError, match="E323"):
        prepare_output(out, shards, "jsonl", 10, model, tags=False)


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """The actor class sets torch's threads of the process it runs in: here, this one."""
    import torch

    threads = torch.get_num_threads()
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.mark.slow
def test_actor_records_without_tags_unless_asked_and_too_long_not_labelled(
    srl_model_dir: Path, tmp_path: Path, one_torch_thread: None
) -> None:
    # no Ray: the actor class and the shard writer called here, as Ray calls them
    import numpy as np
    import pyarrow.parquet as pq

    from spacy_lisa.formats import doc_to_jsonl_records
    from spacy_lisa.loading import load_pipeline
    from spacy_lisa.ray_annotate.actors import Annotator
    from spacy_lisa.ray_annotate.output import ShardWriter
    from spacy_lisa.ray_annotate.shards import plan_shards, scan_shard

    source = tmp_path / "docs.jsonl"
    objs = [{"text": GOOD}, {"text": LONG, "id": "long"}, {"text": TEXTS[0], "id": 7}]
    source.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf8")
    batch = {
        "shard": np.array([0, 0, 0]),
        "line": np.array([1, 2, 3]),
        "text": np.array([o["text"] for o in objs], dtype=object),
        "id": np.array(["", '"long"', "7"], dtype=object),
    }
    nlp = load_pipeline(str(srl_model_dir), -1)
    (shard,) = plan_shards(source, "auto", 10)
    scan = scan_shard(asdict(shard))
    for tags in (False, True):
        actor = Annotator(str(srl_model_dir), False, None, 1, tags=tags, paths={0: str(source)})
        out = actor(batch)
        assert out["problem"][0] == out["problem"][2] == ""
        assert out["problem"][1].startswith(f"[E351] {source}:2: the document is 1,000,005")
        assert out["records"][1] == "" and out["frames"][1] == 0
        want = [
            *doc_to_jsonl_records(nlp(GOOD), extra={"line": 1}, tags=tags),
            *doc_to_jsonl_records(nlp(TEXTS[0]), extra={"line": 3, "id": 7}, tags=tags),
        ]
        got = [json.loads(line) for i in (0, 2) for line in out["records"][i].splitlines()]
        assert_same_frames(got, json.loads(json.dumps(want)))
        frames = [f for r in got for f in r["frames"]]
        assert frames and all(("tags" in f) == tags for f in frames)
        # the Parquet shard: the tags column only with tags, the long text counted
        writer = ShardWriter(tmp_path, shard, "parquet", scan, tags=tags)
        writer.write(1, out["records"][0], out["frames"][0])
        writer.skip(2, "too_long")
        writer.write(3, out["records"][2], out["frames"][2])
        writer.close({})
        table = pq.read_table(tmp_path / f"{shard.name}.parquet")
        frame_fields = table.schema.field("frames").type.value_type.names
        assert ("tags" in frame_fields) == tags and ("untagged_roles" in frame_fields) == tags
        assert [r["line"] for r in table.to_pylist()] == [r["line"] for r in got]
        assert writer.docs == 2 and writer.skipped["too_long"] == 1


# ------------------------------------------------------------ Ray, on a real cluster ----
@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    """tests/test_ray_annotate.py's local cluster (2 CPUs), or a cluster of the same kind
    for this module when that one is not running (a second ray.init would fail)."""
    import ray

    if ray.is_initialized():
        yield
        return
    try:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
        yield
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_ray_too_long_text_stops_at_its_line_or_is_counted(
    ray_cluster: None, srl_model_dir: Path, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from spacy_lisa.predict import predict
    from spacy_lisa.ray_annotate import RayAnnotateError, annotate_ray

    inputs = tmp_path / "in"
    inputs.mkdir()
    docs = inputs / "docs.jsonl"
    objs: List[Dict[str, Any]] = [{"text": t} for t in TEXTS]
    objs.insert(5, {"text": LONG, "id": "long"})  # line 6: the second shard of 4 lines
    docs.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf8")
    out = tmp_path / "out"
    model = str(srl_model_dir)
    # 1. found by the actor that holds the pipeline: the run stops naming the line (it
    # ended with Ray's retries of spaCy's E088 before); the first shard is kept
    with pytest.raises(RayAnnotateError) as err:
        annotate_ray(model, docs, out, shard_lines=4)
    message = str(err.value)
    assert message.startswith(f"[E351] {docs.resolve()}:6: the document is 1,000,005")
    assert "Pass --skip-invalid" in message and len(message) < 1_000
    assert (out / "docs.jsonl-00000.done").exists()
    assert not (out / "docs.jsonl-00001.jsonl").exists() and not list(out.glob(".*.tmp"))
    # 2. a Parquet row without text, found by the validation pass: refused, with the
    # hint once, before anything more is written
    pq.write_table(pa.table({"text": [GOOD, None, TEXTS[1]]}), inputs / "rows.parquet")
    kept = (out / "docs.jsonl-00000.done").stat().st_mtime_ns
    with pytest.raises(RayAnnotateError) as err:
        annotate_ray(model, inputs, out, shard_lines=4)
    message = str(err.value)
    assert message.startswith("[E342] ") and 'rows.parquet:2: "text" is null' in message
    assert message.count("--skip-invalid") == 1 and "Pass --skip-invalid" in message
    assert (out / "docs.jsonl-00000.done").stat().st_mtime_ns == kept
    # 3. --skip-invalid: both counted, shown without the hint, the rest labelled; the
    # records are predict's, without per-frame tags
    said: List[str] = []
    stats = annotate_ray(model, inputs, out, shard_lines=4, skip_invalid=True, echo=said.append)
    assert (stats["shards_done_before"], stats["shards_written"]) == (1, 2)
    assert stats["docs"] == len(TEXTS) + 2
    assert stats["skipped"]["too_long"] == 1 and stats["skipped"]["bad_object"] == 1
    report = "\n".join(said)
    assert "too long: 1" in report and "[E351]" in report and "[E342]" in report
    assert "--skip-invalid)" in report and "Pass --skip-invalid" not in report
    assert "or pass --skip-invalid" not in report and len(report) < 2_000
    marker = json.loads((out / "docs.jsonl-00001.done").read_text(encoding="utf8"))
    assert marker["skipped"]["too_long"] == 1 and marker["docs"] == 3
    local = tmp_path / "predict.jsonl"
    predict(model, str(docs), output=local, skip_invalid=True, tags=False)
    records = [r for p in sorted(out.glob("docs.jsonl-*.jsonl")) for r in read_jsonl(p)]
    assert records == read_jsonl(local)
    assert any(r["frames"] for r in records)
    assert all("tags" not in f for r in records for f in r["frames"])


# ------------------------------------------------------------------------ render ----
@pytest.mark.slow
def test_render_input_line_past_max_length_is_refused_or_skipped(
    srl_model_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "docs.txt"
    path.write_text(f"{GOOD}\n{LONG}\n{TEXTS[0]}\n", encoding="utf8")
    out = tmp_path / "page.html"
    runner = CliRunner()
    args = ["render", str(srl_model_dir), "--input", str(path), "-o", str(out)]
    result = runner.invoke(app, args)
    # a numbered message and exit status 1, not spaCy's E088 raised through the command
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert f"[E351] {path}:2:" in result.stderr and "Pass --skip-invalid" in result.stderr
    assert len(result.stderr) < 2_000 and not out.exists()
    result = runner.invoke(app, [*args, "--skip-invalid"])
    assert result.exit_code == 0, result.output
    assert "Rendered 2 doc(s)" in result.stderr and "too long: 1" in result.stderr
    assert out.exists() and len(result.stderr) < 2_000


@pytest.mark.slow
def test_render_text_past_max_length_is_refused(srl_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    result = CliRunner().invoke(app, ["render", str(srl_model_dir), LONG, "-o", str(out)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "[E355]" in result.stderr and "1,000,005" in result.stderr
    assert len(result.stderr) < 1_000 and not out.exists()


# ------------------------------------------------------------------------- serve ----
@pytest.mark.slow
def test_serve_text_past_the_pipelines_max_length_is_no_500(srl_model_dir: Path) -> None:
    """A pipeline whose own nlp.max_length is below --max-chars: a text between the two
    is labelled (the server raises the pipeline's limit to --max-chars), a longer one is
    a numbered 413; never spaCy's E088 as a 500."""
    from fastapi.testclient import TestClient

    from spacy_lisa.loading import load_pipeline
    from spacy_lisa.serve.app import create_app
    from spacy_lisa.serve.service import SRLService
    from spacy_lisa.serve.settings import ServeSettings

    nlp = load_pipeline(str(srl_model_dir), -1)
    nlp.max_length = 50
    settings = ServeSettings(max_chars=400, max_texts=4, max_queue=8, torch_threads=1)
    text = " ".join([GOOD] * 10)  # 229 characters
    assert nlp.max_length < len(text) < settings.max_chars
    with TestClient(create_app(SRLService(nlp, settings))) as client:
        for endpoint in ("/v1/annotate", "/v1/render"):
            reply = client.post(endpoint, json={"texts": [GOOD, text]})
            assert reply.status_code == 200, reply.text
            reply = client.post(endpoint, json={"text": text + " " + text})
            assert reply.status_code == 413 and reply.json()["code"] == "E406", reply.text
        page = client.get("/", params={"text": text + " " + text})
        assert page.status_code == 200 and "E406" in page.text
