"""The table of a run of screens (lever_screens.sh, raw_screens.sh): each lever's SRL F1 on
the held-out documents and on dev, read from ``METRICS/<lever>-{train_heldout,dev}SUFFIX.json``,
and its gains over the baseline scored there (in this run, or in an earlier one at the same
budget).

    python benchmarks/screen_table.py metrics/lever_screens baseline ema --rule 0.5
    python benchmarks/screen_table.py metrics/lever_screens baseline merge_0 --suffix -raw \
        --label ", raw text"
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
        None, help="A 'moves on' column: yes where a lever gains at least this on both"
    ),
) -> None:
    def f1(lever: str, data: str) -> float:
        path = metrics / f"{lever}-{data}{suffix}.json"
        return 100 * json.loads(path.read_text())["srl_f"]

    has_base = (metrics / f"baseline-dev{suffix}.json").exists()
    moves_head = f" moves on (>= {rule} on both) |" if rule is not None else ""
    print(f"| lever | held-out F1{label} | dev F1{label} | gain held-out / dev |{moves_head}")
    print("|---|---|---|---|" + ("---|" if rule is not None else ""))
    for lever in levers:
        held, dev = f1(lever, "train_heldout"), f1(lever, "dev")
        gain, moves = "", ""
        if has_base and lever != "baseline":
            gain_held, gain_dev = (
                held - f1("baseline", "train_heldout"),
                dev - f1("baseline", "dev"),
            )
            gain = f"{gain_held:+.2f} / {gain_dev:+.2f}"
            if rule is not None:
                moves = "yes" if gain_held >= rule and gain_dev >= rule else "no"
        row = f"| {lever} | {held:.2f} | {dev:.2f} | {gain} |"
        print(row + (f" {moves} |" if rule is not None else ""))


if __name__ == "__main__":
    typer.run(main)
