"""Write a markdown table comparing `spacy-lisa evaluate` JSON files (one column per file).

python scripts/metrics_table.py a.json b.json --names own gold --output table.md
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

ROWS = [
    ("SRL precision", "srl_p"),
    ("SRL recall", "srl_r"),
    ("SRL F1", "srl_f"),
    ("Predicate F1", "srl_pred_f"),
    ("Sense accuracy (found predicates)", "srl_sense_acc"),
    ("UAS (parse used)", "srl_uas"),
    ("LAS (parse used)", "srl_las"),
    ("POS accuracy", "srl_pos_acc"),
    ("Words/s", "speed"),
]


def _cell(value: object, key: str) -> str:
    if value is None:
        return "-"
    if key == "speed":
        return f"{float(value):,.0f}"  # type: ignore[arg-type]
    return f"{100 * float(value):.2f}"  # type: ignore[arg-type]


def main(
    files: List[Path] = typer.Argument(..., help="JSON score files from spacy-lisa evaluate"),
    names: Optional[List[str]] = typer.Option(None, "--names", help="Column names"),
    output: Optional[Path] = typer.Option(None, "--output", help="Markdown file to write"),
) -> None:
    columns = list(names) if names else [f.stem for f in files]
    if len(columns) != len(files):
        raise typer.BadParameter(f"{len(files)} files but {len(columns)} names")
    scores = [json.loads(f.read_text(encoding="utf8")) for f in files]
    lines = ["| metric | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for label, key in ROWS:
        lines.append(f"| {label} | " + " | ".join(_cell(s.get(key), key) for s in scores) + " |")
    table = "\n".join(lines) + "\n"
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(table, encoding="utf8")
    typer.echo(table)


if __name__ == "__main__":
    typer.run(main)
