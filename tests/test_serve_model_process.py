"""The served model in a process of its own (``spacy-lisa serve``'s default): the same
replies as the model on the batcher's thread, a child that dies is replaced (the batch
it held fails with E426, the next is served), a model that cannot load is reported
with the child's reason (E427), and the child does not outlive its server."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any, List

import fastapi  # noqa: F401  (make install; missing, the module fails)
import pytest
from serve_testing import metric, post_json, request, start_server, wait_for
from srl_testing import make_texts

from spacy_lisa.formats import OutputFormat
from spacy_lisa.serve.batcher import BatchFailed
from spacy_lisa.serve.model_process import ModelProcess, ModelProcessError
from spacy_lisa.serve.service import SRLService
from spacy_lisa.serve.settings import ServeSettings
from spacy_lisa.serve.tasks import RecordsTask

pytestmark = pytest.mark.slow  # trains a small pipeline, starts model processes

ODD_TEXTS = ["a\u0000b sold it.", "\u202eJohn sold \U0001f600 the car.", "  Mary came.  "]


def process_gone(pid: int) -> bool:
    """No such process, or one that has exited and waits to be reaped: a zombie with no
    thread left (a killed process's first thread turns zombie while its other threads,
    torch's among them, still hold its files)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        threads = len(os.listdir(f"/proc/{pid}/task"))
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z" and threads <= 1


def replies(service: SRLService, texts: List[str]) -> List[Any]:
    """Every kind of reply the service gives for ``texts``."""

    async def run() -> List[Any]:
        out: List[Any] = []
        for fmt in OutputFormat:
            ids = [f"doc-{i}" for i in range(len(texts))]
            out.append((await service.annotate(texts, ids, fmt)).parts)
        out.append(await service.render_html(texts[:5]))
        return out

    service.start()
    try:
        return asyncio.run(run())
    finally:
        service.stop(30)


def test_replies_are_those_of_the_model_in_the_server(srl_model_dir: Path) -> None:
    texts = make_texts(40, seed=5) + ODD_TEXTS
    settings = ServeSettings(batch_size=16)
    here = replies(SRLService.load(str(srl_model_dir), settings), texts)
    service = SRLService.load(str(srl_model_dir), settings, model_process=True)
    assert service.model_process is not None and service.model_process.pid != os.getpid()
    there = replies(service, texts)
    assert there == here
    assert len(there[0]) == len(texts) and "Mary" in there[0][-1]
    assert process_gone(service.model_process.pid or 0) or not service.model_process.alive


def test_a_dead_model_process_is_replaced(
    srl_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = SRLService.load(str(srl_model_dir), ServeSettings(), model_process=True)
    child = service.model_process
    assert child is not None
    service.start()

    async def annotate(text: str) -> Any:
        return await service.annotate([text])

    try:
        # killed while idle: the next request is served by a new one, nothing fails
        first = child.pid
        os.kill(first or 0, signal.SIGKILL)
        wait_for(lambda: not child.alive, what="the child to die")
        reply = asyncio.run(annotate("Mary sold the car."))
        assert '"Mary"' in reply.json_body()
        assert child.restarts == 1 and child.pid not in (None, first)
        assert service.health()["replica"]["model_process"] == {
            "pid": child.pid,
            "restarts": 1,
        }
        # killed while it holds a batch (here: just after the check that it lives): that
        # batch fails with E426, which says it was replaced; the next one is served
        os.kill(child.pid or 0, signal.SIGKILL)
        wait_for(lambda: process_gone(child.pid or 0), what="the child to die")
        with monkeypatch.context() as patch:
            patch.setattr(ModelProcess, "alive", property(lambda self: True))
            with pytest.raises(BatchFailed, match="E426") as failed:
                asyncio.run(annotate("Tom gave Anna flowers."))
        assert "killed by SIGKILL" in str(failed.value)
        assert child.restarts == 2
        assert '"Anna"' in asyncio.run(annotate("Tom gave Anna flowers.")).json_body()
    finally:
        service.stop(30)
    assert not child.alive


def test_a_failing_request_fails_alone_in_the_model_process(srl_model_dir: Path) -> None:
    service = SRLService.load(
        str(srl_model_dir), ServeSettings(max_wait_ms=200), model_process=True
    )
    service.start()

    async def both() -> List[Any]:
        # two ids for three texts: this request's records cannot be written
        bad = service.batcher.submit(["Mary came.", "Tom came.", "It rained."], RecordsTask(
            OutputFormat.jsonl, ("a", "b")
        ))  # fmt: skip
        good = service.annotate(["Mary sold the car."])
        return list(await asyncio.gather(bad, good, return_exceptions=True))

    try:
        bad, good = asyncio.run(both())
    finally:
        service.stop(30)
    # the failure crossed the process boundary with its description
    assert isinstance(bad, BatchFailed) and "IndexError" in str(bad), bad
    assert '"Mary"' in good.json_body()


def test_a_model_that_cannot_load_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ModelProcessError) as err:
        ModelProcess(str(tmp_path / "no-model"))
    # E427 with the reason the child gave: load_model's E317 for a missing path
    assert "E427" in str(err.value) and "E317" in str(err.value)


def test_the_model_process_ends_with_its_server(srl_model_dir: Path) -> None:
    for stop in (signal.SIGTERM, signal.SIGKILL):
        server, url = start_server(srl_model_dir)
        try:
            replica = request(f"{url}/health").json()["replica"]
            child = replica["model_process"]["pid"]
            assert child != replica["pid"] and not process_gone(child)
            if stop == signal.SIGTERM:
                # over HTTP: a killed model process is replaced, the metrics count it
                os.kill(child, signal.SIGKILL)
                wait_for(lambda pid=child: process_gone(pid), what="the child to die")
                reply = post_json(f"{url}/v1/annotate", {"text": "Mary sold the car."})
                assert reply.status == 200, reply.json()["message"]
                assert metric(url, "lisa_serve_model_process_restarts") == 1
                child = request(f"{url}/health").json()["replica"]["model_process"]["pid"]
                assert not process_gone(child)
            server.proc.send_signal(stop)
            assert server.proc.wait(60) == (0 if stop == signal.SIGTERM else -stop)
            # SIGTERM: the server stops it; SIGKILL: it sees its pipe close and exits
            wait_for(
                lambda pid=child: process_gone(pid), timeout=30, what=f"the child after {stop!r}"
            )
        finally:
            server.kill()


def test_a_batch_lost_with_its_model_process_is_answered_503() -> None:
    # what the HTTP layer answers for the BatchFailed the test above gets: retry, at once
    from spacy_lisa.errors import Errors
    from spacy_lisa.serve.app import _failed
    from spacy_lisa.serve.validation import Documents

    lost = BatchFailed(ModelProcessError(Errors.E426.format(how="was killed by SIGKILL")))
    err = _failed(Documents(["Mary came."], None), lost)
    assert err.status == 503 and err.headers == {"Retry-After": "1"}
    assert err.body()["code"] == "E426" and "killed by SIGKILL" in err.message
    # a model that fails on a text is still a 500 (E415)
    assert _failed(Documents(["x"], None), BatchFailed(ValueError("bad"))).status == 500
