"""``spacy-lisa serve`` against a real server: the server runs as users run it (its own
process, uvicorn on 127.0.0.1, a free port), with a tiny ``lisa_srl`` pipeline trained
here; requests are plain HTTP. Responses must be ``predict``'s records, bad input a 4xx
that names the problem (and the server keeps serving), a full queue a 503 with
Retry-After, and SIGTERM a drain: in-flight requests finish, new ones get 503."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import fastapi  # noqa: F401  (make install; missing, the module fails)
import pytest
from serve_testing import (
    Reply,
    in_background,
    in_threads,
    metric,
    post_json,
    request,
    samples,
    start_server,
    wait_for,
)
from srl_testing import assert_same_frames, frame_scores_in, make_texts
from typer.testing import CliRunner

from spacy_lisa.cli import app
from spacy_lisa.formats import OutputFormat
from spacy_lisa.predict import predict

pytestmark = pytest.mark.slow  # trains a small pipeline, starts servers

MAX_CHARS = 2000
MAX_TEXTS = 64
# a long document (about 1,600 tokens) that keeps the model busy for a while; the
# servers that get it take LONG_CHARS characters and run torch on one thread (quick on
# a machine shared with other tests)
LONG_CHARS = 8000
LONG_TEXT = " ".join(make_texts(1200, seed=3))[: LONG_CHARS - 10]
LONG_SERVER = ("--max-chars", str(LONG_CHARS), "--torch-threads", "1", "--max-wait-ms", "0")
ODD_TEXTS = [
    "a\u0000b sold it.",  # NUL
    "\u202eJohn sold \U0001f600 the car.",  # right-to-left override, emoji
    "Tom\x07gave\x1b Anna flowers.\u2028Mary came.",  # control characters, a line separator
    "\u05e9\u05dc\u05d5\u05dd John sold the car.",  # Hebrew
    "  Mary bought a book yesterday.  ",  # surrounding spaces are the text's own
]


@pytest.fixture(scope="module")
def server(srl_model_dir: Path) -> Iterator[str]:
    """The module's server; it must still be up, and exit 0 on SIGTERM, at the end."""
    proc, url = start_server(
        srl_model_dir,
        *("--max-chars", str(MAX_CHARS), "--max-texts", str(MAX_TEXTS)),
        *("--batch-size", "16", "--max-wait-ms", "50"),
    )
    try:
        yield url
        assert proc.proc.poll() is None, "the server died:\n" + proc.output()
        assert proc.terminate() == 0, proc.output()
        assert "Traceback" not in proc.output(), proc.output()
    finally:
        proc.kill()


def predicted(srl_model_dir: Path, tmp_path: Path, objs: List[Dict[str, Any]], fmt: str = "jsonl"):
    """``predict``'s records for a JSONL file of ``objs`` (line i+1 holds objs[i])."""
    path = tmp_path / "input.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf8")
    out = tmp_path / f"predicted.{fmt}"
    predict(str(srl_model_dir), str(path), output=out, output_format=OutputFormat(fmt))
    text = out.read_text(encoding="utf8")
    if fmt == "conll2005":
        return text
    # split("\n"), not splitlines(): a record may hold U+2028, which JSON leaves as it is
    return [json.loads(line) for line in text.split("\n") if line]


# ------------------------------------------------------------------ the records ---------
def test_annotate_gives_predicts_records(server: str, srl_model_dir: Path, tmp_path: Path) -> None:
    texts = make_texts(60, seed=1)  # 60 documents, 68 sentences
    ids: List[Any] = [f"doc-{i}" if i % 2 else i for i in range(len(texts))]
    expected = predicted(srl_model_dir, tmp_path, [{"text": t} for t in texts])
    assert len(expected) >= 60 and any(r["frames"] for r in expected)

    reply = post_json(f"{server}/v1/annotate", {"texts": texts})
    assert reply.status == 200, reply
    assert reply.headers["content-type"] == "application/json"
    assert_same_frames(reply.json(), {"records": expected})
    assert frame_scores_in(reply.json())  # the confidence scores reach the client

    # with ids, as predict writes a JSONL input's ids
    pairs = list(zip(texts, ids, strict=True))
    with_ids = predicted(srl_model_dir, tmp_path, [{"text": t, "id": i} for t, i in pairs])
    reply = post_json(f"{server}/v1/annotate", {"texts": texts, "ids": ids})
    assert_same_frames(reply.json()["records"], with_ids)

    # one document per request, all at once: each is predict's record of that text
    replies = in_threads(
        [lambda t=t, i=i: post_json(f"{server}/v1/annotate", {"text": t, "id": i})
         for t, i in pairs[:24]]
    )  # fmt: skip
    for n, (reply, text_id) in enumerate(zip(replies, ids[:24], strict=True)):
        assert reply.status == 200, reply
        mine = [dict(r, line=1) for r in with_ids if r["line"] == n + 1]
        assert_same_frames(reply.json()["records"], mine)
        assert mine[0]["id"] == text_id


