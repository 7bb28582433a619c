"""The options of ``spacy-lisa serve`` that shape the HTTP service: limits on requests,
micro-batching and shutdown, checked once when the server starts."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Dict, Optional

from ..errors import Errors

# Bytes of JSON one character can take: "\u00e9" is 6 bytes for 1 character (a pair
# "\ud83d\ude00" is 12 for 2); the request-size limit allows that much plus the keys.
JSON_BYTES_PER_CHAR = 6
JSON_OVERHEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class ServeSettings:
    """Limits and batching of one server (or of each Ray Serve replica).

    batch_size: at most this many documents go into one ``nlp.pipe`` call.
    max_wait_ms: how long the first queued document waits for others to join its batch.
    max_chars / max_texts: the longest document and the most documents per request.
    max_queue: documents that may wait for the model; past that requests get 503.
    drain_timeout: seconds a SIGTERM waits for in-flight requests before stopping.
    torch_threads: torch's intra-op threads (``None``: torch's default, one per core).
    """

    batch_size: int = 32
    max_wait_ms: float = 5.0
    max_chars: int = 20_000
    max_texts: int = 128
    max_queue: int = 1024
    drain_timeout: float = 30.0
    torch_threads: Optional[int] = None

    def __post_init__(self) -> None:
        problems = []
        for name in ("batch_size", "max_chars", "max_texts", "max_queue"):
            if getattr(self, name) < 1:
                problems.append(f"--{name.replace('_', '-')} must be at least 1")
        if self.torch_threads is not None and self.torch_threads < 1:
            problems.append("--torch-threads must be at least 1")
        if self.max_wait_ms < 0 or self.drain_timeout < 0:
            problems.append("--max-wait-ms and --drain-timeout cannot be negative")
        if self.max_queue < self.max_texts:
            # a request of --max-texts documents must fit in an empty queue
            problems.append(
                f"--max-queue {self.max_queue} is smaller than --max-texts {self.max_texts}: "
                "a full request could never be queued"
            )
        if problems:
            raise ValueError(Errors.E418.format(problem="; ".join(problems)))

    @property
    def max_body_bytes(self) -> int:
        """The largest request body a valid request can need (larger ones get 413)."""
        return self.max_texts * (self.max_chars * JSON_BYTES_PER_CHAR + 256) + JSON_OVERHEAD_BYTES

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)


__all__ = ["ServeSettings"]
