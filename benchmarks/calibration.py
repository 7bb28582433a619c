"""How far ``lisa_srl``'s role span scores can be trusted: calibration on held-out and dev.

A trained pipeline labels the gold sentences of two corpora (its own parse, predicted
predicates, the gold tokens); each role span it writes is right when the gold frame of
the same predicate has a span of the same offsets and label. On the held-out training
documents one temperature (``score_temperature``) is fitted by the log-loss of the
scores against rightness (a grid); then, at 1.0 and at the fitted temperature, each
corpus's expected calibration error (10 equal-width bins: the count-weighted mean gap
between a bin's mean score and its share of right spans), and on dev the precision and
recall of the role spans kept at a few ``min_score`` thresholds. Writes a JSON report and
a reliability diagram (SVG) of dev at the fitted temperature:

    python benchmarks/calibration.py training/lisa_trf_short/model-best \\
        corpus/train_heldout.spacy corpus/dev.spacy --svg docs/images/reliability.svg
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import spacy
from spacy.tokens import Doc, DocBin

TEMPERATURES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2, 1.4, 1.7, 2.0, 2.5, 3.0)
THRESHOLDS = (0.0, 0.3, 0.5, 0.7, 0.9)
BINS = 10


def gold_docs(path: Path, nlp: spacy.Language, limit: int = 0) -> List[Doc]:
    docs = list(DocBin().from_disk(path).get_docs(nlp.vocab))
    return docs[:limit] if limit else docs


def labelled(
    nlp: spacy.Language, gold: List[Doc], temperature: float
) -> Tuple[np.ndarray, np.ndarray, int]:
    """(score, right) of every role span the pipeline writes on the gold sentences' bare
    tokens, and the number of gold role spans."""
    nlp.get_pipe("lisa_srl").cfg["score_temperature"] = temperature
    bare = [
        Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d])
        for d in gold
    ]
    scores, right, n_gold = [], [], 0
    for doc, truth in zip(nlp.pipe(bare, batch_size=64), gold, strict=True):
        wanted = {
            (f.predicate.start, r.start, r.end, r.label_)
            for f in truth._.srl_frames
            for r in f.roles
        }
        n_gold += len(wanted)
        for frame in doc._.srl_frames:
            for role in frame.roles:
                scores.append(role._.srl_score)
                right.append((frame.predicate.start, role.start, role.end, role.label_) in wanted)
    return np.asarray(scores, dtype=np.float64), np.asarray(right, dtype=bool), n_gold


def log_loss(scores: np.ndarray, right: np.ndarray) -> float:
    p = np.clip(scores, 1e-7, 1 - 1e-7)
    return float(-np.mean(np.where(right, np.log(p), np.log1p(-p))))


def reliability(scores: np.ndarray, right: np.ndarray) -> List[Dict[str, float]]:
    bins = np.minimum((scores * BINS).astype(int), BINS - 1)
    out = []
    for b in range(BINS):
        inside = bins == b
        if inside.any():
            out.append(
                {"low": b / BINS, "count": int(inside.sum()), "score": float(scores[inside].mean()),
                 "right": float(right[inside].mean())}
            )  # fmt: skip
    return out


def ece(scores: np.ndarray, right: np.ndarray) -> float:
    table = reliability(scores, right)
    return sum(row["count"] * abs(row["score"] - row["right"]) for row in table) / len(scores)


def at_thresholds(scores: np.ndarray, right: np.ndarray, n_gold: int) -> List[Dict[str, float]]:
    rows = []
    for threshold in THRESHOLDS:
        kept = scores >= threshold
        p = float(right[kept].mean()) if kept.any() else 0.0
        r = float(right[kept].sum() / n_gold)
        f = 2 * p * r / (p + r) if p + r else 0.0
        rows.append(
            {"min_score": threshold, "kept": int(kept.sum()), "precision": p, "recall": r, "f1": f}
        )
    return rows


def svg(table: List[Dict[str, float]], title: str) -> str:
    """A reliability diagram: share right against mean score per bin, the diagonal."""
    size, pad = 320, 40
    x = lambda v: pad + v * size  # noqa: E731
    y = lambda v: pad + (1 - v) * size  # noqa: E731
    side = size + 2 * pad
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{side}" height="{side}" '
        'font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{pad}" y="20" font-size="12">{title}</text>',
        f'<rect x="{pad}" y="{pad}" width="{size}" height="{size}" fill="none" stroke="#999"/>',
        f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(1)}" y2="{y(1)}" stroke="#999" '
        'stroke-dasharray="4"/>',
    ]
    for row in table:
        width = size / BINS - 2
        parts.append(
            f'<rect x="{x(row["low"]) + 1:.1f}" y="{y(row["right"]):.1f}" width="{width:.1f}" '
            f'height="{row["right"] * size:.1f}" fill="#4c72b0" opacity="0.8"/>'
        )
        parts.append(
            f'<circle cx="{x(row["score"]):.1f}" cy="{y(row["score"]):.1f}" r="2" fill="#dd8452"/>'
        )
    for v in (0, 0.5, 1):
        parts.append(f'<text x="{x(v) - 6:.0f}" y="{size + pad + 15}">{v}</text>')
        parts.append(f'<text x="8" y="{y(v) + 4:.0f}">{v}</text>')
    parts.append(f'<text x="{pad + size / 2 - 40}" y="{size + pad + 32}">role span score</text>')
    parts.append(
        f'<text x="{pad}" y="{pad - 6}">bars: share right per bin; '
        "dots: the bin's mean score</text>"
    )
    return "\n".join(parts + ["</svg>"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pipeline", type=Path)
    parser.add_argument("heldout", type=Path, help="gold .spacy the temperature is fitted on")
    parser.add_argument("dev", type=Path, help="gold .spacy reported on")
    parser.add_argument("--svg", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=0, help="the first N sentences of each")
    args = parser.parse_args()
    began = time.time()
    nlp = spacy.load(args.pipeline)
    heldout, dev = (gold_docs(path, nlp, args.limit) for path in (args.heldout, args.dev))
    fits = {t: log_loss(*labelled(nlp, heldout, t)[:2]) for t in TEMPERATURES}
    fitted = min(fits, key=fits.get)
    report: Dict[str, object] = {
        "pipeline": str(args.pipeline),
        "log_loss_heldout": fits,
        "temperature": fitted,
    }
    for name, gold in (("heldout", heldout), ("dev", dev)):
        for temperature in sorted({1.0, fitted}):
            scores, right, n_gold = labelled(nlp, gold, temperature)
            key = f"{name}@{temperature}"
            report[key] = {"spans": len(scores), "gold": n_gold, "ece": ece(scores, right),
                           "reliability": reliability(scores, right),
                           "thresholds": at_thresholds(scores, right, n_gold)}  # fmt: skip
            print(f"{key}: {len(scores)} spans, ECE {report[key]['ece']:.4f}")  # type: ignore[index]
    dev_fitted = report[f"dev@{fitted}"]
    for row in dev_fitted["thresholds"]:  # type: ignore[index]
        print("| {min_score} | {kept} | {precision:.4f} | {recall:.4f} | {f1:.4f} |".format(**row))
    print(f"temperature {fitted} (held-out log-loss), {time.time() - began:.0f} s")
    if args.svg:
        args.svg.parent.mkdir(parents=True, exist_ok=True)
        title = f"EWT dev role spans, temperature {fitted}: ECE {dev_fitted['ece']:.3f}"  # type: ignore[index]
        args.svg.write_text(svg(dev_fitted["reliability"], title))  # type: ignore[index]
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
