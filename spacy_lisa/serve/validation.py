"""What makes a request valid, and the 4xx answer when it is not.

Every bad request gets a JSON body ``{"status", "code", "message"}`` whose message (from
:mod:`spacy_lisa.errors`, E400-E429) says what was wrong and what to send instead:
400 for a body that is not JSON, 413 for too much text, 422 for the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import Errors
from ..input_docs import InputSkip, text_document, unpaired_surrogate
from .schemas import AnnotateRequest
from .settings import ServeSettings

HINT_TEXT = 'Send each document as a JSON string, e.g. {"text": "John sold the car."}.'
HINT_TEXTS = 'Send a list of strings, e.g. {"texts": ["John sold the car.", "Mary came."]}.'


class RequestError(Exception):
    """A request the server refuses: the HTTP status, a numbered message and headers."""

    def __init__(self, status: int, message: str, headers: Optional[Dict[str, str]] = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}

    def body(self) -> Dict[str, Any]:
        return error_body(self.status, self.message)


def error_body(status: int, message: str) -> Dict[str, Any]:
    """``{"status", "code", "message"}``; the code is the message's ``[E4xx]`` prefix."""
    code = message[1:5] if message.startswith("[E") else ""
    return {"status": status, "code": code, "message": message}


@dataclass(frozen=True)
class Documents:
    """The texts of a valid request and their ids (``None``: the request gave none)."""

    texts: List[str]
    ids: Optional[List[Any]]


def json_kind(value: Any) -> str:
    """How a JSON value is called in messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def field_name(loc: Sequence[Any]) -> str:
    """``("body", "texts", 3)`` -> ``texts[3]``; ``("body", "text")`` -> ``"text"``."""
    parts = [p for p in loc if p != "body"]
    if not parts:
        return "the body"
    name = f'"{parts[0]}"'
    for p in parts[1:]:
        name = f"texts[{p}]" if isinstance(p, int) and name == '"texts"' else f"{name}[{p!r}]"
    return name


def check_documents(request: AnnotateRequest, settings: ServeSettings) -> Documents:
    """The documents of a parsed request, or :class:`RequestError` saying what is wrong."""
    has_text, has_texts = request.text is not None, request.texts is not None
    if not has_text and not has_texts:
        raise RequestError(422, Errors.E402.format())
    if has_text and has_texts:
        raise RequestError(
            422, Errors.E403.format(problem='The request has both "text" and "texts"')
        )
    if has_text and request.ids is not None:
        raise RequestError(422, Errors.E403.format(problem='"ids" goes with "texts", not "text"'))
    if has_texts and request.id is not None:
        raise RequestError(422, Errors.E403.format(problem='"id" goes with "text", not "texts"'))
    if request.text is not None:
        check_text('"text"', request.text, settings)
        return Documents([request.text], None if request.id is None else [request.id])
    texts = request.texts or []
    if not texts:
        raise RequestError(
            422,
            Errors.E404.format(
                field='"texts"',
                kind="an empty list",
                expected="a list of documents",
                hint="Send at least one text.",
            ),
        )
    if len(texts) > settings.max_texts:
        raise RequestError(413, Errors.E407.format(n=len(texts), limit=settings.max_texts))
    if request.ids is not None and len(request.ids) != len(texts):
        raise RequestError(422, Errors.E408.format(n_ids=len(request.ids), n_texts=len(texts)))
    for i, text in enumerate(texts):
        check_text(f"texts[{i}]", text, settings)
    return Documents(list(texts), None if request.ids is None else list(request.ids))


def check_text(field: str, text: str, settings: ServeSettings) -> None:
    """One document: not blank, not too long, and text (no lone surrogate). Anything
    else (NUL, control characters, right-to-left marks, emoji) is labelled as
    ``predict`` labels it."""
    if isinstance(text_document(1, text), InputSkip):
        # predict's rule for an empty text (it skips the document; a request gets told)
        raise RequestError(422, Errors.E405.format(field=field))
    if len(text) > settings.max_chars:
        raise RequestError(
            413, Errors.E406.format(field=field, n=len(text), limit=settings.max_chars)
        )
    surrogate = unpaired_surrogate(text)
    if surrogate is not None:
        # JSON may carry "\ud800" alone: not a character, and not encodable in a reply
        code, pos = surrogate
        raise RequestError(422, Errors.E410.format(field=field, code=code, pos=pos))


def validation_error(errors: Sequence[Mapping[str, Any]]) -> RequestError:
    """The first problem FastAPI/pydantic found in a request, as a numbered message."""
    error = errors[0]
    kind = str(error.get("type", ""))
    loc: Tuple[Any, ...] = tuple(error.get("loc", ()))
    value = error.get("input")
    if kind == "json_invalid":
        detail = (error.get("ctx") or {}).get("error") or error.get("msg", "")
        return RequestError(400, Errors.E400.format(detail=detail))
    if loc[:1] == ("query",) and loc[1:2] == ("format",):
        return RequestError(422, Errors.E411.format(value=value))
    if loc == ("body",):
        if kind == "missing":
            return RequestError(422, Errors.E422.format(problem="empty"))
        if isinstance(value, bytes):
            # FastAPI passes the raw bytes on when the Content-Type is not JSON (the
            # middleware marks API bodies as JSON, so only other routes get here)
            return RequestError(422, Errors.E422.format(problem="not sent as JSON"))
        return RequestError(422, Errors.E401.format(kind=json_kind(value)))
    field = field_name(loc)
    if kind == "extra_forbidden":
        return RequestError(422, Errors.E409.format(field=field))
    if kind == "string_type":
        return RequestError(
            422,
            Errors.E404.format(
                field=field, kind=json_kind(value), expected="a string", hint=HINT_TEXT
            ),
        )
    if kind == "list_type":
        return RequestError(
            422,
            Errors.E404.format(
                field=field, kind=json_kind(value), expected="a list of strings", hint=HINT_TEXTS
            ),
        )
    return RequestError(422, Errors.E423.format(detail=f"{field}: {error.get('msg', kind)}"))


__all__ = [
    "Documents",
    "RequestError",
    "check_documents",
    "check_text",
    "error_body",
    "validation_error",
]
