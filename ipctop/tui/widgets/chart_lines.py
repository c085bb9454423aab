"""How one curve is drawn on the scaling chart: a line, markers, intervals.

plotext draws a line in the marker's character; braille dots make a thin,
continuous line, and the measured points get a marker of their own on top,
so a reader sees where the data is and where the line only joins it.
"""

from __future__ import annotations

from typing import Any

from ...analysis.scaling import ScalingPoint

MEASURED = "blue+"
IDEAL = "gray"


def line(plt: Any, xs: list[int], ys: list[float], color: str, label: str, marker: str) -> None:
    """A braille line through the points, and a marker at each point (one legend entry)."""
    if not xs:
        return  # plotext fails on an empty series (a baseline without a curve)
    if len(xs) > 1:
        plt.plot(xs, ys, color=color, marker="braille")
    plt.scatter(xs, ys, color=color, marker=marker, label=label)


class LegendOut:
    """A plotext figure whose legend is kept out of the plot, for a line of its own.

    At a few rows plotext's legend box covers the points and their labels
    ("measur203%"); below LEGEND_ROWS the panel shows these entries under the
    chart instead. Everything but the labels goes to the figure unchanged.
    """

    def __init__(self, plt: Any) -> None:
        self._plt = plt
        self.entries: list[tuple[str, str]] = []  # (marker, label)

    def scatter(self, *args: Any, label: str | None = None, **kwargs: Any) -> None:
        if label:
            self.entries.append((str(kwargs.get("marker", "")), label))
        self._plt.scatter(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._plt, name)


def interval(p: ScalingPoint) -> tuple[float, float] | None:
    """The point's 95 % interval, when its windows give one."""
    s = p.summary
    if s.low is None or s.high is None:
        return None
    return s.low, s.high


def draw_interval(plt: Any, p: ScalingPoint, color: str) -> float:
    """A vertical bar from the interval's low to its high; returns the top it reaches."""
    span = interval(p)
    if span is None:
        return p.total_ops_per_s
    low, high = span
    plt.plot([p.pairs, p.pairs], [low, high], color=color, marker="│")
    return high


def pm(p: ScalingPoint) -> str:
    """The table's "± %": half the 95 % interval in % of the figure, or "-"."""
    half = p.summary.half_width_pct
    if half is None:
        return "-"
    return f"{half:.1f}" if half < 10 else f"{half:.0f}"
