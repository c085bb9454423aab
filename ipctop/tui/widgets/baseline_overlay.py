"""The baseline's pieces of the scaling panel: its curve on the chart, its Diff [%] cells."""

from __future__ import annotations

from typing import Any

from ...analysis.point_diff import PointVerdict
from ...analysis.stats import IMPROVEMENT, REGRESSION
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


def diff_style(verdict: PointVerdict | None) -> str:
    """Colour for the Diff cell: only when the point's verdict, Holm-adjusted over
    every point judged against the baseline (Baseline.verdicts), is a change (red
    slower, green faster); plain text otherwise and for a point not judged."""
    if verdict is None:
        return ""
    return {REGRESSION: "bold red", IMPROVEMENT: "bold green"}.get(verdict.verdict, "")
