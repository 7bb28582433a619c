"""Micro-batching: requests from the event loop are gathered into batches that one worker
thread runs through the model together.

A batch closes when it holds ``batch_size`` documents or ``max_wait`` seconds after
its first document was queued or after the worker finished its previous batch, whichever
is later. Under load the worker finds work queued the moment it finishes a batch; the
wait lets the clients that batch answered send their next requests into the new one,
so batches grow towards ``batch_size`` instead of splitting the clients into two
halves that take turns (BENCHMARKS.md, Serving over HTTP, has the figures). While
requests come one at a time (a batch waited its full ``max_wait`` and nothing else
came, then or while it ran) the wait is skipped, so that a lone client is not delayed
for company that never comes; the first overlap turns it back on. The queue is bounded
in documents: :meth:`MicroBatcher.submit` raises :class:`QueueFull` rather than letting
it grow.

The batcher knows nothing of spaCy: ``process`` turns a list of texts into results (in
order) and each job's ``finish`` turns its share of them into the reply, both on the
worker thread (:func:`run_jobs`), so the event loop never runs the model or builds
records. Given ``execute`` instead, the batcher hands each batch's jobs (texts and
``finish``) to it as they are: :mod:`.model_process` runs them in another process.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, List, Optional, Sequence, Tuple

from ..errors import Errors

logger = logging.getLogger("spacy_lisa.serve")


class QueueFull(Exception):
    """The queue cannot take the job: ``queued`` documents wait, ``limit`` is the bound."""

    def __init__(self, queued: int, limit: int, retry_after: int) -> None:
        super().__init__(f"{queued} documents queued (limit {limit})")
        self.queued = queued
        self.limit = limit
        self.retry_after = retry_after


class BatcherStopped(Exception):
    """The batcher is stopping (or stopped) and takes no new jobs."""


class BatchFailed(Exception):
    """``process`` or ``finish`` raised on this job's documents, even when run alone.

    ``cause`` is the exception, or its description when it was raised in another
    process (a BatchFailed pickles as its message)."""

    def __init__(self, cause: BaseException | str) -> None:
        message = cause if isinstance(cause, str) else f"{type(cause).__name__}: {cause}"
        super().__init__(message)
        self.cause = cause


Finish = Callable[[List[Any]], Any]
JobSpec = Tuple[Sequence[str], Finish]
# jobs -> (one outcome per job: its reply or a BatchFailed; the results of the texts run)
Execute = Callable[[List[JobSpec]], Tuple[List[Any], List[Any]]]


def run_jobs(
    process: Callable[[List[str]], List[Any]], jobs: Sequence[JobSpec]
) -> Tuple[List[Any], List[Any]]:
    """All jobs' texts through one ``process`` call, then each job's ``finish`` on its
    share of the results. If the call fails, each job runs alone, so that one bad
    document fails its own request and not the others of its batch."""
    texts = [text for job_texts, _ in jobs for text in job_texts]
    try:
        results = list(process(texts))
        outcomes = []
        offset = 0
        for job_texts, finish in jobs:
            share = results[offset : offset + len(job_texts)]
            offset += len(job_texts)
            outcomes.append(_finish(finish, share))
        return outcomes, results
    except Exception:
        results = []
        outcomes = []
        for job_texts, finish in jobs:
            try:
                share = list(process(list(job_texts)))
            except Exception as err:
                outcomes.append(BatchFailed(err))
                continue
            results.extend(share)
            outcomes.append(_finish(finish, share))
        return outcomes, results


def _finish(finish: Finish, share: List[Any]) -> Any:
    try:
        return finish(share)
    except Exception as err:
        return BatchFailed(err)


@dataclass
class BatchInfo:
    """What one batch did, for metrics: ``results`` are what ``process`` returned for
    its texts (or what ``execute`` reports for them)."""

    docs: int
    jobs: int
    seconds: float
    results: List[Any]


@dataclass
class _Job:
    texts: Sequence[str]
    finish: Finish
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop
    enqueued: float = field(default_factory=time.monotonic)


class MicroBatcher:
    """Gathers jobs (lists of texts) into batches run by one worker thread.

    process: texts -> one result per text, in order (e.g. a list of Docs from nlp.pipe),
        run with each job's ``finish`` by :func:`run_jobs`;
    execute: instead of ``process``, runs a batch's jobs itself (see :data:`Execute`);
    on_batch: called on the worker thread after each batch (metrics).
    init: called once on the worker thread before the first batch (e.g. to select a GPU).
    """

    def __init__(
        self,
        process: Optional[Callable[[List[str]], List[Any]]] = None,
        *,
        execute: Optional[Execute] = None,
        batch_size: int,
        max_wait: float,
        max_queue: int,
        on_batch: Optional[Callable[[BatchInfo], None]] = None,
        init: Optional[Callable[[], None]] = None,
    ) -> None:
        if (process is None) == (execute is None):
            raise ValueError(Errors.E428.format(given="both" if process else "neither"))
        if process is not None:
            execute = functools.partial(run_jobs, process)
        assert execute is not None
        self.execute: Execute = execute
        self.batch_size = batch_size
        self.max_wait = max_wait
        self.max_queue = max_queue
        self.on_batch = on_batch
        self.init = init
        self._jobs: Deque[_Job] = deque()
        self._queued_docs = 0
        self._busy_docs = 0
        self._cond = threading.Condition()
        self._stopping = False
        # requests come one at a time: run each at once instead of waiting for company
        self._solo = False
        self._free_since = 0.0  # when the worker last finished a batch (monotonic)
        self._thread: Optional[threading.Thread] = None
        # a rough drain rate for Retry-After: documents per second of recent batches
        self._docs_per_second = 0.0

    # ---------------------------------------------------------------- state -----------
    @property
    def queued_docs(self) -> int:
        """Documents waiting for a batch."""
        return self._queued_docs

    @property
    def busy_docs(self) -> int:
        """Documents in the batch the worker is running now."""
        return self._busy_docs

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------- life cycle ---------
    def start(self) -> None:
        """Start the worker thread. It runs in a copy of the caller's context, so that
        context variables set before (thinc's current ops among them) carry over."""
        if self.running:
            return
        self._stopping = False
        context = contextvars.copy_context()
        self._thread = threading.Thread(
            target=context.run, args=(self._work,), name="lisa-serve-batcher", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: Optional[float] = None) -> None:
        """Run what is queued, then stop the worker (waits ``timeout`` s at most)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    # ---------------------------------------------------------------- submit ----------
    async def submit(self, texts: Sequence[str], finish: Callable[[List[Any]], Any]) -> Any:
        """Queue ``texts`` and wait for ``finish(results)``; :class:`QueueFull` when the
        queue has no room for them, :class:`BatchFailed` when the model failed on them,
        :class:`BatcherStopped` once :meth:`stop` was called."""
        loop = asyncio.get_running_loop()
        job = _Job(texts, finish, loop.create_future(), loop)
        with self._cond:
            if self._stopping or not self.running:
                raise BatcherStopped()
            if self._queued_docs + len(texts) > self.max_queue:
                raise QueueFull(self._queued_docs, self.max_queue, self._retry_after())
            self._jobs.append(job)
            self._queued_docs += len(texts)
            self._cond.notify()
        return await job.future

    def _retry_after(self) -> int:
        """Seconds until the queue has likely drained (at least 1)."""
        rate = self._docs_per_second
        if rate <= 0:
            return 1
        return max(1, math.ceil((self._queued_docs + self._busy_docs) / rate))

    # ---------------------------------------------------------------- worker ----------
    def _next_batch(self) -> Optional[List[_Job]]:
        """Block until a batch is due; ``None`` once stopping with nothing queued."""
        with self._cond:
            while not self._jobs:
                if self._stopping:
                    return None
                self._cond.wait()
            # under load the queue's first job has waited through the previous batch;
            # waiting from when the worker came free lets the clients that batch just
            # answered send their next requests into this one
            start = max(self._jobs[0].enqueued, self._free_since)
            deadline = start + (0.0 if self._solo else self.max_wait)
            timed_out = False
            while self._queued_docs < self.batch_size and not self._stopping:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                self._cond.wait(remaining)
            jobs: List[_Job] = []
            n_docs = 0
            # whole jobs only (a request is answered from one batch); the first always fits
            while self._jobs and (not jobs or n_docs + len(self._jobs[0].texts) <= self.batch_size):
                job = self._jobs.popleft()
                self._queued_docs -= len(job.texts)
                if job.future.done():  # cancelled while queued: the client has gone
                    continue
                jobs.append(job)
                n_docs += len(job.texts)
            self._busy_docs = n_docs
            # alone after waiting (or already solo): the next batch does not wait, unless
            # something arrives while this one runs (see _note_overlap)
            self._solo = len(jobs) == 1 and not self._jobs and (timed_out or self._solo)
            return jobs

    def _work(self) -> None:
        if self.init is not None:
            self.init()
        while True:
            jobs = self._next_batch()
            if jobs is None:
                return
            if jobs:
                try:
                    self._run(jobs)
                except Exception as err:  # a bug here must not stop the worker for good
                    logger.exception("batch of %d job(s) failed", len(jobs))
                    self._note_overlap()
                    for job in jobs:
                        _resolve_threadsafe(job, BatchFailed(err))
            with self._cond:
                self._busy_docs = 0
                self._free_since = time.monotonic()

    def _note_overlap(self) -> None:
        """Requests that arrived while a batch ran turn waiting for company back on.

        Checked before the batch's answers go out: a lone client's next request, sent
        the moment it has its answer, must not count as overlapping the batch it
        waited for."""
        with self._cond:
            if self._jobs:
                self._solo = False

    def _run(self, jobs: List[_Job]) -> None:
        n_docs = sum(len(job.texts) for job in jobs)
        start = time.perf_counter()
        outcomes, results = self.execute([(job.texts, job.finish) for job in jobs])
        seconds = time.perf_counter() - start
        if seconds > 0:
            rate = n_docs / seconds
            self._docs_per_second = (
                rate if self._docs_per_second == 0 else (0.8 * self._docs_per_second + 0.2 * rate)
            )
        self._note_overlap()
        for job, outcome in zip(jobs, outcomes, strict=True):
            _resolve_threadsafe(job, outcome)
        if self.on_batch is not None:
            try:
                self.on_batch(BatchInfo(n_docs, len(jobs), seconds, results))
            except Exception:  # metrics must never cost an answer
                logger.exception("on_batch failed")


def _resolve_threadsafe(job: _Job, outcome: Any) -> None:
    try:
        job.loop.call_soon_threadsafe(_resolve, job.future, outcome)
    except RuntimeError:  # the job's event loop has closed: nobody waits for it
        pass


def _resolve(future: asyncio.Future[Any], outcome: Any) -> None:
    """Set a job's result or exception on its event loop (unless it was cancelled)."""
    if future.done():
        return
    if isinstance(outcome, BatchFailed):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


__all__ = [
    "BatchFailed",
    "BatchInfo",
    "BatcherStopped",
    "Execute",
    "MicroBatcher",
    "QueueFull",
    "run_jobs",
]
