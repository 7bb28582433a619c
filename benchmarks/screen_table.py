"""The table of a run of screens (lever_screens.sh, raw_screens.sh, short_screens.sh): each
lever's SRL F1 on the held-out documents and on dev, read from
``METRICS/<lever>-{train_heldout,dev}SUFFIX.json``, and its gains over the baseline scored
there (in this run, or in an earlier one at the same budget). The rule's verdict reads the
held-out gain alone: dev is reported, never chosen on.

    python benchmarks/screen_table.py metrics/lever_screens baseline ema --rule 0.5
    python benchmarks/screen_table.py metrics/lever_screens baseline merge_0 --suffix -raw \
        --label ", raw text"
    python benchmarks/screen_table.py metrics/short_screens baseline batch_1000 --rule 0.5 \
        --summaries training/short_screens
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer


def main(
    metrics: Path = typer.Argument(..., help="The screens' metrics directory"),
    levers: List[str] = typer.Argument(..., help="The levers, in the table's order"),
    suffix: str = typer.Option("", help="Of the metrics files' names: '-raw' for raw text"),
    label: str = typer.Option("", help="After 'held-out F1' and 'dev F1' in the header"),
    rule: Optional[float] = typer.Option(
        None, help="A 'moves on' column: yes where a lever gains at least this held-out"
    ),
    summaries: Optional[Path] = typer.Option(
        None,
        help="The wall-budget screens' output directory: steps, training words/s and peak "
        "RSS columns from its <lever>/summary.json (benchmarks/wall_budget.py)",
    ),
) -> None:
    def f1(lever: str, data: str) -> float:
        path = metrics / f"{lever}-{data}{suffix}.json"
        return 100 * json.loads(path.read_text())["srl_f"]

    has_base = (metrics / f"baseline-dev{suffix}.json").exists()
    head = f"| lever | held-out F1{label} | dev F1{label} |"
    if summaries is not None:
        head += " steps | training words/s | peak RSS (GB) |"
    head += " gain held-out / dev |"
    if rule is not None:
        head += f" moves on (>= {rule} held-out) |"
    print(head)
    print("|---" * head.count(" |") + "|")
    for lever in levers:
        held, dev = f1(lever, "train_heldout"), f1(lever, "dev")
        row = f"| {lever} | {held:.2f} | {dev:.2f} |"
        if summaries is not None:
            s = json.loads((summaries / lever / "summary.json").read_text())
            row += f" {s['steps']} | {s['words_per_second']:.0f} | {s['peak_rss_mb'] / 1024:.1f} |"
        gain, moves = "", ""
        if has_base and lever != "baseline":
            gain_held = held - f1("baseline", "train_heldout")
            gain = f"{gain_held:+.2f} / {dev - f1('baseline', 'dev'):+.2f}"
            if rule is not None:
                moves = "yes" if gain_held >= rule else "no"
        row += f" {gain} |"
        if rule is not None:
            row += f" {moves} |"
        print(row)


if __name__ == "__main__":
    typer.run(main)
