"""main's methods that a branch changed, for draw_cost.py --compare.

Each is the code as it was, line for line (rows, feed: 7bf5415, branch
drawing; settle: 8953a6a, branch frames), or the old behaviour in the new
code's place (pace: 8953a6a, whose tables took every sample); draw_cost.py puts them back on the
class for the A side of a block and this branch's for the B side.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from textual.strip import Strip
from textual.widget import Widget

from ipctop.analysis.autocorr import SeriesMemory, slope_se
from ipctop.analysis.settle import TREND_MIN_PCT, Settler
from ipctop.analysis.stats import logs_of, t_quantile
from ipctop.engine.latency import whole
from ipctop.live.session import P99_SAMPLES, Session, _peaks_of
from ipctop.live.thread_table import thread_key
from ipctop.tui.widgets.rows_view import RowsView
from ipctop.tui.widgets.table_pace import Pace, TablePace


def rows_render_line(self: Any, y: int) -> Strip:
    frame = self._frame_now()
    if frame == self._frame and y < len(self._lines):
        line = self._lines[y]
    else:
        line = self._line(y, frame)
    width = frame[0]
    if line is None:
        return Strip.blank(width, self._style(None, None))
    pieces, row_style = line
    segments = [Segment(text, self._style(name, row_style)) for text, name in pieces if text]
    used = sum(len(t) if t.isascii() else cell_len(t) for t, _, _ in segments)
    if used > width:
        return Strip(segments).crop_extend(0, width, self._style(None, row_style))
    if used < width:
        segments.append(Segment(" " * (width - used), self._style(None, row_style)))
    return Strip(segments, width)


def rows_render_lines(self: Any, crop: Any) -> list[Strip]:
    return Widget.render_lines(self, crop)  # looked up now: draw_cost.py counts its calls


def session_feed(self: Any, sample: Any) -> None:
    self.latest = sample
    self.count += 1
    seen = set()
    peak = 0.0
    for t in sample.threads:
        key = thread_key(t)
        seen.add(key)
        self.threads.setdefault(key, deque(maxlen=self.history)).append(t.ops_per_s)
        if t.ops_per_s > peak:
            peak = t.ops_per_s
    gone = [k for k in self.threads if k not in seen]
    for key in gone:
        del self.threads[key]
    if gone:
        self._rebuild_peaks()
    else:
        self._peaks.append(peak)
    for c in sample.cpus:
        self.cpu_busy.setdefault(c.cpu, deque(maxlen=self.history)).append(c.busy)
    self.ctxt.append(sample.ctxt_per_s or 0.0)
    self.totals.append(sample.total_ops_per_s)
    self.events.extend(sample.events)
    if self.units is not None:
        self.units.feed(sample)
    self._feed_latency(sample)
    self._settle(sample)


def session_feed_latency(self: Any, sample: Any) -> None:
    seen = set()
    peak = 0.0
    for reading in sample.latency:
        pair, p99 = reading.pair, reading.rtt.p99
        if pair < 0:
            continue
        seen.add(pair)
        hist = self.latency_p99.setdefault(pair, deque(maxlen=self.history))
        value = float(p99) if p99 is not None else 0.0
        hist.append(value)
        peak = max(peak, value)
    gone = [p for p in self.latency_p99 if p not in seen]
    for pair in gone:
        del self.latency_p99[pair]
    if gone:
        self._p99_peaks = _peaks_of(self.latency_p99.values(), self.history)
    elif seen:
        self._p99_peaks.append(peak)
    every = whole(sample.latency)
    p99 = every.rtt.p99 if every is not None else None
    if p99 is not None and sample.pairs > 0:
        self.p99_by_pairs.setdefault(sample.pairs, deque(maxlen=P99_SAMPLES)).append(p99)


def pace_every_sample(self: Any, session: Any, interval: float) -> Pace:
    """8953a6a: the threads and switches tables took every sample, at any size."""
    return Pace(None, session.count)


def settler_trend_pct(self: Any) -> float | None:
    if len(self._window) < 4:
        return None
    ts = [e for _, e, _ in self._window]
    logs = logs_of(self.values)
    b, se, df = slope_se(ts, logs, self.r)
    if b == 0.0:
        return None
    half = t_quantile(df, 0.95) * se
    if abs(b) <= half:
        return None
    change = 100.0 * math.expm1(b * (ts[-1] - ts[0]))
    return change if abs(change) >= TREND_MIN_PCT else None


def settler_settled(self: Any) -> bool:
    cv = self.cv
    if cv is None or cv >= self.cv_max or not self.window_full:
        return False
    half = self.half_width_pct
    return half is not None and half <= self.ci_max_pct and self.trend_pct is None


def memory_point_r(self: Any) -> tuple[float, int] | None:
    return SeriesMemory._point_r(self)  # main's body, walked on every ask


#: variant -> (class, method, main's function); --compare puts back the ones named
BEFORE: dict[str, list[tuple[type, str, Any]]] = {
    "rows": [
        (RowsView, "render_line", rows_render_line),
        (RowsView, "render_lines", rows_render_lines),
    ],
    "feed": [
        (Session, "feed", session_feed),
        (Session, "_feed_latency", session_feed_latency),
    ],
    "pace": [(TablePace, "pace", pace_every_sample)],
    "settle": [
        (Settler, "trend_pct", property(settler_trend_pct)),
        (Settler, "settled", property(settler_settled)),
        (SeriesMemory, "point_r", memory_point_r),
    ],
}
