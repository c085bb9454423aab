"""Total ops/s against pair count: settled points, the ideal line, scalability %.

A load workload (hackbench's groups, chat's rooms) is drawn as rate by load
on its fixed CPUs: the ideal is flat at the lightest load's rate (a constant
cost per message) and the percentage is hold % (analysis/load_curve.py).

The chart is redrawn only when a point changes, not on every sample:
plotext builds the whole picture each time it renders.
"""

from __future__ import annotations

import textwrap
import time

from rich.text import Text
from textual.app import ComposeResult, RenderResult
from textual.containers import Vertical
from textual_plotext import PlotextPlot

from ...analysis.load_curve import flat_line, hold_pct
from ...analysis.point_diff import PointVerdict
from ...analysis.scaling import ScalingPoint, above_linear, ideal_line, scalability_pct
from ...analysis.settle import FALLING, RISING
from ...engine.latency import format_ns
from ...live.baseline import Baseline
from ...live.session import Session
from .baseline_overlay import diff_cell, diff_style, plot_baseline
from .chart_lines import IDEAL, MEASURED, LegendOut, draw_interval, line, pm
from .compare_chart import comparison_table, draw_others, extent
from .spark import si
from .text_block import TextBlock

TABLE_ROWS = 5
MIN_PLOT = (24, 6)  # columns, rows under which the chart says so instead
SETTLING_REDRAW = 2.0  # seconds between redraws while only a settling point moves
LEGEND_ROWS = 12  # a plot lower than this has its legend under it, not over the points
COMPACT_WIDTH = 38  # a table narrower than this drops the spaces that would cut its last column


