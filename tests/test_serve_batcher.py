"""The micro-batcher of ``spacy-lisa serve`` on its own (no model, no HTTP): requests
that come together share a batch, a lone client is not kept waiting, a full queue is
refused, and a document the model fails on fails only its own request."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, List

import pytest

from spacy_lisa.serve.batcher import BatchFailed, MicroBatcher, QueueFull


class Recorder:
    """A stand-in for nlp.pipe: upper-cases texts and records each batch's size."""

    def __init__(self, delay: float = 0.0, gate: threading.Event | None = None) -> None:
        self.batches: List[int] = []
        self.delay = delay
        self.gate = gate

    def __call__(self, texts: List[str]) -> List[str]:
        if self.gate is not None:
            self.gate.wait(30)
        if any(t == "boom" for t in texts):
            raise ValueError("the model failed on 'boom'")
        self.batches.append(len(texts))
        time.sleep(self.delay)
        return [t.upper() for t in texts]


def started(process: Any, **options: Any) -> MicroBatcher:
    batcher = MicroBatcher(
        process, **{"batch_size": 8, "max_wait": 0.2, "max_queue": 64, **options}
    )
    batcher.start()
    return batcher


def test_concurrent_requests_share_a_batch() -> None:
    recorder = Recorder(delay=0.05)
    batcher = started(recorder, batch_size=8, max_wait=1.0)

    async def main() -> List[Any]:
        jobs = [batcher.submit([f"t{i}", f"u{i}"], lambda r: r) for i in range(4)]
        return await asyncio.gather(*jobs)

    start = time.monotonic()
    results = asyncio.run(main())
    assert results == [[f"T{i}", f"U{i}"] for i in range(4)]
    assert recorder.batches == [8]  # 4 requests, one nlp.pipe call
    assert time.monotonic() - start < 0.9, "a full batch must not wait for max_wait"
    batcher.stop(5)


def test_a_lone_client_is_not_kept_waiting() -> None:
    recorder = Recorder()
    # metrics that take a while after each batch: a lone client's next request arrives
    # while the worker is still busy with the batch it was answered from, which must
    # not count as company arriving during that batch
    batcher = MicroBatcher(
        recorder,
        batch_size=100,
        max_wait=1.0,
        max_queue=64,
        on_batch=lambda info: time.sleep(0.1),
    )
    batcher.start()

    async def one() -> float:
        start = time.monotonic()
        assert await batcher.submit(["x"], lambda r: r) == ["X"]
        return time.monotonic() - start

    first = asyncio.run(one())
    assert first >= 0.95  # the first request waited for company
    later = [asyncio.run(one()) for _ in range(4)]
    assert max(later) < 0.7, later  # none came: the next ones run at once
    batcher.stop(5)


def test_clients_answered_by_a_batch_join_the_next_one() -> None:
    """Under load the queue's first request has waited through the running batch; the
    next batch still waits for the clients that batch answered, instead of running the
    one queued request alone and splitting the clients into halves that take turns."""
    recorder = Recorder(delay=0.6)
    batcher = started(recorder, batch_size=2, max_wait=0.5)

    async def main() -> List[Any]:
        first = [batcher.submit([t], lambda r: r) for t in ("a", "b")]  # a full batch
        running = asyncio.gather(*first)
        await asyncio.sleep(0.05)
        queued = asyncio.ensure_future(batcher.submit(["c"], lambda r: r))  # waits 0.55 s
        answered = await running
        await asyncio.sleep(0.05)  # a client answered by the first batch comes back
        again = await batcher.submit(["d"], lambda r: r)
        return [answered, await queued, again]

    assert asyncio.run(main()) == [[["A"], ["B"]], ["C"], ["D"]]
    assert recorder.batches == [2, 2]  # "c" waited for "d", not [2, 1, 1]
    batcher.stop(5)


def test_full_queue_is_refused() -> None:
    gate = threading.Event()
    recorder = Recorder(gate=gate)
    batcher = started(recorder, batch_size=1, max_wait=0.0, max_queue=3)

    async def main() -> None:
        running = asyncio.ensure_future(batcher.submit(["a"], lambda r: r))
        while batcher.busy_docs != 1:  # the worker holds "a" (blocked on the gate)
            await asyncio.sleep(0.01)
        queued = asyncio.ensure_future(batcher.submit(["b", "c", "d"], lambda r: r))
        while batcher.queued_docs != 3:
            await asyncio.sleep(0.01)
        with pytest.raises(QueueFull) as err:
            await batcher.submit(["e"], lambda r: r)
        assert (err.value.queued, err.value.limit) == (3, 3) and err.value.retry_after >= 1
        gate.set()
        assert await running == ["A"] and await queued == ["B", "C", "D"]
        assert await batcher.submit(["e"], lambda r: r) == ["E"]  # room again

    asyncio.run(main())
    batcher.stop(5)


def test_a_failing_document_fails_only_its_request() -> None:
    recorder = Recorder()
    batcher = started(recorder, batch_size=8, max_wait=0.5)

    async def main() -> List[Any]:
        jobs = [batcher.submit(texts, lambda r: r) for texts in (["ok"], ["boom"], ["fine"])]
        return await asyncio.gather(*jobs, return_exceptions=True)

    ok, failed, fine = asyncio.run(main())
    assert ok == ["OK"] and fine == ["FINE"]
    assert isinstance(failed, BatchFailed) and "boom" in str(failed)
    batcher.stop(5)


def test_stop_runs_what_is_queued() -> None:
    recorder = Recorder(delay=0.2)
    batcher = started(recorder, batch_size=1, max_wait=0.0)
    loop = asyncio.new_event_loop()
    futures = [loop.create_task(batcher.submit([t], lambda r: r)) for t in ("a", "b", "c")]
    loop.run_until_complete(asyncio.sleep(0.05))  # all three submitted
    stopper = threading.Thread(target=batcher.stop, args=(10,))
    stopper.start()
    assert loop.run_until_complete(asyncio.gather(*futures)) == [["A"], ["B"], ["C"]]
    stopper.join(10)
    assert not batcher.running
    loop.close()
