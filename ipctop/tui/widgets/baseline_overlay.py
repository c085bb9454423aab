"""The baseline's pieces of the scaling panel: its curve on the chart, its Diff [%] cells."""

from __future__ import annotations

from typing import Any

from ...analysis.scaling import ScalingPoint
from ...analysis.stats import IMPROVEMENT, REGRESSION, TooFewWindows
from ...live.baseline import Baseline
from .chart_lines import line

COLOR = "magenta+"


def plot_baseline(plt: Any, baseline: Baseline, label: str = "") -> tuple[list[int], float]:
    """Draw the baseline curve on a plotext figure; returns its pair counts and its top."""
    xs = [p.pairs for p in baseline.points]
    ys = [p.total_ops_per_s for p in baseline.points]
    line(plt, xs, ys, COLOR, label or baseline.label, "◆")
    return xs, max(ys, default=0.0)


def diff_cell(baseline: Baseline | None, pairs: int, live_total: float) -> str:
    """The Diff [%] cell of one table row: signed, one decimal; "-" without a baseline point."""
    if baseline is None:
        return ""
    d = baseline.diff_at(pairs, live_total)
    return "-" if d is None else f"{d:+.1f}"


def diff_style(baseline: Baseline | None, point: ScalingPoint) -> str:
    """Colour for the Diff cell: only when the 95 % interval of live/baseline
    excludes zero (red slower, green faster); plain text otherwise."""
    if baseline is None:
        return ""
    theirs = next((p for p in baseline.points if p.pairs == point.pairs), None)
    if theirs is None or not point.settled:
        return ""
    try:
        verdict = baseline.difference(theirs, point).verdict
    except TooFewWindows:
        return ""
    return {REGRESSION: "bold red", IMPROVEMENT: "bold green"}.get(verdict, "")
