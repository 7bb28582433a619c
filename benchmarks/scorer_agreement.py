"""Compare the Python SRL scorer with the official ``srl-eval.pl`` on perturbed gold.

No trained model: the gold frames of a DocBin are the gold side, and randomly perturbed
copies of them (dropped, shifted and relabelled arguments, missing and spurious
predicates, predicate spans that differ from gold, roles over the predicate, C-/R-
arguments, two frames on one token) are the predictions. Both are written with the code
path of ``spacy-lisa evaluate --conll-dir`` and scored by the script; the per-label
counts are compared with :func:`spacy_lisa.pipeline.scorer.evaluate_srl`.

    python benchmarks/scorer_agreement.py corpus/dev.spacy ../shared/tools/srl-eval.pl
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import spacy
from machine import describe
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_lisa.corpus.brackets import spans_to_bracket_column
from spacy_lisa.evaluation import write_props
from spacy_lisa.frames import doc_sentences, has_srl_annotation, set_srl_frames
from spacy_lisa.pipeline.scorer import evaluate_srl

LABELS = ["ARG0", "ARG1", "ARG2", "ARGM-TMP", "ARGM-MOD", "ARGM-ADV", "ARGM-LOC"]
_ROW = re.compile(r"^\s*(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")

Counts = Dict[str, Tuple[int, int, int]]


def run_srl_eval(script: Path, gold: Path, pred: Path) -> Tuple[Counts, float]:
    """Per-label (correct, excess, missed) and the overall F1 printed by srl-eval.pl."""
    out = subprocess.run(
        ["perl", str(script), str(gold), str(pred)],
        check=True,
        capture_output=True,
        text=True,
    )
    warnings = [
        re.sub(r"sentence \d+ : verb \S+ at position \d+|sentence \d+", "", w)
        for w in out.stderr.splitlines()
        if w.startswith("WARNING")
    ]
    for kind in sorted(set(warnings)):
        print(f"srl-eval.pl: {warnings.count(kind)} x {kind[:90]}")
    counts: Counts = {}
    f1 = 0.0
    for line in out.stdout.splitlines():
        match = _ROW.match(line)
        if match is None:
            continue
        label, ok, op, ms = match.group(1), *map(int, match.group(2, 3, 4))
        if label == "Overall":
            f1 = float(match.group(7))
        elif label != "V":
            counts[label] = (ok, op, ms)
    return counts, f1


def _writable(n_tokens: int, frame: Dict[str, Any]) -> bool:
    spans = [(frame["predicate"][0], frame["predicate"][1], "V")]
    spans += [(r[0], r[1], r[2]) for r in frame["roles"]]
    try:
        spans_to_bracket_column(n_tokens, spans)
    except ValueError:
        return False
    return True


def perturb(doc: Doc, rng: random.Random) -> List[Dict[str, Any]]:
    """Perturbed copies of the doc's gold frames (stored form, doc offsets)."""
    sents = doc_sentences(doc)
    out: List[Dict[str, Any]] = []

    def sent_of(i: int) -> Tuple[int, int]:
        for s in sents:
            if s.start <= i < s.end:
                return s.start, s.end
        return 0, len(doc)

    def keep(frame: Dict[str, Any], fallback: Optional[Dict[str, Any]]) -> None:
        lo, hi = sent_of(frame["predicate"][0])
        ok = all(lo <= r[0] and r[1] <= hi for r in frame["roles"]) and frame["predicate"][1] <= hi
        local = {
            "predicate": [frame["predicate"][0] - lo, frame["predicate"][1] - lo],
            "roles": [[r[0] - lo, r[1] - lo, r[2]] for r in frame["roles"]],
        }
        if ok and _writable(hi - lo, local):
            out.append(frame)
        elif fallback is not None:
            out.append(fallback)

    for gold in doc._.srl_frame_data or []:
        gold = {**gold, "roles": [list(r) for r in gold["roles"]]}
        if rng.random() < 0.05:
            continue  # missing predicate
        lo, hi = sent_of(gold["predicate"][0])
        frame = {**gold, "predicate": list(gold["predicate"]), "roles": []}
        for start, end, label in gold["roles"]:
            x = rng.random()
            if x < 0.12:
                continue  # dropped
            if x < 0.22:
                start = max(lo, min(end - 1, start + rng.choice([-1, 1])))
            elif x < 0.30:
                end = min(hi, max(start + 1, end + rng.choice([-1, 1])))
            elif x < 0.38:
                label = rng.choice(LABELS)
            elif x < 0.41 and not label.startswith(("C-", "R-")):
                label = rng.choice(["C-", "R-"]) + label
            frame["roles"].append([start, end, label])
        pstart, pend = frame["predicate"]
        x = rng.random()
        if pend - pstart > 1 and x < 0.7:
            frame["predicate"] = [pstart, pstart + 1]  # multi-token gold, one-token guess
        elif pend - pstart > 1 and x < 0.85:
            frame["predicate"] = [pstart + 1, pend]  # starts one token later
        elif x < 0.04 and pend < hi:
            frame["predicate"] = [pstart, pend + 1]  # one token too long
        y = rng.random()
        if y < 0.03:
            frame["roles"].append([frame["predicate"][0], frame["predicate"][1], "ARG1"])
        elif y < 0.06 and pstart > lo and frame["predicate"][1] < hi:
            frame["roles"].append([pstart - 1, frame["predicate"][1] + 1, "ARG2"])
        keep(frame, gold)
        if rng.random() < 0.03 and pend < hi:  # a second frame on the same token
            keep({**frame, "predicate": [pstart, pend + 1], "roles": frame["roles"][:1]}, None)
    taken = {f["predicate"][0] for f in out}
    for _ in range(2):
        if rng.random() < 0.15 and len(doc) > 2:  # spurious predicate
            i = rng.randrange(len(doc))
            if i in taken:
                continue
            lo, hi = sent_of(i)
            roles = []
            if i > lo:
                roles.append([lo, i, rng.choice(LABELS)])
            if i + 1 < hi:
                roles.append([i + 1, hi, rng.choice(LABELS)])
            keep({"predicate": [i, i + 1], "roles": roles}, None)
            taken.add(i)
    return out


