"""The HTTP API of ``spacy-lisa serve`` as a FastAPI app, the same for uvicorn and for
each Ray Serve replica.

- ``POST /v1/annotate``: ``{"text": ...}`` or ``{"texts": [...]}`` (optional ``id`` /
  ``ids``) -> ``{"records": [...]}``, the records ``spacy-lisa predict`` writes
  (``?format=allennlp`` or ``conll2005`` as in predict);
- ``POST /v1/render``: the same body -> the render view as an HTML fragment;
- ``GET /``: the demo page; ``GET /health``; ``GET /metrics`` (Prometheus);
- ``GET /docs``: the OpenAPI page, served with its own assets (no CDN).
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Dict, List, Optional, TypeVar

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..about import __version__
from ..errors import Errors
from ..formats import OutputFormat
from .batcher import BatcherStopped, BatchFailed, QueueFull
from .middleware import BodyTooLarge, ServeMiddleware
from .model_process import ModelProcessError
from .page import demo_page
from .schemas import AnnotateRequest, AnnotateResponse, ErrorResponse, HealthResponse
from .service import SRLService
from .validation import (
    Documents,
    RequestError,
    check_documents,
    check_text,
    error_body,
    validation_error,
)

T = TypeVar("T")

DESCRIPTION = (
    "Semantic role labelling with a spacy-lisa pipeline. `POST /v1/annotate` returns, for "
    "every sentence of every text, the record `spacy-lisa predict` writes (`line` is the "
    "text's 1-based position in the request). Requests that arrive together are labelled "
    "in one batch. Errors are `{status, code, message}`; the message says what to fix."
)
ERRORS: Dict[int | str, Dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "The body is not valid JSON (E400)"},
    413: {"model": ErrorResponse, "description": "Too many or too long texts (E406/E407/E412)"},
    422: {"model": ErrorResponse, "description": "The request is not valid (E401-E411)"},
    500: {"model": ErrorResponse, "description": "The model failed on a text (E415)"},
    503: {
        "model": ErrorResponse,
        "description": "Queue full (E413), shutting down (E414) or the model process "
        "replaced under the request (E426): retry after Retry-After",
    },
}
# POST /v1/annotate answers JSON records, or CoNLL-2005 columns as text
ANNOTATE_RESPONSES: Dict[int | str, Dict[str, Any]] = {
    **ERRORS,
    200: {
        "description": "One record per sentence (format=jsonl; format=allennlp gives "
        "AllenNLP records, format=conll2005 text/plain columns)",
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/AnnotateResponse"}},
            "text/plain": {"schema": {"type": "string"}},
        },
    },
}


def error_response(err: RequestError) -> JSONResponse:
    return JSONResponse(err.body(), status_code=err.status, headers=err.headers)


def create_app(service: SRLService) -> FastAPI:
    """The app serving ``service``: its lifespan starts the service's batcher and stops
    it, after the queued work, at shutdown."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service.start()
        try:
            yield
        finally:
            service.stop(service.settings.drain_timeout)

    app = FastAPIOffline(
        title="spacy-lisa",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        # the page of /docs needs nothing else; the demo page is at /
        redoc_url=None,
    )
    app.state.service = service
    _add_labelling_routes(app, service)
    _add_page_route(app, service)
    _add_watch_routes(app, service)
    _install_error_handlers(app)
    app.add_middleware(ServeMiddleware, service=service)
    return app


def _add_labelling_routes(app: FastAPI, service: SRLService) -> None:
    """``POST /v1/annotate`` (predict's records) and ``POST /v1/render`` (the view)."""

    @app.post(
        "/v1/annotate",
        summary="Label texts: predict's records",
        response_model=AnnotateResponse,
        responses=ANNOTATE_RESPONSES,
    )
    async def annotate(
        body: AnnotateRequest,
        format: OutputFormat = Query(
            OutputFormat.jsonl, description="jsonl (predict's records), allennlp or conll2005"
        ),
    ) -> Response:
        documents = check_documents(body, service.settings)
        work = service.annotate(documents.texts, documents.ids, format)
        output = await through_batcher(documents, work)
        if format == OutputFormat.conll2005:
            return PlainTextResponse(output.text_body())
        # the records are predict's JSON text, joined as they are: never re-encoded
        return Response(output.json_body(), media_type="application/json")

    @app.post(
        "/v1/render",
        summary="Label texts: the render view as HTML",
        response_class=HTMLResponse,
        responses=ERRORS,
    )
    async def render_fragment(body: AnnotateRequest) -> HTMLResponse:
        documents = check_documents(body, service.settings)
        html = await through_batcher(documents, service.render_html(documents.texts))
        return HTMLResponse(html)


