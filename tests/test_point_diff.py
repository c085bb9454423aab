"""The TUI's baseline Diff and presentation verdict (analysis.point_diff): a live
run against a recorded sweep's runs, valid across sessions."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from scipy.stats import t

from ipctop.analysis.point_diff import ONE_NEW_RUN, WITHIN_RUN, point_difference
from ipctop.analysis.scaling import ScalingPoint
from ipctop.analysis.stats import NO_DIFFERENCE, REGRESSION, TooFewWindows

E = (-0.02, -0.01, 0.0, 0.01, 0.02)


def test_one_live_run_against_the_baseline_runs_by_hand() -> None:
    base = ScalingPoint(1, 1000.0, repeats=tuple(1000.0 * math.exp(e) for e in E))
    # One settled visit of 0.92x, its windows tight: they must not narrow the interval.
    live = ScalingPoint(1, 920.0, windows=(919.0, 920.0, 921.0, 920.0))
    d = point_difference(base, live)
    sd = statistics.stdev(E)
    se = sd * math.sqrt(1 / 5 + 1)
    assert d.test == ONE_NEW_RUN and d.unit == "runs" and d.df == 4
    assert d.se == pytest.approx(se)
    assert d.high == pytest.approx(0.92 * math.exp(t.ppf(0.975, 4) * se))
    assert d.verdict == REGRESSION


def test_a_a_false_verdicts_stay_at_5_percent_with_run_offsets() -> None:
    """Each run of the box is offset from the box's mean by 2 % s.d.; its windows are
    tight. The old test (Welch on windows) called most of these A/A pairs a change."""
    rng = random.Random(4)
    trials, calls = 2000, 0
    for _ in range(trials):
        runs = tuple(1e6 * math.exp(rng.gauss(0, 0.02)) for _ in range(3))
        new = 1e6 * math.exp(rng.gauss(0, 0.02))
        live = ScalingPoint(1, new, windows=tuple(new * (1 + 0.001 * k) for k in range(6)))
        calls += point_difference(ScalingPoint(1, 1e6, repeats=runs), live).verdict != (
            NO_DIFFERENCE
        )
    # Binomial 95 % bounds around 5 % at n 2000: 4.1-6.0 %.
    assert 0.041 <= calls / trials <= 0.060


def test_a_baseline_of_one_run_uses_windows_and_says_so() -> None:
    base = ScalingPoint(1, 1000.0, windows=tuple(1000.0 * math.exp(e) for e in E))
    live = ScalingPoint(1, 1000.0, windows=tuple(1000.0 * math.exp(e) for e in E))
    d = point_difference(base, live)
    assert d.unit == "windows" and d.notes == (WITHIN_RUN,)
    with pytest.raises(TooFewWindows):
        point_difference(ScalingPoint(1, 1000.0), live)
