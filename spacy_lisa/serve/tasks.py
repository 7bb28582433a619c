"""The model side of the service: what a served pipeline is (:class:`ModelInfo`), the
tasks a request asks of its documents, and the documents' counts for the metrics.

The tasks are small picklable objects, so that the same code turns Docs into replies on
the batcher's thread or in the model's own process (:mod:`.model_process`): a request's
records are predict's, byte for byte, either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.tokens import Doc

from ..formats import FORMATTERS, OutputFormat
from ..input_docs import InputDoc
from ..loading import srl_component
from ..render import render


@dataclass(frozen=True)
class ModelInfo:
    """What ``GET /health`` and the metrics say of the pipeline served."""

    name: str
    version: str
    lang: str
    pipeline: Tuple[str, ...]
    spacy_version: str
    labels: Tuple[str, ...]
    predicate_pos: Optional[List[str]]  # the option in effect (None: every type)

    @classmethod
    def of(cls, nlp: Language) -> ModelInfo:
        meta = nlp.meta
        component = srl_component(nlp)
        pos = component.options.predicate_pos
        return cls(
            name=f"{nlp.lang}_{meta.get('name') or 'pipeline'}",
            version=str(meta.get("version") or "0.0.0"),
            lang=str(nlp.lang),
            pipeline=tuple(nlp.pipe_names),
            spacy_version=str(meta.get("spacy_version", "")),
            labels=tuple(component.labels),
            predicate_pos=None if pos is None else list(pos),
        )


def apply_model_settings(
    nlp: Language, torch_threads: Optional[int], max_chars: Optional[int]
) -> None:
    """What the server's options set on the process that runs ``nlp``."""
    if torch_threads is not None:
        import torch

        # process-wide: several servers (or replicas) on one machine share its cores
        torch.set_num_threads(torch_threads)
    if max_chars is not None and max_chars > nlp.max_length:
        # spaCy refuses texts over nlp.max_length; --max-chars is the limit chosen
        nlp.max_length = max_chars


def pipe_texts(nlp: Language, texts: List[str]) -> List[Doc]:
    """One ``nlp.pipe`` call for a whole batch, as predict calls it for its input."""
    return list(nlp.pipe(texts, batch_size=max(1, len(texts))))


@dataclass(frozen=True)
class DocCounts:
    """A labelled document as the metrics see it."""

    words: int
    frames: int

    @classmethod
    def of(cls, doc: Doc | DocCounts) -> DocCounts:
        if isinstance(doc, DocCounts):
            return doc
        return cls(len(doc), len(doc._.srl_frames))


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


@dataclass(frozen=True)
class RecordsTask:
    """A request's documents -> predict's records (``line``: the text's 1-based
    position in the request; ``ids`` as JSONL ``"id"``s, ``None``: no id)."""

    format: OutputFormat
    ids: Optional[Tuple[Any, ...]] = None

    def __call__(self, docs: Sequence[Doc]) -> Annotated:
        formatter = FORMATTERS[self.format]
        parts = [
            formatter(doc, InputDoc(i + 1, doc.text, None if self.ids is None else self.ids[i]))
            for i, doc in enumerate(docs)
        ]
        return Annotated(self.format, parts)


@dataclass(frozen=True)
class RenderTask:
    """A request's documents -> the render view as an HTML fragment (its CSS inside)."""

    def __call__(self, docs: Sequence[Doc]) -> str:
        return str(render(list(docs), page=False, jupyter=False))


__all__ = [
    "Annotated",
    "DocCounts",
    "ModelInfo",
    "RecordsTask",
    "RenderTask",
    "apply_model_settings",
    "pipe_texts",
]
