"""The model behind the HTTP layer: a loaded pipeline, its micro-batcher and metrics.

Documents become records exactly as ``spacy-lisa predict`` makes them: the texts go
through ``nlp.pipe`` and each Doc through predict's own formatter (JSON lines, AllenNLP
or CoNLL-2005) with the text's 1-based position in the request as its ``line``, so a
request's records are, byte for byte, the lines predict writes for a file holding the
same texts one per line. The pipeline runs on the batcher's worker thread or, with
``model_process=True`` (what ``spacy-lisa serve`` does), in a child process of its own
(:mod:`.model_process`).
"""

from __future__ import annotations

import functools
import os
import socket
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from spacy.language import Language

from ..about import __version__
from ..device import select_device
from ..formats import OutputFormat
from ..loading import load_pipeline
from .batcher import BatchInfo, MicroBatcher
from .metrics import ServeMetrics
from .model_process import ModelProcess
from .settings import ServeSettings
from .tasks import (
    Annotated,
    DocCounts,
    ModelInfo,
    RecordsTask,
    RenderTask,
    apply_model_settings,
    pipe_texts,
)


class SRLService:
    """One pipeline served through a :class:`MicroBatcher`: ``nlp`` (a loaded pipeline,
    run on the batcher's thread) or a :class:`ModelProcess` (run in its own process).

    Start it (:meth:`start`) on the process that serves, stop it (:meth:`stop`) after the
    last request; :meth:`annotate` and :meth:`render_html` are called on the event loop.
    """

    def __init__(
        self,
        nlp: Language | ModelProcess,
        settings: ServeSettings,
        *,
        model: str = "",
        worker_init: Optional[Callable[[], None]] = None,
    ) -> None:
        self.settings = settings
        self.model_path = model
        self.model_process: Optional[ModelProcess] = None
        process = execute = None
        if isinstance(nlp, ModelProcess):
            self.model_process = nlp
            self.model_info = nlp.info
            execute = nlp.execute
        else:
            apply_model_settings(nlp, settings.torch_threads, settings.max_chars)
            self.model_info = ModelInfo.of(nlp)
            process = functools.partial(pipe_texts, nlp)
        self.metrics = ServeMetrics(self.info)
        self.batcher = MicroBatcher(
            process,
            execute=execute,
            batch_size=settings.batch_size,
            max_wait=settings.max_wait_ms / 1000.0,
            max_queue=settings.max_queue,
            on_batch=self._observe_batch,
            init=worker_init,
        )
        # set by the server on SIGTERM: new requests get 503 while these finish
        self.draining = False
        self.in_flight = 0  # HTTP requests being answered (kept by ServeMiddleware)

    @property
    def info(self) -> Dict[str, str]:
        """The model's name, version and language (the metrics' model_info labels)."""
        return {
            "name": self.model_info.name,
            "version": self.model_info.version,
            "lang": self.model_info.lang,
        }

    @classmethod
    def load(
        cls,
        model: str,
        settings: ServeSettings,
        *,
        gpu_id: int = -1,
        model_process: bool = False,
        srl_options: Optional[Mapping[str, Any]] = None,
    ) -> SRLService:
        """Load ``model`` as ``predict`` does (a UserError with a numbered message, e.g.
        E450 for a GPU that cannot be used, when it cannot be), with ``srl_options``
        (``--predicate-pos``) set on its ``lisa_srl``; ``model_process``: in a child
        process (a ModelProcessError, E427, with the child's reason)."""
        if model_process:
            child = ModelProcess(
                model,
                gpu_id=gpu_id,
                torch_threads=settings.torch_threads,
                max_length=settings.max_chars,
                srl_options=srl_options,
            )
            return cls(child, settings, model=model)
        nlp = load_pipeline(model, gpu_id, srl_options)
        init = None
        if gpu_id >= 0:
            # the GPU (thinc's ops, torch's and cupy's device) is chosen per thread
            def init() -> None:
                select_device(gpu_id)

        return cls(nlp, settings, model=model, worker_init=init)

    # ------------------------------------------------------------ life cycle ----------
    def start(self) -> None:
        self.batcher.start()

    def stop(self, timeout: Optional[float] = None) -> None:
        """Run what is queued, then stop the batcher and the model process."""
        self.batcher.stop(timeout)
        if self.model_process is not None:
            self.model_process.stop()

    # --------------------------------------------------------------- the model --------
    def _observe_batch(self, batch: BatchInfo) -> None:
        counts = [DocCounts.of(result) for result in batch.results]
        words = sum(c.words for c in counts)
        frames = sum(c.frames for c in counts)
        self.metrics.observe_batch(batch.docs, words, frames, batch.seconds)

    async def annotate(
        self,
        texts: Sequence[str],
        ids: Optional[Sequence[Any]] = None,
        output_format: OutputFormat = OutputFormat.jsonl,
    ) -> Annotated:
        """predict's output for ``texts`` (ids as JSONL ``"id"``s; ``None``: no id)."""
        task = RecordsTask(output_format, None if ids is None else tuple(ids))
        return await self.batcher.submit(list(texts), task)

    async def render_html(self, texts: Sequence[str]) -> str:
        """The render view of ``texts`` as an HTML fragment (its CSS scoped inside)."""
        return await self.batcher.submit(list(texts), RenderTask())

    # ---------------------------------------------------------------- health ----------
    def labels(self) -> List[str]:
        return list(self.model_info.labels)

    def health(self) -> Dict[str, Any]:
        """What ``GET /health`` reports."""
        replica: Dict[str, Any] = {"host": socket.gethostname(), "pid": os.getpid()}
        if self.model_process is not None:
            replica["model_process"] = {
                "pid": self.model_process.pid,
                "restarts": self.model_process.restarts,
            }
        return {
            "status": "draining" if self.draining else "ok",
            "model": {
                "loaded": True,  # a service exists only once its pipeline has loaded
                **self.info,
                "path": self.model_path,
                "pipeline": list(self.model_info.pipeline),
                "spacy_version": self.model_info.spacy_version,
                "predicate_pos": self.model_info.predicate_pos,
            },
            "labels": self.labels(),
            "spacy_lisa_version": __version__,
            "settings": self.settings.as_dict(),
            "queue_docs": self.batcher.queued_docs,
            "busy_docs": self.batcher.busy_docs,
            "replica": replica,
        }


__all__ = ["Annotated", "SRLService"]
