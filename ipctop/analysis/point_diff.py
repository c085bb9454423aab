"""A live point against a recorded one: the TUI's baseline Diff and presentation verdict.

The replicate across sessions is a run. A baseline from a sweep has several
runs per point; the live point is usually one run (one settled visit), whose
windows only say how well that one run is known, not how much another run of
the same box would differ. So the live run is given the baseline's
run-to-run variance (a single run varies about the box's mean by s^2 of the
runs, its windows' own noise included), and B/A is the one-new-run t:
se^2 = s^2 (1 / n + 1), n - 1 degrees of freedom. With several visits on both
sides it is Welch's t on the runs. A baseline with a single run has only
windows; then both sides' windows are used, AR(1)-corrected, and the result
says it covers within-run noise only.
"""

from __future__ import annotations

import math

from ipctop.analysis.scaling import ScalingPoint
from ipctop.analysis.stats import (
    RUNS,
    WINDOWS,
    Difference,
    TooFewWindows,
    difference,
    log_difference,
    log_mean,
    logs_of,
)

WITHIN_RUN = "within-run noise only (the baseline has one run)"
ONE_NEW_RUN = "t of one new run against the baseline's runs"


def point_difference(base: ScalingPoint, live: ScalingPoint) -> Difference:
    """live/base with a 95 % interval valid across sessions where the data allow;
    TooFewWindows when neither runs nor windows give one."""
    runs_a, runs_b = base.repeats, live.repeats
    if len(runs_a) >= 2 and len(runs_b) >= 2:
        return difference(runs_a, runs_b, unit=RUNS)
    if len(runs_a) >= 2:
        return _one_new_run(runs_a, live.total_ops_per_s)
    if len(base.windows) >= 2 and len(live.windows) >= 2:
        return difference(base.windows, live.windows, unit=WINDOWS, notes=(WITHIN_RUN,))
    raise TooFewWindows("the baseline point has neither 2 runs nor 2 windows")


def _one_new_run(runs: tuple[float, ...], new: float) -> Difference:
    mean, se_mean, df, _ = log_mean(runs, RUNS)  # se_mean^2 = s^2 / n, df = n - 1
    # The new run varies about the box's mean by the runs' own s: se^2 = s^2 (1 / n + 1),
    # still on the runs' n - 1 degrees of freedom.
    se = se_mean * math.sqrt(1.0 + len(runs))
    d = logs_of([new])[0] - mean
    return log_difference(d, se, df, len(runs), 1, test=ONE_NEW_RUN, unit=RUNS)
