"""The dev curve of a `spacy train` run from its log: step, time stamp and one score per
evaluation, and the best one.

Reads the table spaCy's console logger prints, from a log whose lines start with a
time stamp (``HH:MM:SS``, as scripts/run_parallel.sh and the benchmark scripts write
them) or not.

    python benchmarks/training_curve.py training/logs/lisa_cpu.log --score SRL_F
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import List, Optional, Tuple

STAMP = re.compile(r"^\d\d:\d\d:\d\d ")


def read_curve(path: Path, score: str) -> List[Tuple[int, Optional[str], float]]:
    """(step, time stamp or None, score) per evaluation row of the log's table."""
    header: Optional[List[str]] = None
    rows = []
    for line in path.read_text(encoding="utf8", errors="replace").splitlines():
        stamp = line[:8] if STAMP.match(line) else None
        # "LOSS LISA_SRL" is one column of spaCy's table
        cells = (line[9:] if stamp else line).replace("LOSS ", "LOSS_").split()
        if cells[:2] == ["E", "#"]:
            header = cells
        elif header and len(cells) == len(header) and cells[1].isdigit():
            rows.append((int(cells[1]), stamp, float(cells[header.index(score)])))
    if header is None:
        raise SystemExit(f"{path}: no training table found")
    if score not in header:
        raise SystemExit(f"{path}: no column {score}; the table has {', '.join(header)}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--score", default="SRL_F", help="column of spaCy's table")
    args = parser.parse_args()
    rows = read_curve(args.log, args.score)
    for step, stamp, value in rows:
        print(f"step {step:>6}  {stamp or '':8}  {args.score} {value:6.2f}")
    if rows:
        step, stamp, value = max(rows, key=lambda row: row[2])
        print(f"best: step {step} ({stamp or 'no time stamp'}), {args.score} {value:.2f}")


if __name__ == "__main__":
    main()
