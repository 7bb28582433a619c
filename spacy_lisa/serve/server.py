"""Run the app with uvicorn on one host and port, shutting down gracefully.

On the first SIGTERM (or Ctrl-C) the server *drains*: it keeps listening and answers new
requests with 503 (E414, ``Connection: close``) while the requests already in flight,
queued ones included, finish; then it stops. uvicorn's own shutdown would close the
listening socket at once, and clients would see refused connections instead of a 503.
A second signal stops at once, dropping what is in flight; ``drain_timeout`` bounds the
wait.
"""

from __future__ import annotations

import logging
import socket
import sys
import time
from types import FrameType
from typing import Callable, List, Optional

import uvicorn

from ..errors import Errors
from .app import create_app
from .service import SRLService

logger = logging.getLogger("spacy_lisa.serve")


class DrainingServer(uvicorn.Server):
    """uvicorn's server with the drain described in the module docstring."""

    def __init__(
        self,
        config: uvicorn.Config,
        service: SRLService,
        *,
        on_ready: Optional[Callable[[], None]] = None,
    ) -> None:
        super().__init__(config)
        self.service = service
        self.on_ready = on_ready
        self._drain_started: Optional[float] = None

    def handle_exit(self, sig: int, frame: Optional[FrameType]) -> None:
        # a signal handler: only set flags, the event loop acts on them in on_tick
        if self._drain_started is None:
            self._drain_started = time.monotonic()
            self.service.draining = True
        else:  # a second signal: stop now, dropping what is in flight
            self.should_exit = True
            self.force_exit = True

    async def startup(self, sockets: Optional[List[socket.socket]] = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self.on_ready is not None:
            self.on_ready()

    async def on_tick(self, counter: int) -> bool:
        if self._drain_started is not None and not self.should_exit:
            waited = time.monotonic() - self._drain_started
            idle = self.service.in_flight == 0 and self.service.batcher.queued_docs == 0
            if idle or waited > self.service.settings.drain_timeout:
                self.should_exit = True
        return await super().on_tick(counter)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening-ready socket on ``host``:``port`` (port 0: a free one), or ValueError
    E420 saying why not. Binding before the server starts turns "address in use" into
    a clear message and lets port 0 report the port it got."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
    except OSError as err:
        raise ValueError(
            Errors.E420.format(host=host, port=port, detail=err.strerror or err)
        ) from None
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def serve(
    service: SRLService,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    log_level: str = "info",
    access_log: bool = False,
    echo: Callable[[str], None] = lambda message: print(message, file=sys.stderr, flush=True),
) -> None:
    """Serve ``service`` until SIGTERM / Ctrl-C, then drain (see the module docstring).
    ``echo`` gets the "Serving on URL" line once requests are answered."""
    sock = bind_socket(host, port)
    url = url_of(sock)
    config = uvicorn.Config(
        create_app(service),
        host=host,
        port=sock.getsockname()[1],
        log_level=log_level,
        access_log=access_log,
        lifespan="on",
        # the drain is ours (on_tick); this only bounds uvicorn's wait for tasks after it
        timeout_graceful_shutdown=int(service.settings.drain_timeout) + 1,
        timeout_keep_alive=5,
    )
    name = service.info["name"]
    server = DrainingServer(
        config,
        service,
        on_ready=lambda: echo(f"✔ Serving {name} on {url} (demo page {url}/, API {url}/docs)"),
    )
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    if server.force_exit:
        echo("⚠ Stopped at a second signal, without waiting for the requests in flight")
    else:
        echo("✔ Stopped: the requests in flight finished")


__all__ = ["DrainingServer", "bind_socket", "serve"]
