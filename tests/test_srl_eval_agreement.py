"""The scorer's ``official`` convention against the official CoNLL-2005 ``srl-eval.pl``:
the same gold and predicted frames, written by the code path of ``spacy-lisa evaluate
--conll-dir``, must get the same per-label counts from both.

The script lives outside the repository (``../shared/tools/srl-eval.pl``); without it
(and perl) these tests skip, except on CI (``CI=true``), where a missing script fails."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import pytest
import spacy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc
from spacy.training import Example

from spacy_lisa.corpus.brackets import spans_to_bracket_column
from spacy_lisa.frames import set_srl_frames
from spacy_lisa.scoring.props import write_props
from spacy_lisa.scoring.scorer import evaluate_srl

SCRIPT = Path(__file__).resolve().parents[2] / "shared" / "tools" / "srl-eval.pl"
NLP = spacy.blank("en")
Counts = Dict[str, Tuple[int, int, int]]
_ROW = re.compile(r"^\s*(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")


@pytest.fixture(scope="module")
def script() -> Path:
    if SCRIPT.exists() and shutil.which("perl"):
        return SCRIPT
    if os.environ.get("CI") == "true":
        pytest.fail(f"srl-eval.pl not found at {SCRIPT} (or no perl): CI must run this check")
    pytest.skip(f"srl-eval.pl not found at {SCRIPT} (or no perl)")


def srl_eval(script: Path, gold: Path, pred: Path) -> Tuple[Counts, float]:
    out = subprocess.run(
        ["perl", str(script), str(gold), str(pred)], check=True, capture_output=True, text=True
    ).stdout
    counts: Counts = {}
    f1 = 0.0
    for line in out.splitlines():
        match = _ROW.match(line)
        if match is None:
            continue
        label, ok, op, ms = match.group(1), *map(int, match.group(2, 3, 4))
        if label == "Overall":
            counts[label] = (ok, op, ms)
            f1 = float(match.group(7))
        elif label != "V":
            counts[label] = (ok, op, ms)
    return counts, f1


def doc(
    words: Sequence[str],
    frames: List[Dict[str, Any]],
    *,
    sent_starts: Optional[Sequence[int]] = None,
) -> Doc:
    starts: Optional[List[Union[bool, int, None]]] = None
    if sent_starts is not None:
        starts = [i in sent_starts for i in range(len(words))]
    d = Doc(NLP.vocab, words=list(words), sent_starts=starts)
    set_srl_frames(d, frames, spans_key=None)
    return d


def f(pred: Tuple[int, int], *roles: Any, lemma: Optional[str] = None) -> Dict[str, Any]:
    return {"predicate": list(pred), "lemma": lemma, "roles": [list(r) for r in roles]}


def compare(script: Path, tmp: Path, gold: List[Doc], pred: List[Doc]) -> Counts:
    write_props(tmp, gold, pred)
    expected, script_f1 = srl_eval(script, tmp / "gold.props", tmp / "pred.props")
    result = evaluate_srl(
        [Example(p, g) for p, g in zip(pred, gold, strict=True)], convention="official"
    )
    counts: Counts = {
        label: (c["correct"], c["excess"], c["missed"])
        for label, c in result.per_type_counts().items()
    }
    counts["Overall"] = (result.args.tp, result.args.fp, result.args.fn)
    assert counts == expected
    f1 = 100 * result.args.fscore if len(result.args) else 0.0
    assert f1 == pytest.approx(script_f1, abs=0.005 + 0.0005)  # the script prints 2 decimals
    return counts


W = "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9".split()


def hand_built() -> List[Tuple[Doc, Doc]]:
    """(gold, predicted) docs covering every case where span pairing and the script
    differ, and the ones where they agree."""
    cases: List[Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]] = [
        # multi-token gold predicate ("grow up"), one-token prediction: same row
        (
            [f((3, 5), (0, 2, "ARG1"), (2, 3, "ARGM-MOD"), lemma="grow")],
            [f((3, 4), (0, 2, "ARG1"), (2, 3, "ARGM-MOD"), (5, 7, "ARG2"))],
        ),
        # prediction starts one token later: a different row (missed + skipped)
        ([f((3, 5), (0, 2, "ARG0"), lemma="take")], [f((4, 5), (0, 2, "ARG0"))]),
        # one token too long, with a gold lemma unlike the token's lemma
        (
            [f((2, 3), (0, 2, "ARG0"), (3, 5, "ARG1"), lemma="agree")],
            [f((2, 4), (0, 2, "ARG0"), (4, 5, "ARG1"))],
        ),
        # spurious and missing predicates, relabelled and shifted arguments
        (
            [f((1, 2), (0, 1, "ARG0"), (2, 5, "ARG1")), f((6, 7), (5, 6, "ARG0"))],
            [f((1, 2), (0, 1, "ARG1"), (3, 5, "ARG1")), f((8, 9), (0, 8, "ARG1"))],
        ),
        # a role on the predicate's own span, a role around the predicate
        (
            [f((4, 5), (0, 3, "ARG0"), (5, 7, "ARG1"))],
            [f((4, 5), (0, 3, "ARG0"), (4, 5, "ARG1"), (3, 7, "ARG2"))],
        ),
        # gold argument around the predicate (nominal), predicted right and wrong
        (
            [f((2, 3), (1, 4, "ARG1")), f((6, 7), (5, 8, "ARG1"))],
            [f((2, 3), (1, 4, "ARG1")), f((6, 7), (5, 9, "ARG1"))],
        ),
        # C- joined (right, piece wrong), orphan C-, R- arguments
        (
            [f((4, 5), (0, 2, "ARG1"), (3, 4, "ARG0"), (6, 8, "C-ARG1"), (2, 3, "R-ARG0"))],
            [f((4, 5), (0, 2, "ARG1"), (3, 4, "ARG0"), (6, 7, "C-ARG1"), (2, 3, "R-ARG1"))],
        ),
        (
            [f((4, 5), (0, 2, "ARG1"), (6, 8, "C-ARG1")), f((8, 9), (5, 6, "C-ARG2"))],
            [f((4, 5), (0, 2, "ARG1"), (6, 8, "C-ARG1")), f((8, 9), (5, 6, "ARG2"))],
        ),
        # two frames on one token: the second's lemma goes on the next free row
        (
            [f((3, 4), (0, 2, "ARG0")), f((3, 5), (5, 7, "ARG1"))],
            [f((3, 4), (0, 2, "ARG0")), f((3, 6), (6, 7, "ARG1"))],
        ),
        (
            [f((3, 4), (0, 2, "ARG0")), f((3, 5), (5, 7, "ARG1"))],
            [f((3, 4), (0, 2, "ARG0")), f((4, 5), (5, 7, "ARG1"))],
        ),
        # two predicted roles with one span: the script keeps the last one written
        (
            [f((5, 6), (0, 2, "ARG0"), (2, 4, "ARG1"))],
            [f((5, 6), (0, 2, "ARG0"), (2, 4, "ARG1"), (2, 4, "ARG2"))],
        ),
        ([], [f((1, 2), (0, 1, "ARG0"))]),  # nothing gold at all
    ]
    out = [(doc(W, gold), doc(W, pred)) for gold, pred in cases]
    # two sentences: a predicted role across the boundary cannot be written
    gold = doc(W, [f((1, 2), (0, 1, "ARG0")), f((6, 7), (5, 6, "ARG0"))], sent_starts=[0, 5])
    pred = doc(W, [f((1, 2), (0, 1, "ARG0"), (3, 7, "ARG1")), f((6, 7), (5, 6, "ARG0"))])
    out.append((gold, pred))
    return out


def test_official_convention_equals_srl_eval(script: Path, tmp_path: Path) -> None:
    pairs = hand_built()
    counts = compare(script, tmp_path, [g for g, _ in pairs], [p for _, p in pairs])
    assert counts["Overall"][0] > 10  # the set is not trivially empty
    # the strict convention differs on these (e.g. it pairs frames by predicate span)
    strict = evaluate_srl([Example(p, g) for g, p in pairs])
    assert (strict.args.tp, strict.args.fp, strict.args.fn) != counts["Overall"]


def test_multi_token_predicate_paired_by_first_token() -> None:
    # gold "grow up" (3, 5), predicted "grow" (3, 4): srl-eval.pl scores the arguments
    gold = doc(W, [f((3, 5), (0, 2, "ARG1"), (2, 3, "ARGM-MOD"))])
    pred = doc(W, [f((3, 4), (0, 2, "ARG1"), (2, 3, "ARGM-MOD"))])
    official = evaluate_srl([Example(pred, gold)], convention="official")
    assert (official.args.tp, official.args.fp, official.args.fn) == (2, 0, 0)
    strict = evaluate_srl([Example(pred, gold)])
    assert (strict.args.tp, strict.args.fp, strict.args.fn) == (0, 2, 2)
    legacy = evaluate_srl([Example(pred, gold)], count_spurious_predicates=False)
    assert (legacy.args.tp, legacy.args.fp, legacy.args.fn) == (0, 0, 2)


def _writable(n: int, pred: Tuple[int, int], roles: List[Tuple[int, int, str]]) -> bool:
    try:
        spans_to_bracket_column(n, [(pred[0], pred[1], "V"), *roles])
    except ValueError:
        return False
    return True


LABELS = ["ARG0", "ARG1", "ARGM-TMP", "C-ARG1", "R-ARG0", "C-ARG0"]


@st.composite
def frames(draw: Any, n: int = 8) -> List[Dict[str, Any]]:
    out = []
    for _ in range(draw(st.integers(0, 3))):
        start = draw(st.integers(0, n - 1))
        pred = (start, draw(st.integers(start + 1, min(n, start + 2))))
        roles: List[Tuple[int, int, str]] = []
        for _ in range(draw(st.integers(0, 4))):
            a = draw(st.integers(0, n - 1))
            role = (a, draw(st.integers(a + 1, n)), draw(st.sampled_from(LABELS)))
            if _writable(n, pred, [*roles, role]):
                roles.append(role)
        out.append(f(pred, *roles))
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(frames(), frames()), min_size=1, max_size=6))
def test_official_convention_equals_srl_eval_random(
    script: Path, tmp_path_factory: pytest.TempPathFactory, pairs: List[Any]
) -> None:
    words = W[:8]
    gold = [doc(words, g) for g, _ in pairs]
    pred = [doc(words, p) for _, p in pairs]
    compare(script, tmp_path_factory.mktemp("props"), gold, pred)
