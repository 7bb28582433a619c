"""How far ``lisa_srl``'s role span scores can be trusted, and the map that calibrates them.

A trained pipeline labels the gold sentences of two corpora (its own parse, predicted
predicates, the gold tokens); each role span it writes is right when the gold frame of
the same predicate has a span of the same offsets and label. On the held-out training
documents the map ``score_calibration`` (Platt scaling: ``sigmoid(a * logit(p) + b)`` of
each span's lattice marginal ``p``) is fitted by logistic regression against rightness.
Then, before (``[1, 0]``) and after, each corpus's expected calibration error (10
equal-width bins: the count-weighted mean gap between a bin's mean score and its share of
right spans), and on dev the precision and recall of the role spans kept at a few
``min_score`` thresholds. Writes a JSON report, a reliability diagram (SVG) of dev after
the map, and with ``--write`` the fitted map into a pipeline's config:

    python scripts/calibrate_scores.py training/lisa_trf_short/model-best \\
        corpus/train_heldout.spacy corpus/dev.spacy --svg docs/images/reliability.svg
"""

import argparse
import json
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np
import spacy
from spacy.tokens import Doc, DocBin

from spacy_lisa.decoding.confidence import CLIP, calibrated

THRESHOLDS = (0.0, 0.3, 0.5, 0.7, 0.9)
BINS = 10


def gold_docs(path: Path, nlp: spacy.Language, limit: int = 0) -> List[Doc]:
    docs = list(DocBin().from_disk(path).get_docs(nlp.vocab))
    return docs[:limit] if limit else docs


def labelled(nlp: spacy.Language, gold: List[Doc]) -> Tuple[np.ndarray, np.ndarray, int]:
    """(lattice marginal, right) of every role span the pipeline writes on the gold
    sentences' bare tokens (the map set to the identity), and the number of gold spans."""
    nlp.get_pipe("lisa_srl").cfg["score_calibration"] = [1.0, 0.0]
    bare = [
        Doc(
            nlp.vocab,
            words=[t.text for t in d],
            spaces=[bool(t.whitespace_) for t in d],
            sent_starts=[t.i == 0 for t in d],  # one gold sentence each
        )
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


def ece(scores: np.ndarray, right: np.ndarray) -> Optional[float]:
    """The expected calibration error; None where the pipeline wrote no span (a model
    trained a few steps may write none)."""
    if not len(scores):
        return None
    table = reliability(scores, right)
    return sum(row["count"] * abs(row["score"] - row["right"]) for row in table) / len(scores)


def shown(value: Optional[float], digits: int) -> str:
    return "n/a (no spans)" if value is None else f"{value:.{digits}f}"


def at_thresholds(scores: np.ndarray, right: np.ndarray, n_gold: int) -> List[Dict[str, float]]:
    rows = []
    for threshold in THRESHOLDS:
        kept = scores >= threshold
        p = float(right[kept].mean()) if kept.any() else 0.0
        r = float(right[kept].sum() / n_gold) if n_gold else 0.0
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


def fit_platt(marginals: np.ndarray, right: np.ndarray) -> Tuple[float, float]:
    """``(a, b)`` of the logistic regression of rightness on ``logit(marginal)``, with a
    weak pull towards the identity ``(1, 0)`` (weight 1 against one per span), so that a
    few spans, all right or all wrong, still give finite numbers."""
    p = np.clip(marginals, CLIP, 1 - CLIP)
    x = np.stack([np.log(p / (1 - p)), np.ones_like(p)], axis=1)
    identity = np.array([1.0, 0.0])
    y = right.astype(np.float64)

    def loss(w: np.ndarray) -> float:
        z = x @ w  # the negative log-likelihood, written stably, plus the pull
        return float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * np.sum((w - identity) ** 2))

    w = np.zeros(2)
    for _ in range(100):  # Newton's method, the step halved until the loss falls
        q = 1.0 / (1.0 + np.exp(-x @ w))
        gradient = x.T @ (q - y) + (w - identity)
        hessian = (x * (q * (1 - q))[:, None]).T @ x + np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        while loss(w - step) > loss(w) and np.abs(step).max() > 1e-12:
            step /= 2
        w -= step
    return float(w[0]), float(w[1])


def write_mapping(pipeline: Path, mapping: Tuple[float, float]) -> None:
    """Set ``score_calibration`` in the saved pipeline's config."""
    config = spacy.util.load_config(pipeline / "config.cfg")
    config["components"]["lisa_srl"]["score_calibration"] = [round(v, 4) for v in mapping]
    config.to_disk(pipeline / "config.cfg")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pipeline", type=Path)
    parser.add_argument("heldout", type=Path, help="gold .spacy the map is fitted on")
    parser.add_argument("dev", type=Path, help="gold .spacy reported on")
    parser.add_argument("--svg", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--write", type=Path, default=None, help="a pipeline to set the map in")
    parser.add_argument("--limit", type=int, default=0, help="the first N sentences of each")
    args = parser.parse_args()
    began = time.time()
    nlp = spacy.load(args.pipeline)
    heldout, dev = (gold_docs(path, nlp, args.limit) for path in (args.heldout, args.dev))
    runs = {"heldout": labelled(nlp, heldout), "dev": labelled(nlp, dev)}
    mapping = fit_platt(*runs["heldout"][:2])
    report: Dict[str, object] = {"pipeline": str(args.pipeline), "score_calibration": mapping}
    for name, (marginals, right, n_gold) in runs.items():
        for when, scores in (("before", marginals), ("after", calibrated(marginals, *mapping))):
            report[f"{name} {when}"] = entry = {
                "spans": len(scores),
                "gold": n_gold,
                "ece": ece(scores, right),
                "reliability": reliability(scores, right),
                "thresholds": at_thresholds(scores, right, n_gold),
            }
            print(f"{name} {when}: {len(scores)} spans, ECE {shown(entry['ece'], 4)}")
    after: Dict = report["dev after"]  # type: ignore[assignment]
    for row in after["thresholds"]:
        print("| {min_score} | {kept} | {precision:.4f} | {recall:.4f} | {f1:.4f} |".format(**row))
    print(f"score_calibration {mapping[0]:.4f} {mapping[1]:.4f}, {time.time() - began:.0f} s")
    if args.svg:
        args.svg.parent.mkdir(parents=True, exist_ok=True)
        title = f"EWT dev role spans after the held-out map: ECE {shown(after['ece'], 3)}"
        args.svg.write_text(svg(after["reliability"], title))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    if args.write:
        write_mapping(args.write, mapping)


if __name__ == "__main__":
    main()
