"""What a benchmark's figures were taken on, printed next to them (BENCHMARKS.md names
the machine of every figure): every benchmark prints :func:`describe`; and how timings
that compare code paths are taken (:func:`round_robin`). Imported by the scripts of this
folder, run as ``python benchmarks/NAME.py``."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple


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


def machine() -> Dict[str, Any]:
    """The machine as data (for a benchmark's JSON): CPU model, cores, platform, torch's
    version and threads (in this process, as the benchmark set them), load average."""
    import torch

    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "platform": sys.platform,
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "load": [round(x, 2) for x in load] if load is not None else None,
    }


def describe() -> str:
    """The machine in one line, the same in every benchmark's output."""
    m = machine()
    load = " ".join(f"{x:.2f}" for x in m["load"]) if m["load"] else "unknown"
    return (
        f"machine: {m['cpu']}, {m['cpus']} core(s), {m['platform']}; GPU: {m['gpu'] or 'none'}; "
        f"torch {m['torch']}, {m['torch_threads']} thread(s); load average {load}"
    )


def round_robin(
    fns: Dict[str, Callable[[], Any]], repeats: int, *, warmup: int = 0, log: bool = False
) -> Tuple[Dict[str, List[float]], Dict[str, Any]]:
    """The seconds of ``repeats`` calls of each function (after ``warmup`` untimed rounds)
    and each one's last result, the functions run in turn: on a shared machine every one
    then sees the same background load, which keeps the ratios honest. ``log`` prints
    each call's time."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: Dict[str, List[float]] = {name: [] for name in fns}
    results: Dict[str, Any] = {}
    for r in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - start)
            if log:
                print(f"  repeat {r + 1}/{repeats} {name:>8}: {times[name][-1]:.2f}s", flush=True)
    return times, results
