"""An ASGI middleware around the app: counts in-flight requests (what a graceful
shutdown waits for), answers 503 once shutting down, refuses bodies larger than a valid
request can be (before they are read into memory), and records each request's status
and latency in the metrics."""

from __future__ import annotations

import json
import time
from typing import Any, Awaitable, Callable, Dict, List, MutableMapping, Optional, Tuple

from ..errors import Errors
from .service import SRLService
from .validation import error_body

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# endpoints named in the metrics; any other path counts as "other" (bounded label values)
ENDPOINTS = ("/v1/annotate", "/v1/render", "/", "/health", "/metrics", "/docs", "/openapi.json")
# still answered while draining: a load balancer polls them to see the server go
DRAIN_EXEMPT = ("/health", "/metrics")
API_PREFIX = "/v1/"
JSON_TYPE = b"application/json"


class BodyTooLarge(Exception):
    """A body without Content-Length grew past the limit while being read."""


def endpoint_label(path: str) -> str:
    return path if path in ENDPOINTS else "other"


async def send_json(
    send: Send, status: int, body: Dict[str, Any], headers: Optional[Dict[str, str]] = None
) -> None:
    data = json.dumps(body, ensure_ascii=False).encode("utf8")
    raw: List[Tuple[bytes, bytes]] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
    ]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})


class ServeMiddleware:
    """See the module docstring. It keeps ``service.in_flight``, which the server's drain
    loop reads."""

    def __init__(self, app: ASGIApp, service: SRLService) -> None:
        self.app = app
        self.service = service
        self.max_body = service.settings.max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        metrics = self.service.metrics
        start = time.perf_counter()
        status = {"code": 500}

        async def send_status(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = int(message["status"])
            await send(message)

        service = self.service
        service.in_flight += 1
        metrics.in_flight.set(service.in_flight)
        try:
            if service.draining and path not in DRAIN_EXEMPT:
                # the listening socket stays open while draining, so that clients get a
                # clear 503 (and close their keep-alive connection) instead of a refusal
                await send_json(
                    send_status,
                    503,
                    error_body(503, Errors.E414),
                    {"Retry-After": "5", "Connection": "close"},
                )
                return
            if scope.get("method") == "POST" and path.startswith(API_PREFIX):
                scope = _as_json(scope)
            length = _content_length(scope)
            if length is not None and length > self.max_body:
                await self._too_large(send_status)
                return
            try:
                await self.app(scope, self._limited(receive), send_status)
            except BodyTooLarge:
                await self._too_large(send_status)
        finally:
            service.in_flight -= 1
            metrics.in_flight.set(service.in_flight)
            metrics.observe_request(
                endpoint_label(path), status["code"], time.perf_counter() - start
            )

    async def _too_large(self, send: Send) -> None:
        s = self.service.settings
        message = Errors.E412.format(
            limit=self.max_body, max_texts=s.max_texts, max_chars=s.max_chars
        )
        # no "Connection: close": uvicorn then reads and drops the rest of the body, and
        # the client, still sending, gets to read this answer (a close would reset the
        # connection under it and lose the answer)
        await send_json(send, 413, error_body(413, message))

    def _limited(self, receive: Receive) -> Receive:
        """``receive`` that stops a chunked body (no Content-Length) at the limit."""
        seen = 0

        async def wrapped() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise BodyTooLarge()
            return message

        return wrapped


def _as_json(scope: Scope) -> Scope:
    """The API reads every body as JSON: ``curl -d '{"text": ...}'`` sends it as a form
    (and others as text/plain); FastAPI would not parse those, so their type is set."""
    headers = scope.get("headers", ())
    for key, value in headers:
        if key == b"content-type" and (value.split(b";")[0].strip().endswith(b"json")):
            return scope
    kept = [(k, v) for k, v in headers if k != b"content-type"]
    return {**scope, "headers": [*kept, (b"content-type", JSON_TYPE)]}


def _content_length(scope: Scope) -> Optional[int]:
    for key, value in scope.get("headers", ()):
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


__all__ = ["BodyTooLarge", "ServeMiddleware", "endpoint_label"]
