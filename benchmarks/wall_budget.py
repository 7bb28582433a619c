"""Train a config for a fixed wall-clock budget instead of a number of steps, for screens
that compare recipes of different cost per step at equal time (benchmarks/encoder_screens.sh).

The learning rate warms up over the config's ``warmup_steps`` and then decays linearly
to zero at the end of the budget, measured from the first update (loading the weights
and ``initialize`` are not counted); at the budget training stops, spaCy saves
``model-last`` (its ``finally``), and a JSON summary is written next to it: steps, words,
seconds, words/s, peak resident memory and the transformer cache's hits and misses.
No evaluation runs inside the budget (``eval_frequency`` is set past its end): score
``model-last`` afterwards.

    python benchmarks/wall_budget.py MINUTES CONFIG OUTPUT [--set key=value ...]
"""

from __future__ import annotations

import json
import resource
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import typer
from spacy.cli.train import train
from spacy.training import loop
from spacy.util import load_config, registry

CLOCK: Dict[str, float] = {}  # "start": time of the first update
COUNTS = {"steps": 0, "words": 0}
STATE: Dict[str, Any] = {}


class BudgetSpent(BaseException):
    """Raised at the first update past the budget (a BaseException: spaCy's training loop
    saves model-last in its ``finally`` and does not report it as a failure)."""


def elapsed() -> float:
    now = time.monotonic()
    return now - CLOCK.setdefault("start", now)


@registry.schedules("spacy-lisa-bench.warmup_linear_minutes.v1")
def warmup_linear_minutes(
    initial_rate: float, warmup_steps: int, minutes: float, total_steps: Optional[int] = None
) -> Iterator[float]:
    """Linear warm-up over ``warmup_steps`` (as warmup_linear.v1), then linear decay to 0
    at ``minutes`` of wall time (``total_steps`` is ignored)."""
    step = 0
    while True:
        warm = step / max(1, warmup_steps)
        left = max(0.0, 1.0 - elapsed() / (60.0 * minutes))
        yield initial_rate * min(warm, left) if step < warmup_steps else initial_rate * left
        step += 1


@registry.callbacks("spacy-lisa-bench.wall_budget.v1")
def wall_budget(
    minutes: float, then: Callable[[Any, Dict[str, Any]], None]
) -> Callable[[Any, Dict[str, Any]], None]:
    """Before each update: run ``then`` (the config's own callback), stop at the budget."""

    def before_update(nlp: Any, args: Dict[str, Any]) -> None:
        STATE["nlp"] = nlp
        then(nlp, args)
        if elapsed() >= 60.0 * minutes:
            raise BudgetSpent()
        COUNTS["steps"] = args["step"] + 1

    return before_update


def _count_words(subdivide: Callable[..., Any]) -> Callable[..., Any]:
    def counted(batch: List[Any], accumulate_gradient: int) -> Any:
        COUNTS["words"] += sum(len(eg.reference) for eg in batch)
        return subdivide(batch, accumulate_gradient)

    return counted


def _value(text: str) -> Any:
    """A config override's value as spaCy's CLI reads it: JSON where it parses, else text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def cache_stats(nlp: Any) -> Dict[str, int]:
    """The transformer tok2vec's cache counters, where the pipeline has one."""
    for _, component in nlp.pipeline:
        model = getattr(component, "model", None)
        if model is None:
            continue
        for node in model.walk():
            for shim in node.shims:
                cache = getattr(shim, "cache", None)
                if cache is not None:
                    return {"cache_hits": cache.hits, "cache_misses": cache.misses}
    return {}


def main(
    minutes: float = typer.Argument(..., help="Wall-clock budget of the updates"),
    config_path: Path = typer.Argument(..., help="The config to train"),
    output: Path = typer.Argument(..., help="Output directory (model-last, summary.json)"),
    settings: List[str] = typer.Option([], "--set", help="key=value config overrides"),
) -> None:
    config = load_config(config_path, interpolate=False)
    output.mkdir(parents=True, exist_ok=True)
    rate = dict(config["training"]["optimizer"]["learn_rate"])
    config["training"]["optimizer"]["learn_rate"] = {
        "@schedules": "spacy-lisa-bench.warmup_linear_minutes.v1",
        "initial_rate": rate["initial_rate"],
        "warmup_steps": rate["warmup_steps"],
        "minutes": minutes,
    }
    then = config["training"].get("before_update") or {"@callbacks": "spacy-lisa.release_memory.v1"}
    config["training"]["before_update"] = {
        "@callbacks": "spacy-lisa-bench.wall_budget.v1",
        "minutes": minutes,
        "then": then,
    }
    config["training"]["max_steps"] = 0
    config["training"]["eval_frequency"] = 10**9
    screen_config = output / "screen.cfg"
    config.to_disk(screen_config)
    overrides = {key: _value(value) for key, value in (s.split("=", 1) for s in settings)}
    loop.subdivide_batch = _count_words(loop.subdivide_batch)
    try:
        train(screen_config, output, use_gpu=-1, overrides=overrides)
    except BudgetSpent:
        pass
    seconds = elapsed()
    summary = {
        "minutes": minutes,
        "seconds": round(seconds, 1),
        "steps": COUNTS["steps"],
        "words": COUNTS["words"],
        "words_per_second": round(COUNTS["words"] / max(seconds, 1e-9), 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        **(cache_stats(STATE["nlp"]) if "nlp" in STATE else {}),
    }
    (output / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    typer.run(main)
