"""Where a training step's time goes: ``spacy train`` of a transformer config for a few
steps, with timers around each part of the step, and a table of the parts.

It runs spaCy's own training loop on the config (the reader with its merge share, the
batcher, the callbacks, the evaluations at ``eval_frequency``), so what it measures is
what ``spacy train`` spends, split into:

- reading and batching: the corpus reader and the batcher, between the updates;
- tokenisation: the windows' wordpieces (``_plan``: the tokenizer, or the pieces kept from
  an earlier epoch);
- padding: the padded sub-batches the transformer is called on (``_encode``);
- encoder forward / backward: the transformer's torch forward and backward;
- LISA and the losses: the rest of ``nlp.update`` (the LISA layers' forward and backward,
  the targets and losses, the conversions between Thinc and torch);
- optimizer: ``finish_update`` (the transformer's torch Adam step and LISA's);
- callbacks: the config's ``before_update`` (the heap released to the OS);
- evaluation: the held-out passes at ``eval_frequency`` and at the end.

It also counts the padding the updates compute on: the wordpieces of the encoder's calls
(real and padded) and the words of LISA's batches (padded to the longest doc).

    python benchmarks/step_breakdown.py configs/lisa_trf.cfg --steps 40 --eval-frequency 20 \
        --set paths.train=corpus/train_fit.spacy --set paths.dev=corpus/train_heldout.spacy

Run it alone on an idle box (a timing under load is not a figure); two variants compared
in one run on the same box give a ratio.
"""

from __future__ import annotations

import functools
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import typer
from spacy.cli.train import train
from spacy.training import loop
from spacy.util import registry

from spacy_lisa.models import transformer, transformer_shim
from spacy_lisa.pipeline.srl_component import LisaSRL

SECONDS: Dict[str, float] = defaultdict(float)
PHASE: Dict[str, Any] = {}  # "now": "update" or "evaluation" while one runs
CLOCK: Dict[str, float] = {}  # "start": the first batch asked for (loading not counted)
COUNTS = {"steps": 0, "words": 0, "padded_words": 0, "pieces": 0, "padded_pieces": 0}
PARTS = (
    "reading and batching",
    "tokenisation",
    "padding",
    "encoder forward",
    "encoder backward",
    "LISA and the losses",
    "optimizer",
    "callbacks",
    "evaluation",
)


def timed(part: str, function: Callable[..., Any], *, phase: str = "") -> Callable[..., Any]:
    """``function`` with its time added to ``part``; with ``phase``, it marks that phase
    while it runs (the parts of an update are counted in the update only, not when the
    evaluation's prediction calls the same functions)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        outer = PHASE.get("now")
        if phase:
            PHASE["now"] = phase
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            if phase or PHASE.get("now") == "update":
                SECONDS[part] += time.perf_counter() - start
            PHASE["now"] = outer

    return wrapper


def timed_batches(create: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """The batch generator's time between updates, and the words it yields."""

    def created(*args: Any, **kwargs: Any) -> Iterator[Any]:
        batches = create(*args, **kwargs)
        CLOCK.setdefault("start", time.perf_counter())
        while True:
            start = time.perf_counter()
            try:
                item = next(batches)
            except StopIteration:
                return
            finally:
                SECONDS["reading and batching"] += time.perf_counter() - start
            yield item

    return created


def timed_evaluation(create: Callable[..., Any]) -> Callable[..., Any]:
    def created(*args: Any, **kwargs: Any) -> Any:
        return timed("evaluation", create(*args, **kwargs), phase="evaluation")

    return created


def counted(update: Callable[..., Any]) -> Callable[..., Any]:
    """LisaSRL.update counting the steps and the words."""

    @functools.wraps(update)
    def wrapper(self: Any, examples: Any, *args: Any, **kwargs: Any) -> Any:
        examples = list(examples)
        COUNTS["steps"] += 1
        COUNTS["words"] += sum(len(eg.reference) for eg in examples)
        # LISA's layers run on the batch padded to its longest doc
        longest = max((len(eg.predicted) for eg in examples), default=0)
        COUNTS["padded_words"] += len(examples) * longest
        return update(self, examples, *args, **kwargs)

    return wrapper


def timed_run(run: Callable[..., Any]) -> Callable[..., Any]:
    """transformer._run with its backprop timed (the encoder's torch backward)."""

    @functools.wraps(run)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        Xs, backprop = run(*args, **kwargs)
        return Xs, timed("encoder backward", backprop, phase="update")

    return wrapper