def test_concurrent_requests_share_batches(server: str) -> None:
    before_batches = metric(server, "lisa_serve_batch_docs_count")
    before_docs = metric(server, "lisa_serve_batch_docs_sum")
    texts = make_texts(16, seed=2)
    replies = in_threads(
        [lambda t=t: post_json(f"{server}/v1/annotate", {"text": t}) for t in texts]
    )
    assert all(r.status == 200 for r in replies), replies
    batches = metric(server, "lisa_serve_batch_docs_count") - before_batches
    docs = metric(server, "lisa_serve_batch_docs_sum") - before_docs
    assert docs == 16
    # 16 requests at once, a 50 ms window and batches of 16: far fewer batches than
    # requests (one nlp.pipe call each would be 16)
    assert batches <= 8, f"{batches} batches for 16 concurrent requests"


def test_allennlp_and_conll2005_formats(server: str, srl_model_dir: Path, tmp_path: Path) -> None:
    texts = make_texts(12, seed=4)
    objs = [{"text": t} for t in texts]
    reply = post_json(f"{server}/v1/annotate?format=allennlp", {"texts": texts})
    assert reply.status == 200, reply
    assert reply.json()["records"] == predicted(srl_model_dir, tmp_path, objs, "allennlp")
    reply = post_json(f"{server}/v1/annotate?format=conll2005", {"texts": texts})
    assert reply.status == 200 and reply.headers["content-type"].startswith("text/plain")
    assert reply.body.decode("utf8") == predicted(srl_model_dir, tmp_path, objs, "conll2005")


def test_odd_text_is_labelled_as_predict_labels_it(
    server: str, srl_model_dir: Path, tmp_path: Path
) -> None:
    expected = predicted(srl_model_dir, tmp_path, [{"text": t} for t in ODD_TEXTS])
    reply = post_json(f"{server}/v1/annotate", {"texts": ODD_TEXTS})
    assert reply.status == 200, reply
    assert_same_frames(reply.json()["records"], expected)
    assert {r["line"] for r in expected} == {1, 2, 3, 4, 5}
    # the same bytes sent as UTF-8 rather than \u escapes
    raw = json.dumps({"texts": ODD_TEXTS}, ensure_ascii=False).encode("utf8")
    reply = request(f"{server}/v1/annotate", method="POST", body=raw)  # curl -d: no JSON type
    assert reply.status == 200
    assert_same_frames(reply.json()["records"], expected)


