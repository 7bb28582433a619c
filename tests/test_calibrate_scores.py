"""scripts/calibrate_scores.py (the last command of evaluate-trf-short): the calibration
error it reports, and a pipeline that writes no role span (a model trained a few steps)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).parents[1]


def _script():
    path = REPO / "scripts" / "calibrate_scores.py"
    spec = importlib.util.spec_from_file_location("calibrate_scores", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ece_is_the_count_weighted_gap_between_score_and_share_right():
    script = _script()
    scores = np.array([0.9, 0.9, 0.2])
    right = np.array([True, False, False])
    # the 0.9 bin: 2 spans, mean 0.9, half right; the 0.2 bin: 1 span, none right
    assert script.ece(scores, right) == pytest.approx((2 * 0.4 + 1 * 0.2) / 3)


def test_no_span_gives_the_identity_map_and_no_calibration_error():
    script = _script()
    scores, right = np.zeros(0), np.zeros(0, dtype=bool)
    assert script.ece(scores, right) is None
    assert script.shown(script.ece(scores, right), 4) == "n/a (no spans)"
    assert script.fit_platt(scores, right) == pytest.approx((1.0, 0.0))
    rows = script.at_thresholds(scores, right, n_gold=0)
    assert [(row["kept"], row["precision"], row["recall"], row["f1"]) for row in rows] == [
        (0, 0.0, 0.0, 0.0)
    ] * len(script.THRESHOLDS)
