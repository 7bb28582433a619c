"""Shared helpers of the ``spacy-lisa serve`` tests: a real server process on 127.0.0.1
(``python -m spacy_lisa serve ... --port 0``, started and stopped by the tests), plain
HTTP requests to it (stdlib only, no proxy) and its metrics."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

# nothing between the tests and 127.0.0.1, whatever http_proxy says
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Reply:
    """An HTTP answer: status, headers (lower-case names) and body."""

    def __init__(self, status: int, headers: Dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)

    def __repr__(self) -> str:
        return f"Reply({self.status}, {self.body[:300]!r})"


def request(
    url: str,
    *,
    method: str = "GET",
    body: Optional[bytes] = None,
    headers: Optional[Dict[str, str]] = None,
    timeout: float = 120,
) -> Reply:
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with _OPENER.open(req, timeout=timeout) as r:
            return Reply(r.status, {k.lower(): v for k, v in r.headers.items()}, r.read())
    except urllib.error.HTTPError as err:
        return Reply(err.code, {k.lower(): v for k, v in err.headers.items()}, err.read())


def post_json(url: str, obj: Any, **kwargs: Any) -> Reply:
    data = json.dumps(obj).encode("utf8")
    return request(
        url, method="POST", body=data, headers={"Content-Type": "application/json"}, **kwargs
    )


def samples(metrics_text: str) -> List[Tuple[str, Dict[str, str], float]]:
    from spacy_lisa.serve.metrics import parse_exposition

    return list(parse_exposition(metrics_text))


def metric(url: str, name: str, **labels: str) -> float:
    """One sample of the server's /metrics (0.0 when absent)."""
    text = request(f"{url}/metrics").body.decode("utf8")
    for sample, sample_labels, value in samples(text):
        if sample == name and all(sample_labels.get(k) == v for k, v in labels.items()):
            return value
    return 0.0


def wait_for(check: Any, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


class ServerProcess:
    """``spacy-lisa serve MODEL ARGS --port 0`` in its own process; ``url`` once it
    answers. Its stderr is read on a thread (kept in ``lines``) so the pipe never fills."""

    def __init__(
        self,
        model: Path,
        *args: str,
        port: str = "0",
        env: Optional[Dict[str, Optional[str]]] = None,
    ) -> None:
        cmd = [sys.executable, "-m", "spacy_lisa", "serve", str(model), "--port", port, *args]
        # env: variables to set, or to remove (None)
        changes = {"PYTHONIOENCODING": "utf8", **(env or {})}
        env = {k: v for k, v in {**os.environ, **changes}.items() if v is not None}
        self.proc = subprocess.Popen(
            cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env, text=True
        )
        self.lines: List[str] = []
        self.url: Optional[str] = None
        self._ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if self.url is None and "Serving" in line and "http://" in line:
                self.url = "http://" + line.split("http://", 1)[1].split()[0].rstrip("/")
                self._ready.set()
        self._ready.set()

    def wait_ready(self, timeout: float = 300) -> str:
        self._ready.wait(timeout)
        if self.url is None:
            self.kill()
            raise AssertionError("the server did not start:\n" + self.output())
        return self.url

    def output(self) -> str:
        return "".join(self.lines)

    def terminate(self, timeout: float = 120) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)


def start_server(model: Path, *args: str) -> Tuple[ServerProcess, str]:
    server = ServerProcess(model, *args)
    return server, server.wait_ready()


def in_background(fn: Callable[[], Any]) -> Tuple[threading.Thread, Dict[str, Any]]:
    """Run ``fn`` on a thread; its result (or exception) lands in the dict's "value"."""
    result: Dict[str, Any] = {}

    def run() -> None:
        try:
            result["value"] = fn()
        except Exception as err:  # reported by the caller's asserts
            result["value"] = err

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def in_threads(fns: Sequence[Any]) -> List[Any]:
    """Run the callables at once, one thread each; their results in order."""
    results: List[Any] = [None] * len(fns)
    barrier = threading.Barrier(len(fns))

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = fns[i]()
        except Exception as err:  # reported by the caller's asserts
            results[i] = err

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(fns))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    return results