# ------------------------------------------------------------------- bad input ----------
BAD_REQUESTS: List[Tuple[str, bytes, str, int, str, str]] = [
    # (name, body, query, status, code, words the message must hold)
    ("invalid JSON", b'{"text": "John sold', "", 400, "E400", "not valid JSON"),
    ("a list body", b'["John sold the car."]', "", 422, "E401", "got a list"),
    ("a string body", b'"John sold the car."', "", 422, "E401", "got a string"),
    ("no text", b'{"id": 3}', "", 422, "E402", 'no "text"'),
    ("empty body", b"", "", 422, "E422", "empty"),
    ("text and texts", b'{"text": "a b", "texts": ["c d"]}', "", 422, "E403", "both"),
    ("ids with text", b'{"text": "a b", "ids": [1]}', "", 422, "E403", '"ids" goes with'),
    ("text a number", b'{"text": 42}', "", 422, "E404", '"text" is a number, not a string'),
    ("text an object", b'{"text": {"a": 1}}', "", 422, "E404", "an object, not a string"),
    ("texts not a list", b'{"texts": "John"}', "", 422, "E404", "not a list of strings"),
    ("a number in texts", b'{"texts": ["ok.", 7]}', "", 422, "E404", "texts[1] is a number"),
    ("no texts", b'{"texts": []}', "", 422, "E404", "empty list"),
    ("empty text", b'{"text": ""}', "", 422, "E405", "empty"),
    ("blank text", b'{"text": " \\n\\t "}', "", 422, "E405", "only whitespace"),
    ("blank in texts", b'{"texts": ["ok.", "  "]}', "", 422, "E405", "texts[1] is empty"),
    ("ids mismatch", b'{"texts": ["a.", "b."], "ids": [1]}', "", 422, "E408", "1 item(s)"),
    ("unknown field", b'{"txt": "John sold it."}', "", 422, "E409", '"txt"'),
    ("lone surrogate", b'{"text": "a \\ud800 b"}', "", 422, "E410", "\\ud800 at character 2"),
    ("unknown format", b'{"text": "a b"}', "?format=xml", 422, "E411", "'xml'"),
    ("too long", json.dumps({"text": "a" * (MAX_CHARS + 1)}).encode(), "", 413, "E406",
     f"{MAX_CHARS + 1} characters"),
    ("too many texts", json.dumps({"texts": ["a."] * (MAX_TEXTS + 1)}).encode(), "", 413,
     "E407", f"{MAX_TEXTS + 1} texts"),
]  # fmt: skip


@pytest.mark.parametrize("name, body, query, status, code, words", BAD_REQUESTS)
def test_bad_input_gets_its_4xx(
    server: str, name: str, body: bytes, query: str, status: int, code: str, words: str
) -> None:
    for endpoint in ("/v1/annotate", "/v1/render"):
        if query and endpoint == "/v1/render":
            continue
        reply = request(
            f"{server}{endpoint}{query}",
            method="POST",
            body=body,
            headers={"Content-Type": "application/json"},
        )
        assert reply.status == status, (name, reply)
        error = reply.json()
        assert error["status"] == status and error["code"] == code, error
        assert error["message"].startswith(f"[{code}] ") and words in error["message"], error
    # and the server keeps serving
    reply = post_json(f"{server}/v1/annotate", {"text": "Tom gave Anna flowers."})
    assert reply.status == 200 and reply.json()["records"][0]["tokens"][0] == "Tom"


def test_oversized_bodies_and_unknown_routes(server: str) -> None:
    # more bytes than --max-texts texts of --max-chars characters can take, with and
    # without a Content-Length: refused before being read into memory
    # (http.client, a keep-alive client: urllib asks the server to close the connection,
    # which would reset it under the body still being sent)
    big = b'{"text": "' + b"a" * (MAX_TEXTS * MAX_CHARS * 7) + b'"}'
    host, port = server.removeprefix("http://").rsplit(":", 1)
    for chunked in (False, True):
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        body = (big[i : i + 65536] for i in range(0, len(big), 65536)) if chunked else big
        conn.request("POST", "/v1/annotate", body=body, encode_chunked=chunked)
        response = conn.getresponse()
        assert response.status == 413, (chunked, response.read()[:300])
        assert json.loads(response.read())["code"] == "E412"
        conn.close()
    reply = request(f"{server}/v2/annotate", method="POST", body=b"{}")
    assert reply.status == 404 and reply.json()["code"] == "E416"
    assert "POST /v1/annotate" in reply.json()["message"]
    reply = request(f"{server}/v1/annotate")
    assert reply.status == 405 and reply.json()["code"] == "E416"
    # nothing answered 500, and the server still serves
    text = request(f"{server}/metrics").body.decode("utf8")
    statuses = {s[1].get("status") for s in samples(text) if s[0] == "lisa_serve_requests_total"}
    assert "500" not in statuses
    assert post_json(f"{server}/v1/annotate", {"text": "Mary came."}).status == 200


