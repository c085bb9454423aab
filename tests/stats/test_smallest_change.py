"""compare states the smallest change its records can show (issue 23's power proof):
the median half-width of the intervals it judged, in its legend and in --json."""

from __future__ import annotations

import math

import pytest
from scipy.stats import t

from ipctop.output.records.record import Record, Step
from ipctop.output.text.compare_records import compare, comparison_to_dict, legend_lines

# Five runs a point, planted deviations of mean 0 and sample variance 0.00025 x scale^2.
E = (-0.02, -0.01, 0.0, 0.01, 0.02)
SCALES = (1.0, 3.0, 2.0)  # one pair count each; the median spread is the third point's


def _record(kernel: str, level: float) -> Record:
    cfg = {"workload": "psem", "placement": "spread", "mode": "threads", "engine": "native",
           "cpus": [0, 1, 2, 3], "seconds": 5.0, "warmup": 1.0, "repeat": 5, "interval": 1.0}  # fmt: skip
    steps = [
        Step(i + 1, level, repeats=[level * math.exp(e * s) for e in E])
        for i, s in enumerate(SCALES)
    ]
    return Record(kind="sweep", box={"kernel_release": kernel}, config=cfg, steps=steps)


def test_the_smallest_change_is_the_median_half_width_of_the_judged_points() -> None:
    # A session spread of 0 given: each point is Welch's t of 5 runs a side with
    # equal variances, so se = sqrt(2 v / 5) on 8 df, worked out here by hand.
    cmp = compare([_record("a", 1000.0), _record("b", 1000.0)], session_sd_pct=0.0)
    half = t.ppf(0.975, 8) * math.sqrt(2 * 0.00025 * 2.0**2 / 5)
    want = 100.0 * math.sinh(half)  # 50 (e^h - e^-h): the "±" of a ratio of 1
    assert len(cmp.judged()) == 3
    assert cmp.smallest_change_pct() == pytest.approx(want, rel=1e-6)
    assert f"smallest change these records can show: about ±{want:.0f} %" in legend_lines(cmp)
    assert comparison_to_dict(cmp)["smallest_change_pct"] == pytest.approx(want, rel=1e-6)


def test_nothing_judged_states_no_smallest_change() -> None:
    # One record a side from separate sessions and no spread: nothing is judged,
    # so no smallest change can be claimed either.
    cmp = compare([_record("a", 1000.0), _record("b", 1000.0)])
    assert cmp.judged() == [] and cmp.smallest_change_pct() is None
    assert not any("smallest change" in line for line in legend_lines(cmp))
    assert comparison_to_dict(cmp)["smallest_change_pct"] is None
