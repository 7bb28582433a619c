"""The JSON schemas of the HTTP API, for request parsing and the OpenAPI page (``/docs``).

The response models document the records ``spacy-lisa predict`` writes; the server does
not build responses through them (the records come from predict's own formatter), so
the schema describes and never changes what is sent.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictStr

EXAMPLE_TEXT = "John sold the car to Mary yesterday."


class AnnotateRequest(BaseModel):
    """One document (``text``, optional ``id``) or several (``texts``, optional ``ids``)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"text": EXAMPLE_TEXT},
                {"text": EXAMPLE_TEXT, "id": "doc-1"},
                {"texts": [EXAMPLE_TEXT, "She said she would come."], "ids": ["a", "b"]},
            ]
        },
    )

    text: Optional[StrictStr] = Field(
        None, description="One document; its sentences are split by the pipeline."
    )
    id: Optional[JsonValue] = Field(
        None, description='Any JSON value, copied into each record as "id" (as predict does).'
    )
    texts: Optional[List[StrictStr]] = Field(
        None, description="Several documents, labelled in one batch; records keep their order."
    )
    ids: Optional[List[JsonValue]] = Field(None, description="One id per text.")


class SpanRecord(BaseModel):
    """A predicate or role: token and character offsets in the document, and (``sent_*``)
    in its sentence."""

    text: str
    start: int
    end: int
    start_char: int
    end_char: int
    sent_start: int
    sent_end: int
    sent_start_char: int
    sent_end_char: int


class RoleRecord(SpanRecord):
    label: str


class FrameRecord(BaseModel):
    frame: int = Field(description="Index of the frame in doc._.srl_frames")
    roleset: Optional[str]
    lemma: Optional[str]
    predicate: SpanRecord
    roles: List[RoleRecord]
    tags: List[str] = Field(description="BIO tags over the sentence's tokens (predicate B-V)")
    untagged_roles: List[int] = Field(description="Indices of roles the tags cannot hold")


class SentenceRecord(BaseModel):
    """One sentence, exactly as a line of ``spacy-lisa predict``'s JSONL output."""

    line: int = Field(description="The text's 1-based position in the request")
    id: Optional[Any] = Field(None, description="The text's id, when the request gave one")
    sentence: int
    text: str
    start: int
    end: int
    start_char: int
    end_char: int
    tokens: List[str]
    frames: List[FrameRecord]


class AnnotateResponse(BaseModel):
    """``format=jsonl``: one record per sentence of every text, in order. With
    ``format=allennlp`` each record is ``{"verbs": [{"verb", "description", "tags"}],
    "words": [...]}`` instead; ``format=conll2005`` answers text/plain columns."""

    records: List[SentenceRecord]


class AllenNLPVerb(BaseModel):
    verb: str
    description: str
    tags: List[str]


class AllenNLPRecord(BaseModel):
    verbs: List[AllenNLPVerb]
    words: List[str]


class ErrorResponse(BaseModel):
    """Every error: the HTTP status, the error code and a message saying what was wrong
    and what to do."""

    status: int
    code: str = Field(description="E4xx, see spacy_lisa/errors.py")
    message: str


class ModelInfo(BaseModel):
    loaded: bool
    name: str
    version: str
    lang: str
    path: str
    pipeline: List[str]
    spacy_version: str
    predicate_pos: Optional[List[str]] = Field(
        description="the predicate types labelled (--predicate-pos); null: every type"
    )


class HealthResponse(BaseModel):
    status: str = Field(description='"ok", or "draining" while shutting down (with 503)')
    model: ModelInfo
    labels: List[str]
    spacy_lisa_version: str
    settings: Dict[str, Any]
    queue_docs: int
    busy_docs: int
    replica: Dict[str, Any]


__all__ = [
    "AllenNLPRecord",
    "AnnotateRequest",
    "AnnotateResponse",
    "ErrorResponse",
    "HealthResponse",
    "SentenceRecord",
]