class ScalingPlot(PlotextPlot):
    """A plot whose y ticks fit its height at render time.

    Given more ticks than rows, plotext drops colliding ones in no stable
    order, so the count is chosen from the size the plot is drawn at.
    """

    y_top: float | None = None

    def render(self) -> RenderResult:
        w, h = self.size
        if w < MIN_PLOT[0] or h < MIN_PLOT[1]:
            # plotext divides by the room it has: too little, and it raises.
            return Text(f"chart needs {MIN_PLOT[0]}x{MIN_PLOT[1]}, has {w}x{h}", "italic")
        if self.y_top:
            rows = max(0, h - 3)  # the x axis, its ticks and its label
            n = max(2, min(5, rows // 2 + 1))
            ticks = [self.y_top * i / (n - 1) for i in range(n)]
            self.plt.yticks(ticks, [si(t) for t in ticks])
        return super().render()


class ScalingPanel(Vertical):
    DEFAULT_CSS = """
    ScalingPanel > PlotextPlot { height: 1fr; min-height: 6; }
    ScalingPanel > #scaling-table {
        height: 1; max-height: 8; text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._drawn: tuple[object, ...] | None = None  # what the chart shows: a key
        self._drawn_at = 0.0
        self.baseline: Baseline | None = None
        self.metric = "ops"  # or "p99": the round trip's p99 by pairs (key P)
        self.default_subtitle = ""  # the bottom edge when the legend is in the plot
        self.baseline_label = ""  # what the baseline differs in (Baseline.label_for)
        self._last: tuple[Session, int | None] | None = None
        self.unit: str | None = None  # a load workload's unit: flat ideal, hold %

    def compose(self) -> ComposeResult:
        yield ScalingPlot(id="scaling-plot")
        yield TextBlock(id="scaling-table", fit_height=True)

    def update_from(self, session: Session, settling_pairs: int | None) -> None:
        self._last = (session, settling_pairs)
        if session.unit != self.unit:
            self.unit = session.unit
            self._drawn = None
            self.default_subtitle = self.border_subtitle = (
                f"messages/s by {self.unit}s, on fixed CPUs"
                if self.unit
                else "total ops/s by pairs"
            )
        if self.metric == "p99":
            self._update_p99(session)
            return
        points = session.points()
        state = session.settle_state if settling_pairs else None
        settled = tuple((p.pairs, p.total_ops_per_s) for p in points if p.settled)
        moving = tuple((p.pairs, p.total_ops_per_s) for p in points if not p.settled)
        compared = session.compared()
        others = tuple(
            (n, tuple((p.pairs, p.total_ops_per_s) for p in c)) for n, c in compared.items()
        )
        replaced = {p.pairs: session.curve.replaced(p.pairs) for p in points}
        replaced = {n: k for n, k in replaced.items() if k}
        key = (settled, moving, state, others, tuple(replaced.items()))
        if key == self._drawn:
            return
        # A settling reading moves every sample; redraw it at a calmer pace.
        now = time.monotonic()
        drawn = self._drawn
        calm = drawn is not None and drawn[0] == settled and drawn[2:] == key[2:]
        if calm and now - self._drawn_at < SETTLING_REDRAW:
            return
        self._drawn, self._drawn_at = key, now
        name = session.workload or "this run"
        legend = self._draw(points, compared, name)
        if self.size.height > 0 and self.query_one(ScalingPlot).size.height == 0:
            # Drawn before the plot had its size: whether the legend fits in it is not
            # known yet, so draw again once it has one.
            self._drawn = None
            self.call_after_refresh(self._update_last)
        width = self.content_size.width or 10_000
        table = (
            comparison_table(name, points, compared)
            if compared
            else _table(points, settling_pairs, state, self.baseline, replaced, width, self.unit)
        )
        # A low plot's legend takes the panel's bottom edge: no table row is lost to it.
        subtitle = _legend(legend) if legend else self.default_subtitle
        if subtitle != self.border_subtitle:
            self.border_subtitle = subtitle
        self.query_one("#scaling-table", TextBlock).show(table)

    def _update_p99(self, session: Session) -> None:
        curve = tuple(session.p99_curve())
        key = ("p99", curve)
        if key == self._drawn:
            return
        self._drawn = key
        plot = self.query_one(ScalingPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        plot.y_top = None
        table = self.query_one("#scaling-table", TextBlock)
        if not curve:
            plt.title("no timed rounds (the Python engine, or an untimed workload)")
            plot.refresh()
            table.show(Text(""))
            return
        xs = [n for n, _ in curve]
        ys = [v / 1e3 for _, v in curve]
        plt.plot(xs, ys, label="round trip p99 (µs)", color="blue+", marker="hd")
        plt.xlim(min(xs) - 0.5, max(xs) + 0.5)
        plt.ylim(0, max(ys) * 1.15)
        plt.xticks(list(range(min(xs), max(xs) + 1)))
        plot.refresh()
        lines = [Text(f"{'pairs':>5} {'rtt p99':>9}", "bold")]
        lines += [Text(f"{n:>5} {format_ns(v):>9}") for n, v in curve[-TABLE_ROWS:]]
        table.show(Text("\n").join(lines))

    def redraw(self) -> None:
        """Draw again with the same points (after a theme change or a resize)."""
        self._drawn = None

    def set_baseline(self, baseline: Baseline | None) -> None:
        """Overlay a record's curve and add a Diff [%] column (None removes them)."""
        self.baseline = baseline
        self._drawn = None

    def name_baseline(self, label: str) -> None:
        """The baseline's legend, named by what differs from the run shown (changes on restarts)."""
        if label != self.baseline_label:
            self.baseline_label = label
            self._drawn = None

    def on_resize(self) -> None:
        self._drawn = None
        # Drawn again at the new size even when no sample comes (a replay that ended):
        # whether the legend fits in the plot depends on it.
        if self._last is not None:
            self.call_after_refresh(self._update_last)

    def _update_last(self) -> None:
        if self._last is not None and self._drawn is None:
            self.update_from(*self._last)

    def _draw(
        self, points: list[ScalingPoint], compared: dict[str, list[ScalingPoint]], name: str
    ) -> list[tuple[str, str]]:
        """Draw the chart; the legend's entries when they go under it (a low plot)."""
        plot = self.query_one(ScalingPlot)
        plot.plt.clear_data()
        plot.plt.clear_figure()
        plot.y_top = None
        low = 0 < plot.size.height < LEGEND_ROWS
        out = LegendOut(plot.plt) if low else None
        plt = out if out is not None else plot.plt
        if not points and not compared and (self.baseline is None or not self.baseline.points):
            plt.title("waiting for a settled reading")
            plot.refresh()
            return []
        other_xs, other_top = extent(compared)
        xs = [p.pairs for p in points] + other_xs
        top = max([p.total_ops_per_s for p in points] + [other_top])
        draw_others(plt, compared)
        if self.baseline is not None:
            base_xs, base_top = plot_baseline(plt, self.baseline, self.baseline_label)
            xs, top = xs + base_xs, max(top, base_top)
        ideal = flat_line(points) if self.unit else ideal_line(points)
        if ideal:
            top = max(top, max(y for _, y in ideal))
            what = "ideal: flat cost per message" if self.unit else "ideal N x total(1)"
            line(plt, [x for x, _ in ideal], [y for _, y in ideal], IDEAL, what, "○")
        pct = hold_pct if self.unit else scalability_pct
        settled = [p for p in points if p.settled]
        for p in settled:
            top = max(top, draw_interval(plt, p, MEASURED))
        if settled:
            label = name if compared else "measured"
            line(
                plt,
                [p.pairs for p in settled],
                [p.total_ops_per_s for p in settled],
                MEASURED,
                label,
                "●",
            )
        moving = [p for p in points if not p.settled]
        if moving:
            plt.scatter(
                [p.pairs for p in moving],
                [p.total_ops_per_s for p in moving],
                label="settling",
                color="orange",
                marker="x",
            )
        for p in points:
            scal = pct(points, p.pairs)
            label = "settling" if not p.settled else ("" if scal is None else f"{scal:.0f}%")
            if low and not p.settled:
                label = ""  # the legend under the plot says what x is; a word here covers it
            if label:
                plt.text(label, p.pairs, p.total_ops_per_s * 1.06, alignment="center", color="red+")
        lo, hi = min(xs), max(xs)
        top = max(top, 1.0)  # all zeros (a stalled start): plotext divides by the y range
        plt.xlim(lo - 0.5, hi + 0.5)
        top = max(top, 1.0)  # every reading 0 (pairs not started yet): plotext divides by it
        plt.ylim(0, top * 1.15)
        plot.y_top = top * 1.15
        plt.xticks(list(range(lo, hi + 1)))
        plt.xlabel(f"{self.unit}s" if self.unit else "pairs")
        plt.ylabel("messages/s" if self.unit else "total ops/s")
        plot.refresh()
        return out.entries if out is not None else []


#: the legend under a low plot has a panel's bottom edge, not a box: shorter words
SHORT = {"ideal N x total(1)": "ideal"}


def _legend(entries: list[tuple[str, str]]) -> str:
    return " ".join(f"{marker} {SHORT.get(label, label)}" for marker, label in entries)


def _table(
    points: list[ScalingPoint],
    settling_pairs: int | None,
    state: str | None,
    baseline: Baseline | None = None,
    replaced: dict[int, int] | None = None,
    width: int = 10_000,
    unit: str | None = None,
) -> Text:
    """The seeds' table: pairs, total, scalability % (Diff % against a baseline);
    for a load workload: groups or rooms, messages/s, hold %.

    Under it, a line for what the rows alone would hide: a scalability above
    linear (with its interval) and a revisit that replaced an earlier reading.
    """
    diff_head = f" {'diff %':>7}" if baseline is not None else ""
    # Narrow (80 columns with a side panel): the same columns, closer, so none is cut.
    heads = (f"{unit}s", "msgs/s", "hold %") if unit else ("pairs", "ops/s", "scal %")
    first = 6 if unit else 5  # "groups" and "rooms" fit
    w = (2, 8, 4, 6) if width < COMPACT_WIDTH + len(diff_head) else (first, 9, 5, 7)
    name = "n" if w[0] < 5 else heads[0]
    lines = [
        Text(
            f"{name:>{w[0]}} {heads[1]:>{w[1]}} {'± %':>{w[2]}} {heads[2]:>{w[3]}}{diff_head}",
            "bold",
        )  # fmt: skip
    ]
    # Judged together, once per table: each cell's colour is Holm-adjusted over all of them.
    verdicts: dict[int, PointVerdict] = baseline.verdicts(points) if baseline is not None else {}
    for p in points[-TABLE_ROWS:]:
        scal = (hold_pct if unit else scalability_pct)(points, p.pairs)
        note = "settled" if p.settled else "settling"
        if not p.settled and p.pairs == settling_pairs and state in (RISING, FALLING):
            note = state  # a rate that climbs or falls says so: it will not settle as it is
        pct = "-" if scal is None else f"{scal:.1f}"
        row = Text(
            f"{p.pairs:>{w[0]}} {si(p.total_ops_per_s):>{w[1]}} {pm(p):>{w[2]}} {pct:>{w[3]}}"
        )
        if baseline:
            row.append(" ")
            row.append(f"{diff_cell(baseline, p.pairs, p.total_ops_per_s):>7}",
                       diff_style(verdicts.get(p.pairs)))  # fmt: skip
        row.append(f" {note}")
        lines.append(row)
    # The lines under the rows wrap at the panel's width rather than end in "…".
    if not points:
        lines += _wrapped("no reading yet: " + (state or "no pairs running"), width)
    settled = [p for p in points if p.settled] if not unit else []  # linear is no load's ideal
    for p in settled:
        above = above_linear(settled, p.pairs, short=True)
        if above is not None:
            lines += _wrapped(f"! {p.pairs} pairs {above}", width, "bold")
    for n, k in sorted((replaced or {}).items()):
        visits = "visit" if k == 1 else "visits"
        said = f"{n} {unit or 'pair'}s: last visit differed, replaced {k} earlier {visits}"
        lines += _wrapped(said, width)
    return Text("\n").join(lines)


def _wrapped(text: str, width: int, style: str = "") -> list[Text]:
    return [Text(t, style) for t in textwrap.wrap(text, width, subsequent_indent="  ") or [""]]