# --------------------------------------------------------------- health, metrics -------
def test_health_metrics_and_docs(server: str, srl_model_dir: Path) -> None:
    import spacy

    health = request(f"{server}/health")
    assert health.status == 200
    info = health.json()
    nlp = spacy.load(srl_model_dir)
    assert info["status"] == "ok" and info["model"]["name"] == f"en_{nlp.meta['name']}"
    assert info["model"]["version"] == nlp.meta["version"]
    assert info["labels"] == list(nlp.get_pipe("lisa_srl").labels) and info["labels"]
    assert info["model"]["pipeline"] == nlp.pipe_names
    assert info["settings"]["max_chars"] == MAX_CHARS

    docs, words = metric(server, "lisa_serve_docs_total"), metric(server, "lisa_serve_words_total")
    texts = ["John sold the car to Mary.", "Tom gave Anna flowers. Mary came."]
    reply = post_json(f"{server}/v1/annotate", {"texts": texts})
    n_words = sum(len(r["tokens"]) for r in reply.json()["records"])
    assert metric(server, "lisa_serve_docs_total") == docs + 2
    assert metric(server, "lisa_serve_words_total") == words + n_words
    response = request(f"{server}/metrics")
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    found = samples(response.body.decode("utf8"))
    quantiles = {
        s[1]["quantile"]
        for s in found
        if s[0] == "lisa_serve_request_latency_seconds" and s[1]["endpoint"] == "/v1/annotate"
    }
    assert quantiles == {"0.5", "0.9", "0.99"}
    names = {s[0] for s in found}
    for name in (
        "lisa_serve_requests_total",
        "lisa_serve_batch_docs_bucket",
        "lisa_serve_request_duration_seconds_bucket",
        "lisa_serve_queue_docs",
    ):
        assert name in names, name  # fmt: skip
    ok = [s for s in found if s[0] == "lisa_serve_requests_total" and s[1]["status"] == "200"]
    assert ok and all(s[2] >= 1 for s in ok)

    # the OpenAPI page and its assets come from the server itself
    schema = request(f"{server}/openapi.json").json()
    assert "AnnotateRequest" in json.dumps(schema["paths"]["/v1/annotate"]["post"])
    assert "SentenceRecord" in schema["components"]["schemas"]
    page = request(f"{server}/docs").body.decode("utf8")
    assert "cdn" not in page.lower() and "https://" not in page
    script = page.split('<script src="', 1)[1].split('"', 1)[0]
    assert request(f"{server}{script}").status == 200


def test_demo_page_without_javascript(server: str) -> None:
    import urllib.parse

    reply = request(f"{server}/?text=" + urllib.parse.quote("John sold the car to Mary."))
    assert reply.status == 200
    csp = reply.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "connect-src 'self'" in csp
    page = reply.body.decode("utf8")
    assert 'class="lisa-row lisa-frame"' in page and 'data-state="done"' in page
    reply = request(f"{server}/?text=%20%20")
    assert reply.status == 200 and "E405" in reply.body.decode("utf8")


# -------------------------------------------------------------- queue and drain --------
def busy_with(url: str, n: int) -> None:
    wait_for(lambda: metric(url, "lisa_serve_busy_docs") == n, what=f"{n} docs in a batch")


def annotate_in_background(url: str, texts: List[str]) -> Tuple[threading.Thread, Dict]:
    return in_background(lambda: post_json(f"{url}/v1/annotate", {"texts": texts}))


def test_full_queue_gives_503(srl_model_dir: Path) -> None:
    server, url = start_server(
        srl_model_dir, "--batch-size", "16", "--max-texts", "16", "--max-queue", "16", *LONG_SERVER
    )  # fmt: skip
    try:
        running, a = annotate_in_background(url, [LONG_TEXT] * 16)
        busy_with(url, 16)  # the worker runs A's 16 long documents
        queued, b = annotate_in_background(url, ["Mary came."] * 16)
        wait_for(lambda: metric(url, "lisa_serve_queue_docs") == 16, what="B queued")
        # the queue holds 16 documents: one more is refused, at once
        reply = post_json(f"{url}/v1/annotate", {"text": "Tom gave Anna flowers."})
        assert reply.status == 503, reply
        assert reply.json()["code"] == "E413" and "--max-queue" in reply.json()["message"]
        assert int(reply.headers["retry-after"]) >= 1
        assert metric(url, "lisa_serve_busy_docs") == 16, "A finished too early for the test"
        running.join(300)
        queued.join(300)
        assert a["value"].status == 200 and b["value"].status == 200
        assert len(b["value"].json()["records"]) == 16
        # the queue drained: requests are taken again
        assert post_json(f"{url}/v1/annotate", {"text": "Tom gave Anna flowers."}).status == 200
    finally:
        assert server.terminate() == 0, server.output()


