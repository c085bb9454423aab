"""What the app remembers between samples: histories, the settle state, the curve.

No Textual here: the widgets read a Session, the tests feed one directly.
Time comes from the samples (Sample.t), never from the wall clock, so a fixed
list of samples always produces the same picture.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Iterable
from itertools import islice
from typing import NamedTuple, TypeVar

from ..analysis.scaling import ScalingCurve, ScalingPoint, above_linear, scalability_pct
from ..analysis.settle import SETTLED, Settler
from ..engine.latency import whole
from ..engine.sample import Sample, ThreadSample
from ..engine.workloads import load_unit
from .thread_table import ThreadKey, ThreadRow, ThreadTable, thread_key
from .unit_rows import UnitHistory

P99_SAMPLES = 20  # the p99 curve's point at a pair count: the median of this many samples

#: samples of history kept per row; a sparkline never gets wider than this
HISTORY = 512


_K = TypeVar("_K")


class Headline(NamedTuple):
    """The header's figures, each with where it comes from, so that the header,
    the table and the chart show one value per figure or say why two differ."""

    now: float | None  # the last sample's total (one sampler interval)
    settled: ScalingPoint | None  # the table's settled point at the current pair count
    scal: float | None  # scalability % of the settled point, else of the settling window
    scal_settled: bool  # scal is the table's figure (else a settling window's)
    scal_none: str  # why there is no scal ("" when there is one)
    above: str | None  # a scal above linear, named with its interval


class Session:
    def __init__(self, history: int = HISTORY, workload: str | None = None) -> None:
        self.history = history
        self.workload = workload  # names this run's curve in a comparison
        #: "group" or "room" for a load workload: its rows are units, its ideal flat
        self.unit = load_unit(workload)
        self.units = UnitHistory(history) if self.unit else None
        self.latest: Sample | None = None
        self._sorted: tuple[Sample | None, list[ThreadSample], float] = (None, [], 0.0)
        self.count = 0
        self.threads: dict[ThreadKey, deque[float]] = {}
        # Per sample, the highest ops/s of any thread still shown: the shared
        # sparkline ceiling without walking 512 histories on every redraw.
        self._peaks: deque[float] = deque(maxlen=history)
        self.cpu_busy: dict[int, deque[float]] = {}
        self.ctxt: deque[float] = deque(maxlen=history)
        self.totals: deque[float] = deque(maxlen=history)
        self.settler = Settler()
        self.curve = ScalingCurve()
        #: curves of mechanisms measured earlier in this session (keys w and W), by name
        self.others: dict[str, ScalingCurve] = {}
        self._visit: int | None = None  # pair count of the current visit
        self._recorded = False  # its settled reading is in the curve
        self.events: deque[str] = deque(maxlen=50)
        #: per pair: the round trip's p99 per sample (ns), for the latency panel's sparkline
        self.latency_p99: dict[int, deque[float]] = {}
        self._p99_peaks: deque[float] = deque(maxlen=history)  # as _peaks, for latency_p99
        #: per pair count: all pairs' round-trip p99 per sample (ns), the p99 curve
        self.p99_by_pairs: dict[int, deque[float]] = {}

    # -- input -----------------------------------------------------------------
    def feed(self, sample: Sample) -> None:
        self.latest = sample
        self.count += 1
        seen = set()
        peak = 0.0
        threads = self.threads
        for t in sample.threads:
            key = thread_key(t)
            seen.add(key)
            _append(threads, key, t.ops_per_s, self.history)
            if t.ops_per_s > peak:
                peak = t.ops_per_s
        gone = [k for k in self.threads if k not in seen]
        for key in gone:
            del self.threads[key]
        if gone:
            self._rebuild_peaks()  # a removed thread's past must not hold the ceiling up
        else:
            self._peaks.append(peak)
        for c in sample.cpus:
            _append(self.cpu_busy, c.cpu, c.busy, self.history)
        self.ctxt.append(sample.ctxt_per_s or 0.0)
        self.totals.append(sample.total_ops_per_s)
        self.events.extend(sample.events)
        if self.units is not None:
            self.units.feed(sample)
        self._feed_latency(sample)
        self._settle(sample)

    def _feed_latency(self, sample: Sample) -> None:
        seen = set()
        peak = 0.0
        for reading in sample.latency:
            pair, p99 = reading.pair, reading.rtt.p99
            if pair < 0:
                continue
            seen.add(pair)
            value = float(p99) if p99 is not None else 0.0
            _append(self.latency_p99, pair, value, self.history)
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

    def p99_curve(self) -> list[tuple[int, float]]:
        """(pairs, median round-trip p99 in ns) over the recent samples at each count."""
        return [(n, statistics.median(xs)) for n, xs in sorted(self.p99_by_pairs.items()) if xs]

    def _settle(self, sample: Sample) -> None:
        if not sample.rate_sample:
            return  # a stalled window (engine/stalls.py) is not a rate sample
        self.settler.feed_sample(sample)
        if sample.pairs != self._visit:
            self._visit, self._recorded = sample.pairs, False
        reading = self.settler.reading
        if sample.pairs < 1 or reading is None or self._recorded:
            return
        if self.settler.settled:
            self.curve.add(sample.pairs, reading, settled=True, windows=self.settler.values)
            self._recorded = True
        else:
            self.curve.add(sample.pairs, reading, settled=False)

    def carry_curves(self, old: Session) -> None:
        """After a workload switch: keep every mechanism's curve, resume this one's.

        Only the workload may differ between the two runs (same placement,
        mode and CPUs), or the curves would not compare; the caller checks.
        """
        others = dict(old.others)
        if old.workload is not None and old.workload != self.workload and len(old.curve):
            others[old.workload] = old.curve
        mine = others.pop(self.workload, None) if self.workload is not None else None
        if mine is not None:
            self.curve = mine
        self.others = others

    def compared(self) -> dict[str, list[ScalingPoint]]:
        """Settled points of the other mechanisms, in the order they were measured."""
        out = {}
        for name, curve in self.others.items():
            points = [p for p in curve.points() if p.settled]
            if points:
                out[name] = points
        return out

    def reset_curve(self) -> None:
        """Forget the scaling points of every mechanism (key r); the visit starts over too."""
        self.others.clear()
        self.curve.reset()
        self.settler.reset(None)
        self._visit, self._recorded = None, False

    # -- views -----------------------------------------------------------------
    @property
    def settle_state(self) -> str:
        return self.settler.state

    @property
    def settled(self) -> bool:
        return self.settler.state == SETTLED

    def points(self) -> list[ScalingPoint]:
        return self.curve.points()

    def scalability_now(self) -> float | None:
        """Current total against the 1-pair reading, as the seeds' tables put it."""
        s = self.latest
        if s is None or s.pairs < 1:
            return None
        pts = self.points()
        one = next((p for p in pts if p.pairs == 1), None)
        if one is None or one.total_ops_per_s <= 0:
            return None
        reading = self.settler.reading if self.settler.pairs == s.pairs else None
        now = reading if reading is not None else s.total_ops_per_s
        return 100.0 * now / one.total_ops_per_s

    def headline(self) -> Headline:
        s = self.latest
        if s is None:
            return Headline(None, None, None, False, "no sample yet", None)
        pts = self.points()
        here = next((p for p in pts if p.pairs == s.pairs and p.settled), None)
        if s.pairs < 2:
            # total(N)/total(1) at N = 1 is 100 % by definition: not a measurement.
            return Headline(s.total_ops_per_s, here, None, False, "at 1 pair there is none", None)
        if here is not None:
            scal = scalability_pct(pts, s.pairs)
            why = "" if scal is not None else "needs a 1-pair reading"
            return Headline(
                s.total_ops_per_s, here, scal, scal is not None, why, above_linear(pts, s.pairs)
            )
        now = self.scalability_now()
        why = "" if now is not None else "needs a 1-pair reading"
        return Headline(s.total_ops_per_s, None, now, False, why, None)

    def scalability_at(self, pairs: int) -> float | None:
        return scalability_pct(self.points(), pairs)

    def thread_table(self) -> ThreadTable:
        """The latest sample's threads, sorted, with the median and total a row needs."""
        s = self.latest
        if s is None:
            return ThreadTable((), 0.0, 0.0, self.threads)
        if self._sorted[0] is not s:  # sorted once per sample, for every panel that asks
            running = [t.ops_per_s for t in s.threads if t.state == "running"]
            median = statistics.median(running) if running else 0.0
            self._sorted = (s, sorted(s.threads, key=lambda t: (t.pair, t.role)), median)
        _, threads, median = self._sorted
        return ThreadTable(threads, median, s.total_ops_per_s, self.threads)

    def thread_rows(self) -> list[ThreadRow]:
        """Every row (tests, exports); the panel builds only the rows it shows."""
        table = self.thread_table()
        return [table.row(i) for i in range(len(table))]

    def thread_scale(self, width: int) -> float:
        """One ceiling for every thread sparkline (its last `width` samples), so rows compare."""
        recent = islice(reversed(self._peaks), width) if width > 0 else self._peaks
        return max(recent, default=0.0)

    def latency_scale(self, width: int) -> float:
        """One ceiling for every pair's p99 sparkline (its last `width` samples)."""
        recent = islice(reversed(self._p99_peaks), width) if width > 0 else self._p99_peaks
        return max(recent, default=0.0)

    def _rebuild_peaks(self) -> None:
        self._peaks = _peaks_of(self.threads.values(), self.history)

    def pair_cpus(self) -> set[int]:
        """CPUs a pair is bound to (or last ran on, when unpinned)."""
        s = self.latest
        if s is None:
            return set()
        out = set()
        for t in s.threads:
            cpu = t.bound_cpu if t.bound_cpu is not None else t.last_cpu
            if cpu is not None:
                out.add(cpu)
        return out


def _append(histories: dict[_K, deque[float]], key: _K, value: float, maxlen: int) -> None:
    """Append to key's history, made on first use. Not setdefault: its default, a new
    deque, would be made for every thread of every sample (512 at 256 pairs) only to
    be thrown away."""
    history = histories.get(key)
    if history is None:
        history = histories[key] = deque(maxlen=maxlen)
    history.append(value)


def _peaks_of(histories: Iterable[deque[float]], history: int) -> deque[float]:
    """Per sample, the highest value of any history: the shared sparkline ceiling.
    Every history got the latest sample's value, so they all end at the same sample."""
    histories = list(histories)
    longest = max((len(h) for h in histories), default=0)
    peaks = [0.0] * longest
    for h in histories:
        offset = longest - len(h)
        for i, v in enumerate(h, offset):
            if v > peaks[i]:
                peaks[i] = v
    return deque(peaks, maxlen=history)