def python_counts(examples: List[Example], convention: str) -> Tuple[Counts, float]:
    if convention == "legacy":  # span pairing, spurious props skipped: the old approximation
        result = evaluate_srl(examples, count_spurious_predicates=False)
    else:
        result = evaluate_srl(examples, convention=convention)
    counts = {
        label: (c["correct"], c["excess"], c["missed"])
        for label, c in result.per_type_counts().items()
    }
    return counts, 100 * (result.args.fscore if len(result.args) else 0.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("script", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--convention", default="official", choices=["official", "strict", "legacy"]
    )
    args = parser.parse_args()
    nlp = spacy.blank("en")
    rng = random.Random(args.seed)
    gold_docs = [
        d for d in DocBin().from_disk(args.data).get_docs(nlp.vocab) if has_srl_annotation(d)
    ]
    pred_docs = []
    for gold in gold_docs:
        pred = Doc(
            nlp.vocab,
            words=[t.text for t in gold],
            spaces=[bool(t.whitespace_) for t in gold],
        )
        set_srl_frames(pred, perturb(gold, rng), spans_key=None)
        pred_docs.append(pred)
    examples = [Example(p, g) for p, g in zip(pred_docs, gold_docs, strict=True)]
    py, py_f1 = python_counts(examples, args.convention)
    with tempfile.TemporaryDirectory() as tmp:
        write_props(Path(tmp), gold_docs, pred_docs)
        pl, pl_f1 = run_srl_eval(args.script, Path(tmp) / "gold.props", Path(tmp) / "pred.props")
    print(f"docs {len(gold_docs)}  python F1 {py_f1:.4f}  srl-eval.pl F1 {pl_f1:.2f}")
    differ = 0
    for label in sorted(set(py) | set(pl)):
        a, b = py.get(label, (0, 0, 0)), pl.get(label, (0, 0, 0))
        if a != b:
            differ += 1
            print(f"  {label:12s} python {a}  srl-eval.pl {b}")
    print("per-label counts equal" if not differ else f"{differ} label(s) differ")
    print(describe())
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
