"""main's methods that a branch changed, for draw_cost.py --compare.

Each is the code as it was, line for line (rows: 7bf5415, branch
drawing; settle: 8953a6a, branch frames; columns: 39e3cbc, branch feed), or
the old behaviour in the new code's place (pace: 8953a6a, whose tables took
every sample); draw_cost.py puts them back on the class for the A side of a
block and this branch's for the B side.

columns (issue 29: a deque per thread and per pair, the threads sorted and
walked each sample) keeps main's state beside the branch's, in attributes of
its own (_a_*, made on first use), so each side feeds and reads its own
histories; only the attribute names differ from main's lines. The older feed
variant (7bf5415's setdefault) is gone with the dict of deques it fed.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from itertools import islice
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from textual.strip import Strip
from textual.widget import Widget

from ipctop.analysis.autocorr import SeriesMemory, slope_se
from ipctop.analysis.settle import TREND_MIN_PCT, Settler
from ipctop.analysis.stats import logs_of, t_quantile
from ipctop.engine.latency import whole
from ipctop.live.session import P99_SAMPLES, Session, _append
from ipctop.live.thread_table import IMBALANCE, ThreadTable, thread_key
from ipctop.tui.widgets.latency_panel import LatencyPanel
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


def _a(self: Any) -> Any:
    """main's per-thread state on this session, made on first use (see the docstring)."""
    if "_a_threads" not in self.__dict__:
        self._a_threads = {}
        self._a_peaks = deque(maxlen=self.history)
        self._a_latency_p99 = {}
        self._a_p99_peaks = deque(maxlen=self.history)
        self._a_sorted = (None, [], 0.0)
    return self


def session_feed(self: Any, sample: Any) -> None:
    a = _a(self)
    self.latest = sample
    self.count += 1
    seen = set()
    peak = 0.0
    threads = a._a_threads
    for t in sample.threads:
        key = thread_key(t)
        seen.add(key)
        _append(threads, key, t.ops_per_s, self.history)
        if t.ops_per_s > peak:
            peak = t.ops_per_s
    gone = [k for k in a._a_threads if k not in seen]
    for key in gone:
        del a._a_threads[key]
    if gone:
        a._a_peaks = _peaks_of(a._a_threads.values(), self.history)
    else:
        a._a_peaks.append(peak)
    for c in sample.cpus:
        _append(self.cpu_busy, c.cpu, c.busy, self.history)
    self.ctxt.append(sample.ctxt_per_s or 0.0)
    self.totals.append(sample.total_ops_per_s)
    self.events.extend(sample.events)
    if self.units is not None:
        self.units.feed(sample)
    self._feed_latency(sample)
    self._settle(sample)


def session_feed_latency(self: Any, sample: Any) -> None:
    a = _a(self)
    seen = set()
    peak = 0.0
    for reading in sample.latency:
        pair, p99 = reading.pair, reading.rtt.p99
        if pair < 0:
            continue
        seen.add(pair)
        value = float(p99) if p99 is not None else 0.0
        _append(a._a_latency_p99, pair, value, self.history)
        peak = max(peak, value)
    gone = [p for p in a._a_latency_p99 if p not in seen]
    for pair in gone:
        del a._a_latency_p99[pair]
    if gone:
        a._a_p99_peaks = _peaks_of(a._a_latency_p99.values(), self.history)
    elif seen:
        a._a_p99_peaks.append(peak)
    every = whole(sample.latency)
    p99 = every.rtt.p99 if every is not None else None
    if p99 is not None and sample.pairs > 0:
        self.p99_by_pairs.setdefault(sample.pairs, deque(maxlen=P99_SAMPLES)).append(p99)


def session_thread_table(self: Any) -> ThreadTable:
    a = _a(self)
    s = self.latest
    if s is None:
        return ThreadTable((), 0.0, 0.0, a._a_threads)
    if a._a_sorted[0] is not s:
        running = [t.ops_per_s for t in s.threads if t.state == "running"]
        median = statistics.median(running) if running else 0.0
        a._a_sorted = (s, sorted(s.threads, key=lambda t: (t.pair, t.role)), median)
    _, threads, median = a._a_sorted
    return ThreadTable(threads, median, s.total_ops_per_s, a._a_threads)


def session_thread_scale(self: Any, width: int) -> float:
    peaks = _a(self)._a_peaks
    recent = islice(reversed(peaks), width) if width > 0 else peaks
    return max(recent, default=0.0)


def session_latency_scale(self: Any, width: int) -> float:
    peaks = _a(self)._a_p99_peaks
    recent = islice(reversed(peaks), width) if width > 0 else peaks
    return max(recent, default=0.0)


def session_pair_cpus(self: Any) -> set[int]:
    s = self.latest
    if s is None:
        return set()
    out = set()
    for t in s.threads:
        cpu = t.bound_cpu if t.bound_cpu is not None else t.last_cpu
        if cpu is not None:
            out.add(cpu)
    return out


def _peaks_of(histories: Any, history: int) -> deque[float]:
    histories = list(histories)
    longest = max((len(h) for h in histories), default=0)
    peaks = [0.0] * longest
    for h in histories:
        offset = longest - len(h)
        for i, v in enumerate(h, offset):
            if v > peaks[i]:
                peaks[i] = v
    return deque(peaks, maxlen=history)


def table_imbalanced(self: Any) -> int:
    if self.median <= 0:
        return 0
    limit = IMBALANCE * self.median
    return sum(
        1 for t in self.threads if t.state == "running" and abs(t.ops_per_s - self.median) > limit
    )


def table_off_cpu(self: Any) -> int:
    return sum(1 for t in self.threads if t.off_cpu)


def latency_update_from(self: Any, session: Any, why_not: str = "") -> None:
    s = session.latest
    readings = s.latency if s is not None else ()
    if not readings:
        self._rows = []
        self._note = why_not or "these samples carry no latency"
    else:
        self._rows = list(readings)
        self._note = ""
    self._sparks = _a(session)._a_latency_p99
    self._top = session.latency_scale(24)
    pairs = [p.pair for p in self._rows if p.pair >= 0]
    if pairs and self.selected not in pairs:
        self.selected = pairs[0]
    self.border_subtitle = f"h: histogram of pair {self.selected}" if pairs else ""
    self.changed()


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
    "columns": [
        (Session, "feed", session_feed),
        (Session, "_feed_latency", session_feed_latency),
        (Session, "thread_table", session_thread_table),
        (Session, "thread_scale", session_thread_scale),
        (Session, "latency_scale", session_latency_scale),
        (Session, "pair_cpus", session_pair_cpus),
        (ThreadTable, "imbalanced", table_imbalanced),
        (ThreadTable, "off_cpu", table_off_cpu),
        (LatencyPanel, "update_from", latency_update_from),
    ],
    "pace": [(TablePace, "pace", pace_every_sample)],
    "settle": [
        (Settler, "trend_pct", property(settler_trend_pct)),
        (Settler, "settled", property(settler_settled)),
        (SeriesMemory, "point_r", memory_point_r),
    ],
}