def test_sigterm_drains_in_flight_requests(srl_model_dir: Path) -> None:
    server, url = start_server(srl_model_dir, "--batch-size", "16", *LONG_SERVER)
    try:
        running, a = annotate_in_background(url, [LONG_TEXT] * 16)
        busy_with(url, 16)
        queued, b = annotate_in_background(url, make_texts(5, seed=9))
        wait_for(lambda: metric(url, "lisa_serve_queue_docs") == 5, what="B queued")
        server.proc.send_signal(signal.SIGTERM)
        wait_for(lambda: request(f"{url}/health").status == 503, what="draining")
        assert request(f"{url}/health").json()["status"] == "draining"
        # new requests: 503 with the reason, and the connection is closed
        reply = post_json(f"{url}/v1/annotate", {"text": "Tom gave Anna flowers."})
        assert reply.status == 503 and reply.json()["code"] == "E414", reply
        assert reply.headers.get("connection") == "close" and "retry-after" in reply.headers
        assert server.proc.poll() is None, "stopped before the in-flight requests finished"
        running.join(300)
        queued.join(300)
        # the running and the queued request both finished, with their records
        assert a["value"].status == 200, a["value"]
        assert len({r["line"] for r in a["value"].json()["records"]}) == 16
        assert b["value"].status == 200, b["value"]
        assert [r["line"] for r in b["value"].json()["records"]][-1] == 5
        assert server.proc.wait(60) == 0, server.output()
        assert "the requests in flight finished" in server.output()
        assert "Traceback" not in server.output()
        host, port = url.removeprefix("http://").rsplit(":", 1)
        with pytest.raises(OSError):  # nothing listens any more
            socket.create_connection((host, int(port)), timeout=5)
    finally:
        server.kill()


def test_second_signal_stops_without_waiting(srl_model_dir: Path) -> None:
    server, url = start_server(srl_model_dir, *LONG_SERVER)
    try:
        running, a = annotate_in_background(url, [LONG_TEXT] * 64)
        busy_with(url, 64)
        server.proc.send_signal(signal.SIGTERM)
        wait_for(lambda: request(f"{url}/health").status == 503, what="draining")
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(120) == 0
        running.join(300)
        # it did not wait for the running batch: its request got no records
        reply = a["value"]
        assert not (isinstance(reply, Reply) and reply.status == 200), reply
        assert "second signal" in server.output()
    finally:
        server.kill()


# ------------------------------------------------------------------- the command --------
def test_serve_command_errors(srl_model_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["serve", str(tmp_path / "no-model"), "--port", "0"])
    assert result.exit_code == 1 and "E317" in result.stderr
    result = runner.invoke(app, ["serve", str(srl_model_dir), "--replicas", "2"])
    assert result.exit_code == 1 and "E419" in result.stderr and "--replicas" in result.stderr
    result = runner.invoke(
        app, ["serve", str(srl_model_dir), "--max-texts", "50", "--max-queue", "10"]
    )
    assert result.exit_code == 1 and "E418" in result.stderr
    result = runner.invoke(app, ["serve", str(srl_model_dir), "--engine", "ray", "--gpu-id", "0"])
    assert result.exit_code == 1 and "E425" in result.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = runner.invoke(app, ["serve", str(srl_model_dir), "--port", port])
        assert result.exit_code == 1 and "E420" in result.stderr and port in result.stderr
    from thinc.util import gpu_is_available

    if not gpu_is_available():  # (with a GPU this would start serving)
        result = runner.invoke(app, ["serve", str(srl_model_dir), "--port", "0", "--gpu-id", "0"])
        assert result.exit_code == 1 and "E450" in result.stderr


def test_serve_without_the_extra(srl_model_dir: Path, tmp_path: Path) -> None:
    # FastAPI missing, as without spacy-lisa[serve]: a clear message, the other commands
    # unaffected (a package that fails to import stands in for the missing one)
    shadow = tmp_path / "shadow" / "fastapi"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'fastapi'\", name='fastapi')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(shadow.parent)}
    run = [sys.executable, "-m", "spacy_lisa"]
    proc = subprocess.run(
        [*run, "serve", str(srl_model_dir), "--port", "0"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 1 and "E417" in proc.stderr, proc.stderr
    assert "spacy-lisa[serve]" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run(
        [*run, "--help"], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert proc.returncode == 0 and "serve" in proc.stdout and "predict" in proc.stdout
