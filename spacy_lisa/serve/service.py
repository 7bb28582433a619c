"""The model behind the HTTP layer: a loaded pipeline, its micro-batcher and metrics.

Documents become records exactly as ``spacy-lisa predict`` makes them: the texts go
through ``nlp.pipe`` and each Doc through predict's own formatter (JSON lines, AllenNLP
or CoNLL-2005) with the text's 1-based position in the request as its ``line``, so a
request's records are, byte for byte, the lines predict writes for a file holding the
same texts one per line.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence

from spacy.language import Language
from spacy.tokens import Doc

from ..about import __version__
from ..cli.predict import FORMATTERS, OutputFormat
from ..device import select_device
from ..inputs import InputDoc
from ..loading import load_pipeline
from ..render import render
from .batcher import BatchInfo, MicroBatcher
from .metrics import ServeMetrics
from .settings import ServeSettings


@dataclass(frozen=True)
class Annotated:
    """A request's output: predict's text for each document, in order."""

    format: OutputFormat
    parts: List[str]

    def json_body(self) -> str:
        """``{"records": [...]}`` from the JSON lines predict wrote (no re-encoding)."""
        # split on "\n" only: json.dumps escapes every newline inside a string, but
        # str.splitlines() would also split at U+2028 and U+2029, which it leaves as they are
        records = [line for part in self.parts for line in part.split("\n") if line]
        return '{"records":[' + ",".join(records) + "]}"

    def text_body(self) -> str:
        return "".join(self.parts)


def _model_info(nlp: Language) -> Dict[str, str]:
    meta = nlp.meta
    return {
        "name": f"{nlp.lang}_{meta.get('name') or 'pipeline'}",
        "version": str(meta.get("version") or "0.0.0"),
        "lang": str(nlp.lang),
    }


def srl_component(nlp: Language) -> Any:
    """The pipeline's ``lisa_srl`` component (load_pipeline checked there is one)."""
    for name in nlp.pipe_names:
        if nlp.get_pipe_meta(name).factory == "lisa_srl":
            return nlp.get_pipe(name)
    raise ValueError("no lisa_srl component")


class SRLService:
    """One loaded pipeline served through a :class:`MicroBatcher`.

    Start it (:meth:`start`) on the process that serves, stop it (:meth:`stop`) after the
    last request; :meth:`annotate` and :meth:`render_html` are called on the event loop.
    """

    def __init__(
        self,
        nlp: Language,
        settings: ServeSettings,
        *,
        model: str = "",
        worker_init: Optional[Callable[[], None]] = None,
    ) -> None:
        self.nlp = nlp
        self.settings = settings
        self.model_path = model
        self.info = _model_info(nlp)
        if settings.torch_threads is not None:
            import torch

            # process-wide: several servers (or replicas) on one machine share its cores
            torch.set_num_threads(settings.torch_threads)
        if settings.max_chars > nlp.max_length:
            # spaCy refuses texts over nlp.max_length; --max-chars is the limit chosen here
            nlp.max_length = settings.max_chars
        self.metrics = ServeMetrics(self.info)
        self.batcher = MicroBatcher(
            self._pipe,
            batch_size=settings.batch_size,
            max_wait=settings.max_wait_ms / 1000.0,
            max_queue=settings.max_queue,
            on_batch=self._observe_batch,
            init=worker_init,
        )
        # set by the server on SIGTERM: new requests get 503 while these finish
        self.draining = False
        self.in_flight = 0  # HTTP requests being answered (kept by ServeMiddleware)

    @classmethod
    def load(cls, model: str, settings: ServeSettings, *, gpu_id: int = -1) -> SRLService:
        """Load ``model`` as ``predict`` does (a UserError with a numbered message, e.g.
        E450 for a GPU that cannot be used, when it cannot be)."""
        nlp = load_pipeline(model, gpu_id)
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
        self.batcher.stop(timeout)

    # --------------------------------------------------------------- the model --------
    def _pipe(self, texts: List[str]) -> List[Doc]:
        # one nlp.pipe call for the whole batch, as predict calls it for its input
        return list(self.nlp.pipe(texts, batch_size=max(1, len(texts))))

    def _observe_batch(self, batch: BatchInfo) -> None:
        docs = batch.results
        words = sum(len(doc) for doc in docs)
        frames = sum(len(doc._.srl_frames) for doc in docs)
        self.metrics.observe_batch(batch.docs, words, frames, batch.seconds)

    async def annotate(
        self,
        texts: Sequence[str],
        ids: Optional[Sequence[Any]] = None,
        output_format: OutputFormat = OutputFormat.jsonl,
    ) -> Annotated:
        """predict's output for ``texts`` (ids as JSONL ``"id"``s; ``None``: no id)."""
        formatter = FORMATTERS[output_format]
        sources = [
            InputDoc(i + 1, text, None if ids is None else ids[i]) for i, text in enumerate(texts)
        ]

        def finish(docs: List[Doc]) -> Annotated:
            # on the worker thread: the records are built there, not on the event loop
            parts = [formatter(doc, src) for doc, src in zip(docs, sources, strict=True)]
            return Annotated(output_format, parts)

        return await self.batcher.submit(list(texts), finish)

    async def render_html(self, texts: Sequence[str]) -> str:
        """The render view of ``texts`` as an HTML fragment (its CSS scoped inside)."""

        def finish(docs: List[Doc]) -> str:
            return str(render(docs, page=False, jupyter=False))

        return await self.batcher.submit(list(texts), finish)

    # ---------------------------------------------------------------- health ----------
    def labels(self) -> List[str]:
        return list(srl_component(self.nlp).labels)

    def health(self) -> Dict[str, Any]:
        """What ``GET /health`` reports."""
        return {
            "status": "draining" if self.draining else "ok",
            "model": {
                "loaded": True,  # a service exists only once its pipeline has loaded
                **self.info,
                "path": self.model_path,
                "pipeline": list(self.nlp.pipe_names),
                "spacy_version": str(self.nlp.meta.get("spacy_version", "")),
            },
            "labels": self.labels(),
            "spacy_lisa_version": __version__,
            "settings": self.settings.as_dict(),
            "queue_docs": self.batcher.queued_docs,
            "busy_docs": self.batcher.busy_docs,
            "replica": {"host": socket.gethostname(), "pid": os.getpid()},
        }


__all__ = ["Annotated", "SRLService", "srl_component"]
