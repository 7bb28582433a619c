"""What a benchmark's figures were taken on, printed next to them (BENCHMARKS.md names
the machine of every figure). Imported by the scripts of this folder, run as
``python benchmarks/NAME.py``."""

from __future__ import annotations

from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo ("unknown CPU" elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf8", errors="replace")
    except OSError:
        return "unknown CPU"
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"
