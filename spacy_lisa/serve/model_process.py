"""The served pipeline in its own process.

Why: in one process, the HTTP side (uvicorn, FastAPI, JSON) and the model's Python take
turns on one interpreter lock, so under load the whole server gets about one core
(BENCHMARKS.md, Serving over HTTP). With the model in a child process they run on
different cores: the batcher's worker thread sends a batch's texts and tasks down a pipe
and waits for the replies, the lock released while it waits.

The child is spawned, not forked (the server's threads and torch's thread pools do not
survive a fork). It loads the pipeline, reports its :class:`~.model.ModelInfo`, then runs
batches (:func:`~.batcher.run_jobs`: one ``nlp.pipe`` call, then each request's task) and
sends back the replies and the documents' counts, until it is told to stop or its pipe
closes because the server has gone. It ignores SIGINT and SIGTERM: Ctrl-C reaches the
whole process group, and the server drains its requests before it stops the model. A
child that dies (killed, out of memory) is replaced: the batch it held fails (E426),
the next runs on the new one.
"""

from __future__ import annotations

import atexit
import functools
import logging
import multiprocessing
import multiprocessing.connection
import signal
import threading
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..errors import Errors
from .batcher import BatchFailed, JobSpec, run_jobs
from .tasks import DocCounts, ModelInfo, apply_model_settings, pipe_texts

logger = logging.getLogger("spacy_lisa.serve")


class ModelProcessError(Exception):
    """The model process could not start (E427) or stopped during a batch (E426)."""


class ModelProcess:
    """A child process holding the pipeline ``model``; :meth:`execute` runs a batch's jobs
    there (it is the batcher's ``execute``). Starting it loads the model and raises
    :class:`ModelProcessError` (E427, with the child's reason) when that fails."""

    def __init__(
        self,
        model: str,
        *,
        gpu_id: int = -1,
        torch_threads: Optional[int] = None,
        max_length: Optional[int] = None,
        srl_options: Optional[Mapping[str, Any]] = None,
    ) -> None:
        self.model = model
        self.srl_options = dict(srl_options or {})
        self.gpu_id = gpu_id
        self.torch_threads = torch_threads
        self.max_length = max_length
        self.restarts = 0
        self._lock = threading.Lock()  # one batch at a time on the pipe
        self._process: Optional[BaseProcess] = None
        self._conn: Optional[Connection] = None
        self.info: ModelInfo = self._spawn()
        # before multiprocessing's own exit hook, which would wait for ever on a child
        # that ignores SIGTERM: on a forced exit the server's shutdown does not run
        atexit.register(self.stop, 2.0)

    @property
    def pid(self) -> Optional[int]:
        return None if self._process is None else self._process.pid

    @property
    def alive(self) -> bool:
        """The child is there to take a batch. Read from its sentinel and its pipe (between
        batches the child sends nothing, so anything to read means it closed), not from
        ``is_alive()``, which says True for ever once another part of the program (a
        SIGCHLD handler, ``os.wait``) has collected the child's exit status."""
        if self._process is None or self._conn is None or _has_exited(self._process):
            return False
        try:
            return not self._conn.poll(0)
        except OSError:
            return False

    def _spawn(self) -> ModelInfo:
        context = multiprocessing.get_context("spawn")
        conn, child_conn = context.Pipe()
        process = context.Process(
            target=_child_main,
            args=(
                child_conn,
                self.model,
                self.gpu_id,
                self.torch_threads,
                self.max_length,
                self.srl_options,
            ),
            name="lisa-serve-model",
            daemon=True,
        )
        process.start()
        child_conn.close()  # the child holds its end; EOF here once it exits
        try:
            message = conn.recv()  # blocks while the model loads
        except (EOFError, OSError):
            conn.close()
            raise ModelProcessError(
                Errors.E427.format(detail=f"it {_how_it_stopped(process)} while loading")
            ) from None
        if message[0] != "ready":
            process.join(5)
            conn.close()
            raise ModelProcessError(Errors.E427.format(detail=message[1]))
        self._process, self._conn = process, conn
        return message[1]

    def _replace(self) -> None:
        self._close()
        self.restarts += 1
        self.info = self._spawn()

    def execute(self, jobs: List[JobSpec]) -> Tuple[List[Any], List[DocCounts]]:
        """Run ``jobs`` (texts and picklable tasks) in the child: one outcome per job (its
        reply or a BatchFailed) and the counts of the documents labelled."""
        with self._lock:
            if not self.alive:  # it died while idle: replace it before the batch, not after
                logger.error("the model process %s; starting a new one", self._stopped())
                self._replace()
            assert self._conn is not None
            try:
                self._conn.send(("run", jobs))
                outcomes, counts = self._conn.recv()
            except (EOFError, OSError):
                how = self._stopped()
                logger.error("the model process %s during a batch; starting a new one", how)
                self._replace()
                raise ModelProcessError(Errors.E426.format(how=how)) from None
            return outcomes, counts

    def _stopped(self) -> str:
        return "is gone" if self._process is None else _how_it_stopped(self._process)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the child once it has finished its batch (killed after ``timeout`` s)."""
        if not self._lock.acquire(timeout=timeout):  # a batch is still running: end it
            if self._process is not None and not _has_exited(self._process):
                self._process.kill()
            return
        try:
            if self._conn is not None and self.alive:
                try:
                    self._conn.send(("stop", None))
                except OSError:
                    pass
            self._close(timeout)
        finally:
            self._lock.release()

    def _close(self, timeout: float = 5.0) -> None:
        if self._process is not None:
            self._process.join(timeout)
            if not _has_exited(self._process):
                self._process.kill()  # it ignores SIGTERM (see the module docstring)
                self._process.join(5)
        if self._conn is not None:
            self._conn.close()
        self._process = self._conn = None


def _has_exited(process: BaseProcess) -> bool:
    """Its sentinel is ready: it has exited, whether or not its status was collected
    (``is_alive()`` says True for ever once another waiter took the status)."""
    return bool(multiprocessing.connection.wait([process.sentinel], 0))


def _how_it_stopped(process: BaseProcess) -> str:
    process.join(1)
    code = process.exitcode
    if code is None:  # gone, its status taken by another waiter; or still running
        return "exited" if _has_exited(process) else "stopped answering"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _child_main(
    conn: Connection,
    model: str,
    gpu_id: int,
    torch_threads: Optional[int],
    max_length: Optional[int],
    srl_options: Dict[str, Any],
) -> None:
    """The child's life: load, report, run batches until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        from ..loading import load_pipeline

        nlp = load_pipeline(model, gpu_id, srl_options)
        apply_model_settings(nlp, torch_threads, max_length)
        info = ModelInfo.of(nlp)
    except BaseException as err:  # the reason goes to the server, which reports it
        conn.send(("error", str(err) or type(err).__name__))
        conn.close()
        return
    conn.send(("ready", info))
    process = functools.partial(pipe_texts, nlp)
    while True:
        try:
            kind, jobs = conn.recv()
        except (EOFError, OSError):  # the server has gone
            return
        if kind != "run":
            conn.close()
            return
        outcomes, docs = run_jobs(process, jobs)
        counts = [DocCounts.of(doc) for doc in docs]
        try:
            conn.send((outcomes, counts))
        except Exception as err:  # a reply that does not pickle fails its batch, not us
            conn.send(([BatchFailed(err) for _ in jobs], counts))


__all__ = ["ModelProcess", "ModelProcessError"]
