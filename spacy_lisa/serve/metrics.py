"""The server's Prometheus metrics: requests, documents, words, batch sizes and latency.

Each app has its own registry (two servers in one process, as in tests, do not share
counts). Latency is exported twice: a histogram (``*_duration_seconds``), which
Prometheus can aggregate over replicas with ``histogram_quantile``, and a summary with
the 0.5 / 0.9 / 0.99 quantiles of the last requests (``*_latency_seconds``), readable
as it is.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Deque, Dict, Iterable, Iterator, Mapping, Optional, Tuple

import numpy
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

PREFIX = "lisa_serve"
QUANTILES = (0.5, 0.9, 0.99)
LATENCY_WINDOW = 2048  # requests the summary's quantiles are taken over
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


class LatencyWindow(Collector):
    """A summary metric with quantiles over the last ``size`` observations per endpoint
    (prometheus_client's own Summary has no quantiles)."""

    def __init__(self, name: str, documentation: str, size: int = LATENCY_WINDOW) -> None:
        self.name = name
        self.documentation = documentation
        self.size = size
        self._windows: Dict[str, Deque[float]] = {}
        self._counts: Dict[str, int] = {}
        self._sums: Dict[str, float] = {}
        self._lock = threading.Lock()

    def observe(self, endpoint: str, seconds: float) -> None:
        with self._lock:
            window = self._windows.setdefault(endpoint, deque(maxlen=self.size))
            window.append(seconds)
            self._counts[endpoint] = self._counts.get(endpoint, 0) + 1
            self._sums[endpoint] = self._sums.get(endpoint, 0.0) + seconds

    def quantiles(self, endpoint: str) -> Dict[float, float]:
        with self._lock:
            values = list(self._windows.get(endpoint, ()))
        if not values:
            return {}
        found = numpy.quantile(numpy.asarray(values), QUANTILES)
        return {q: float(v) for q, v in zip(QUANTILES, found, strict=True)}

    def collect(self) -> Iterable[Metric]:
        metric = Metric(self.name, self.documentation, "summary")
        for endpoint in sorted(self._windows):
            for q, value in self.quantiles(endpoint).items():
                metric.add_sample(self.name, {"endpoint": endpoint, "quantile": str(q)}, value)
            with self._lock:
                count, total = self._counts[endpoint], self._sums[endpoint]
            metric.add_sample(f"{self.name}_count", {"endpoint": endpoint}, count)
            metric.add_sample(f"{self.name}_sum", {"endpoint": endpoint}, total)
        yield metric


class ServeMetrics:
    """Every metric of one server, in its own registry."""

    def __init__(self, model: Optional[Mapping[str, str]] = None) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            f"{PREFIX}_requests",
            "HTTP requests answered, by endpoint and status code",
            ["endpoint", "status"],
            registry=r,
        )
        self.docs = Counter(f"{PREFIX}_docs", "Documents labelled", registry=r)
        self.words = Counter(f"{PREFIX}_words", "Tokens of the documents labelled", registry=r)
        self.frames = Counter(f"{PREFIX}_frames", "SRL frames found", registry=r)
        self.batches = Histogram(
            f"{PREFIX}_batch_docs",
            "Documents per nlp.pipe batch",
            buckets=BATCH_BUCKETS,
            registry=r,
        )
        self.batch_seconds = Histogram(
            f"{PREFIX}_batch_seconds",
            "Seconds per batch (model and records)",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.duration = Histogram(
            f"{PREFIX}_request_duration_seconds",
            "Request latency, by endpoint",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.latency = LatencyWindow(
            f"{PREFIX}_request_latency_seconds",
            f"Request latency quantiles over the last {LATENCY_WINDOW} requests, by endpoint",
        )
        r.register(self.latency)
        self.queued = Gauge(f"{PREFIX}_queue_docs", "Documents waiting for a batch", registry=r)
        self.busy = Gauge(f"{PREFIX}_busy_docs", "Documents in the running batch", registry=r)
        self.in_flight = Gauge(f"{PREFIX}_in_flight_requests", "Requests in progress", registry=r)
        self.draining = Gauge(f"{PREFIX}_draining", "1 while shutting down", registry=r)
        self.model_restarts = Gauge(
            f"{PREFIX}_model_process_restarts",
            "Times the model process died and was replaced (0 without one)",
            registry=r,
        )
        info = Gauge(
            f"{PREFIX}_model_info",
            "The pipeline served (value 1)",
            ["name", "version", "lang"],
            registry=r,
        )
        if model is not None:
            info.labels(model["name"], model["version"], model["lang"]).set(1)

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        self.requests.labels(endpoint, str(status)).inc()
        self.duration.labels(endpoint).observe(seconds)
        self.latency.observe(endpoint, seconds)

    def observe_batch(self, docs: int, words: int, frames: int, seconds: float) -> None:
        self.docs.inc(docs)
        self.words.inc(words)
        self.frames.inc(frames)
        self.batches.observe(docs)
        self.batch_seconds.observe(seconds)

    def exposition(self, accept: Optional[str] = None) -> Tuple[bytes, str]:
        """The registry in the format the scraper asks for (``Accept``: OpenMetrics or
        Prometheus's text format, 0.0.4 by default) and its content type."""
        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type


def parse_exposition(text: str) -> Iterator[Tuple[str, Dict[str, str], float]]:
    """(name, labels, value) of every sample of a text exposition (for tests and the
    benchmark)."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            yield sample.name, dict(sample.labels), sample.value


__all__ = ["LatencyWindow", "ServeMetrics", "parse_exposition"]
