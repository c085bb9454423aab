"""A live point against a recorded one: the TUI's baseline Diff and presentation verdict.

The replicate across sessions is a run, and a live run is always a new
session. A baseline from a sweep has several runs per point; the live point
is usually one run (one settled visit). Its rate differs from the baseline's
mean by three terms: the baseline mean's own error (s^2 / n), the new run's
run-to-run noise (s^2), and the two sessions' offsets (2 sigma_s^2), so
se^2 = s^2 (1 / n + 1) + 2 sigma_s^2. sigma_s is the box's session spread
(`ipctop check --sessions K` records it); without it the baseline's run
variance stands in for it (this box: session s.d. 1.2-1.8 %, run s.d. a
median 0.8 %, so the stand-in is no upper bound, and the verdict says which
it used). With several visits on both sides it is Welch's t on the runs plus
the same session term. A baseline with a single run has only windows; then
both sides' windows are used, AR(1)-corrected, with the session term when
it is known, and otherwise the result says it covers within-run noise only.

A screen judges every settled point against the baseline at once, so its
verdicts (the Diff column's colours, the presentation line) are Holm-adjusted
over the points judged together (`judge_points`), as compare's are: N points
each at 5 % would call some change on up to 1 - 0.95^N of A/A screens (a
third at 8 points).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ipctop.analysis.scaling import ScalingPoint
from ipctop.analysis.stats import (
    CONFIDENCE,
    IMPROVEMENT,
    NO_DIFFERENCE,
    REGRESSION,
    RUNS,
    WINDOWS,
    Difference,
    TooFewWindows,
    combine,
    difference,
    holm,
    log_difference,
    log_mean,
    logs_of,
)

WITHIN_RUN = "within-run noise only (the baseline has one run)"
ONE_NEW_RUN = "t of one new run against the baseline's runs"
STAND_IN = "session spread unmeasured: the runs' spread stands in"


def point_difference(
    base: ScalingPoint,
    live: ScalingPoint,
    session_sd_pct: float | None = None,
    session_df: float = math.inf,
) -> Difference:
    """live/base with a 95 % interval valid across sessions where the data allow;
    session_sd_pct is the box's session spread (None: not measured).
    TooFewWindows when neither runs nor windows give one."""
    runs_a, runs_b = base.repeats, live.repeats
    known = session_sd_pct is not None
    session_var = math.log1p(session_sd_pct / 100.0) ** 2 if known else 0.0  # type: ignore[operator]
    if len(runs_a) >= 2 and len(runs_b) >= 2:
        if not known:  # the runs' pooled variance, on their degrees of freedom
            la, lb = logs_of(runs_a), logs_of(runs_b)
            ss = sum((x - sum(la) / len(la)) ** 2 for x in la)
            ss += sum((x - sum(lb) / len(lb)) ** 2 for x in lb)
            session_df = len(la) + len(lb) - 2
            session_var = ss / session_df
        notes = () if known else (STAND_IN,)
        return difference(
            runs_a, runs_b, unit=RUNS, session_var=session_var, session_df=session_df, notes=notes
        )
    if len(runs_a) >= 2:
        return _one_new_run(
            runs_a, live.total_ops_per_s, session_var if known else None, session_df
        )
    if len(base.windows) >= 2 and len(live.windows) >= 2:
        if known:
            return difference(
                base.windows, live.windows, unit=WINDOWS, session_var=session_var,
                session_df=session_df,
            )  # fmt: skip
        return difference(base.windows, live.windows, unit=WINDOWS, notes=(WITHIN_RUN,))
    raise TooFewWindows("the baseline point has neither 2 runs nor 2 windows")


def _one_new_run(
    runs: tuple[float, ...], new: float, session_var: float | None, session_df: float
) -> Difference:
    mean, se_mean, df, _ = log_mean(runs, RUNS)  # se_mean^2 = s^2 / n, df = n - 1
    n = len(runs)
    # The baseline mean's error s^2 / n and the new run's own s^2, on n - 1 df ...
    runs_se = se_mean * math.sqrt(1.0 + n)
    notes: tuple[str, ...] = ()
    if session_var is None:
        # ... and the stand-in: two session offsets of the runs' s^2, on the same df.
        se, notes = se_mean * math.sqrt(1.0 + 3.0 * n), (STAND_IN,)
    else:
        se, df = combine([(runs_se, df)], session_var, session_df)
    d = logs_of([new])[0] - mean
    return log_difference(d, se, df, n, 1, test=ONE_NEW_RUN, unit=RUNS, notes=notes)


@dataclass(frozen=True)
class PointVerdict:
    """One point's difference, its p-value Holm-adjusted over the points judged with it."""

    difference: Difference
    p_holm: float
    family: int  # the points judged together (1: the adjusted p is the raw one)

    @property
    def verdict(self) -> str:
        """Regression or improvement only when the adjusted p is under 5 %; with one
        point that is when its interval excludes no change (Difference.verdict)."""
        if self.p_holm >= 1.0 - CONFIDENCE:
            return NO_DIFFERENCE
        return REGRESSION if self.difference.ratio < 1.0 else IMPROVEMENT


def judge_points(
    points: Sequence[tuple[ScalingPoint, ScalingPoint]],
    session_sd_pct: float | None = None,
    session_df: float = math.inf,
) -> dict[int, PointVerdict]:
    """Every (baseline, live) point with an interval, by pair count, its verdict
    Holm-adjusted over all of them; a point without one (TooFewWindows) is left
    out of the family and of the result: it is shown, not judged."""
    judged: list[tuple[int, Difference]] = []
    for base, live in points:
        try:
            judged.append((live.pairs, point_difference(base, live, session_sd_pct, session_df)))
        except TooFewWindows:
            continue  # no interval: the Diff figure stands alone, uncoloured
    adjusted = holm([d.p_value for _, d in judged])
    return {
        pairs: PointVerdict(d, p, len(judged))
        for (pairs, d), p in zip(judged, adjusted, strict=True)
    }