def _add_page_route(app: FastAPI, service: SRLService) -> None:
    """``GET /``: the demo page, with the view of ``?text=`` when given."""

    @app.get("/", response_class=HTMLResponse, summary="The demo page")
    async def page(text: Optional[str] = None) -> HTMLResponse:
        fragment = error = None
        if text is not None:
            try:
                check_text('"text"', text, service.settings)
                work = service.render_html([text])
                fragment = await through_batcher(Documents([text], None), work)
            except RequestError as err:  # shown on the page
                error = err.message
        html, headers = demo_page(
            model=service.info["name"],
            version=service.info["version"],
            max_chars=service.settings.max_chars,
            text=text or "",
            fragment=fragment,
            error=error,
        )
        return HTMLResponse(html, headers=headers)


def _add_watch_routes(app: FastAPI, service: SRLService) -> None:
    """``GET /health`` and ``GET /metrics`` (Prometheus)."""

    @app.get(
        "/health",
        summary="The model served, its labels and the queue",
        response_model=HealthResponse,
        responses={503: {"model": HealthResponse, "description": "Shutting down"}},
    )
    async def health() -> JSONResponse:
        return JSONResponse(service.health(), status_code=503 if service.draining else 200)

    @app.get("/metrics", summary="Prometheus metrics", response_class=PlainTextResponse)
    async def metrics(request: Request) -> Response:
        m = service.metrics
        m.queued.set(service.batcher.queued_docs)
        m.busy.set(service.batcher.busy_docs)
        m.draining.set(1 if service.draining else 0)
        m.model_restarts.set(service.model_process.restarts if service.model_process else 0)
        body, content_type = m.exposition(request.headers.get("accept"))
        return Response(body, headers={"Content-Type": content_type})


async def through_batcher(documents: Documents, work: Awaitable[T]) -> T:
    """``work``'s result, or the RequestError that answers why the batcher gave none."""
    try:
        return await work
    except QueueFull as err:
        raise _busy(err) from None
    except BatchFailed as err:
        raise _failed(documents, err) from None
    except BatcherStopped:
        raise _stopping() from None


def _busy(err: QueueFull) -> RequestError:
    message = Errors.E413.format(queued=err.queued, limit=err.limit, retry_after=err.retry_after)
    return RequestError(503, message, {"Retry-After": str(err.retry_after)})


def _stopping() -> RequestError:
    return RequestError(503, Errors.E414, {"Retry-After": "5", "Connection": "close"})


def _failed(documents: Documents, err: BatchFailed) -> RequestError:
    if isinstance(err.cause, ModelProcessError):
        # the model process died under this batch and has been replaced: try again
        return RequestError(503, str(err.cause), {"Retry-After": "1"})
    field = '"text"' if len(documents.texts) == 1 else f"one of {len(documents.texts)} texts"
    return RequestError(500, Errors.E415.format(field=field, detail=err))


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestError)
    async def request_error(request: Request, err: RequestError) -> JSONResponse:
        return error_response(err)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, err: RequestValidationError) -> JSONResponse:
        return error_response(validation_error(list(err.errors())))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, err: StarletteHTTPException) -> JSONResponse:
        if isinstance(err.__cause__, BodyTooLarge):
            s = app.state.service.settings
            message = Errors.E412.format(
                limit=s.max_body_bytes, max_texts=s.max_texts, max_chars=s.max_chars
            )
            return error_response(RequestError(413, message))
        problems = {404: "no such endpoint", 405: "this endpoint does not take that method"}
        problem = problems.get(err.status_code, str(err.detail))
        message = Errors.E416.format(method=request.method, path=request.url.path, problem=problem)
        headers: Dict[str, str] = dict(err.headers or {})
        return JSONResponse(error_body(err.status_code, message), err.status_code, headers)


__all__: List[str] = ["create_app"]
