"""``spacy-lisa serve --engine ray``: the same app on Ray Serve, started as a user starts
it (its own process, which starts a local Ray cluster) with two replicas of a tiny
``lisa_srl`` pipeline trained here, labelling verbs and auxiliaries only
(``--predicate-pos``). The records must be ``predict``'s with the same option, requests
must reach both replicas, bad input must get its 4xx, and SIGTERM must stop it cleanly."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Iterator, Tuple

import fastapi  # noqa: F401  (make install; missing, the module fails)
import pytest
import ray.serve  # noqa: F401  (make install; missing, the module fails)
from serve_testing import ServerProcess, in_threads, post_json, request
from srl_testing import assert_same_frames, make_texts

from spacy_lisa.predict import predict

pytestmark = pytest.mark.slow

PREDICATE_POS = {"predicate_pos": ["VERB", "AUX"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def ray_server(srl_model_dir: Path) -> Iterator[Tuple[ServerProcess, str]]:
    server = ServerProcess(
        srl_model_dir,
        *("--engine", "ray", "--replicas", "2", "--replica-cpus", "0.5"),
        *("--batch-size", "16", "--max-wait-ms", "20"),
        *("--predicate-pos", "VERB", "--predicate-pos", "AUX"),
        port=str(free_port()),
        env={
            "RAY_ADDRESS": None,  # a local cluster of its own, whatever the shell says
            # Serve restarts a proxy that is not ready in 5 s, and gives up after a few:
            # on a busy 2-core box (the suite's other workers) it needs longer to start.
            "RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S": "60",
        },
    )
    try:
        yield server, server.wait_ready(timeout=400)
    finally:
        server.kill()


def test_ray_serve_replicas_give_predicts_records(
    ray_server: Tuple[ServerProcess, str], srl_model_dir: Path, tmp_path: Path
) -> None:
    server, url = ray_server
    texts = make_texts(50, seed=5)
    path = tmp_path / "docs.txt"
    path.write_text("\n".join(texts) + "\n", encoding="utf8")
    out = tmp_path / "predicted.jsonl"
    predict(str(srl_model_dir), str(path), output=out, srl_options=PREDICATE_POS)
    expected = [json.loads(line) for line in out.read_text(encoding="utf8").splitlines()]

    reply = post_json(f"{url}/v1/annotate", {"texts": texts})
    assert reply.status == 200, reply
    assert_same_frames(reply.json()["records"], expected)

    # concurrent single-document requests, spread over the replicas
    replies = in_threads(
        [lambda t=t: post_json(f"{url}/v1/annotate", {"text": t}) for t in texts[:16]]
    )
    for n, reply in enumerate(replies):
        assert reply.status == 200, reply
        want = [dict(r, line=1) for r in expected if r["line"] == n + 1]
        assert_same_frames(reply.json()["records"], want)

    # Bursts of concurrent requests until both replicas have answered: under load the
    # second replica can join the router seconds after the first, and one request at a
    # time may keep landing on the idle first one.
    pids = set()
    deadline = time.monotonic() + 120
    while len(pids) < 2 and time.monotonic() < deadline:
        for reply in in_threads([lambda: request(f"{url}/health")] * 8):
            health = reply.json()
            assert health["status"] == "ok" and health["labels"]
            # every replica labels the --predicate-pos types
            assert health["model"]["predicate_pos"] == PREDICATE_POS["predicate_pos"]
            pids.add(health["replica"]["pid"])
    assert len(pids) == 2, f"requests reached {len(pids)} replica(s) in 120 s, not 2"

    # each replica checks requests as the single server does
    reply = post_json(f"{url}/v1/annotate", {"texts": ["Mary came.", 7]})
    assert reply.status == 422 and reply.json()["code"] == "E404", reply
    assert request(f"{url}/docs").status == 200
    assert "lisa_serve_docs_total" in request(f"{url}/metrics").body.decode("utf8")

    assert server.terminate(timeout=180) == 0, server.output()[-3000:]
    assert "✔ Stopped" in server.output()
    with pytest.raises(OSError):  # Ray Serve's proxy is gone
        socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=5)


def test_app_builder_for_serve_run(srl_model_dir: Path) -> None:
    """``serve run spacy_lisa.serve.ray_serve:app_builder model=... replicas=...``."""
    from ray.serve.deployment import Application

    from spacy_lisa.serve.ray_serve import app_builder

    args = {"model": str(srl_model_dir), "replicas": "3", "batch_size": "8", "max_wait_ms": "2.5"}
    assert isinstance(app_builder(args), Application)
    assert isinstance(app_builder({**args, "predicate_pos": "VERB,AUX"}), Application)
    with pytest.raises(ValueError, match=r"E042.*'VERBS'"):
        app_builder({**args, "predicate_pos": "VERBS"})
    with pytest.raises(ValueError, match=r"E418.*'bach_size'"):
        app_builder({"model": str(srl_model_dir), "bach_size": "8"})
    with pytest.raises(ValueError, match=r"E418.*--max-queue"):
        app_builder({"model": str(srl_model_dir), "max_texts": "500", "max_queue": "10"})