def counted_padding(encode: Callable[..., Any]) -> Callable[..., Any]:
    """transformer._encode counting, in updates, the wordpieces the encoder is called on
    (``padded_pieces``: rows x longest of every sub-batch) and the real ones among them
    (``pieces``, special tokens included): what padding costs the encoder's arithmetic."""

    @functools.wraps(encode)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        subs = encode(*args, **kwargs)
        if PHASE.get("now") == "update":
            for sub in subs:
                COUNTS["pieces"] += int(sub.attention_mask.sum())
                COUNTS["padded_pieces"] += int(sub.attention_mask.numel())
        return subs

    return wrapper


def instrument() -> None:
    loop.create_train_batches = timed_batches(loop.create_train_batches)
    loop.create_evaluation_callback = timed_evaluation(loop.create_evaluation_callback)
    transformer._plan = timed("tokenisation", transformer._plan)
    transformer._encode = timed("padding", counted_padding(transformer._encode))
    transformer._run = timed_run(transformer._run)
    shim = transformer_shim.TransformerShim
    shim.__call__ = timed("encoder forward", shim.__call__)  # type: ignore[method-assign]
    LisaSRL.update = timed("update", counted(LisaSRL.update), phase="update")  # type: ignore
    LisaSRL.finish_update = timed("optimizer", LisaSRL.finish_update, phase="optimizer")  # type: ignore
    # the config's before_update callbacks, as the registry builds them
    for name in ("spacy-lisa.release_memory.v1",):
        factory = registry.callbacks.get(name)
        registry.callbacks.register(name, func=_timed_factory(factory))


def _timed_factory(factory: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(factory)
    def built(*args: Any, **kwargs: Any) -> Any:
        return timed("callbacks", factory(*args, **kwargs), phase="callbacks")

    return built


def table(seconds: float) -> List[Dict[str, Any]]:
    parts = dict(SECONDS)
    inside = sum(parts.get(p, 0.0) for p in ("tokenisation", "padding", "encoder forward"))
    inside += parts.get("encoder backward", 0.0)
    parts["LISA and the losses"] = parts.pop("update", 0.0) - inside
    parts["callbacks"] = parts.get("callbacks", 0.0)
    named = sum(parts.get(p, 0.0) for p in PARTS)
    rows = [{"part": p, "seconds": round(parts.get(p, 0.0), 2)} for p in PARTS]
    rows.append({"part": "other (the loop, logging, saving)", "seconds": round(seconds - named, 2)})
    for row in rows:
        row["share"] = round(row["seconds"] / seconds, 3)
        row["per step"] = round(row["seconds"] / max(COUNTS["steps"], 1), 3)
    return rows


def main(
    config_path: Path = typer.Argument(..., help="The config to train"),
    output: Path = typer.Option(Path("training/step_breakdown"), help="Output directory"),
    steps: int = typer.Option(40, help="Training steps"),
    eval_frequency: int = typer.Option(20, help="Steps between evaluations"),
    settings: List[str] = typer.Option([], "--set", help="key=value config overrides"),
) -> None:
    overrides: Dict[str, Any] = {key: _value(v) for key, v in (s.split("=", 1) for s in settings)}
    overrides["training.max_steps"] = steps
    overrides["training.eval_frequency"] = eval_frequency
    instrument()
    train(config_path, output, use_gpu=-1, overrides=overrides)
    seconds = time.perf_counter() - CLOCK["start"]
    rows = table(seconds)
    summary = {
        "config": str(config_path),
        "steps": COUNTS["steps"],
        "words": COUNTS["words"],
        "seconds": round(seconds, 1),
        "words_per_second": round(COUNTS["words"] / seconds, 1),
        "padded_words": COUNTS["padded_words"],
        "wordpieces": COUNTS["pieces"],
        "padded_wordpieces": COUNTS["padded_pieces"],
        "parts": rows,
    }
    (output / "step_breakdown.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"{COUNTS['steps']} steps, {COUNTS['words']} words, {seconds:.1f} s")
    pieces, padded = COUNTS["pieces"], max(COUNTS["padded_pieces"], 1)
    words, padded_words = COUNTS["words"], max(COUNTS["padded_words"], 1)
    print(
        f"encoder calls: {pieces} wordpieces in {padded} padded ({1 - pieces / padded:.1%}"
        f" padding); LISA: {words} words in {padded_words} padded "
        f"({1 - words / padded_words:.1%})"
    )
    print("| part | seconds | share | s per step |\n|---|---|---|---|")
    for row in rows:
        print(f"| {row['part']} | {row['seconds']} | {row['share']:.1%} | {row['per step']} |")


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


if __name__ == "__main__":
    typer.run(main)
