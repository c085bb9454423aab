"""One pair's latency histogram over the last reading (key h), drawn with plotext.

The buckets are the ends' own (0.8 % wide, see engine/latency.py), grouped
onto a log axis for the terminal. Read live from the ends: a replayed record
carries percentiles only.
"""

from __future__ import annotations

import math

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static
from textual_plotext import PlotextPlot

from ...engine.latency import format_ns

BINS = 48


def log_bins(points: list[tuple[float, int]], bins: int = BINS) -> list[tuple[float, int]]:
    """(value, count) grouped onto `bins` equal steps of log(value)."""
    points = [(v, c) for v, c in points if v > 0 and c > 0]
    if not points:
        return []
    lo, hi = math.log(points[0][0]), math.log(points[-1][0])
    if hi <= lo:
        return [(points[0][0], sum(c for _, c in points))]
    step = (hi - lo) / bins
    out = [0] * bins
    for v, c in points:
        out[min(bins - 1, int((math.log(v) - lo) / step))] += c
    return [(math.exp(lo + (i + 0.5) * step), c) for i, c in enumerate(out)]


class HistogramScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,h,q", "dismiss", "close")]

    DEFAULT_CSS = """
    HistogramScreen { align: center middle; }
    HistogramScreen > Vertical {
        width: 90%; height: 80%; border: thick $primary; background: $surface;
    }
    HistogramScreen PlotextPlot { height: 1fr; }
    """

    def __init__(self, title: str, series: dict[str, list[tuple[float, int]]], note: str) -> None:
        super().__init__()
        self._title = title
        self._series = series
        self._note = note

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._note)
            yield PlotextPlot()

    def on_mount(self) -> None:
        plot = self.query_one(PlotextPlot)
        plt = plot.plt
        plt.clear_figure()
        plt.title(self._title)
        labels = []
        for name, points in self._series.items():
            binned = log_bins(points)
            if not binned:
                continue
            xs = [math.log10(v) for v, _ in binned]
            plt.bar(xs, [c for _, c in binned], label=name, width=0.8 * (xs[1] - xs[0])
                    if len(xs) > 1 else 0.1)  # fmt: skip
            labels += [v for v, _ in binned]
        if labels:
            lo, hi = math.log10(min(labels)), math.log10(max(labels))
            ticks = [lo + (hi - lo) * i / 5 for i in range(6)]
            plt.xticks(ticks, [format_ns(10**t) for t in ticks])
        plt.xlabel("latency (log scale)")
        plt.ylabel("rounds")
        plot.refresh()
