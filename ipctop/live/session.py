"""What the app remembers between samples: histories, the settle state, the curve.

No Textual here: the widgets read a Session, the tests feed one directly.
Time comes from the samples (Sample.t), never from the wall clock, so a fixed
list of samples always produces the same picture.
"""

from __future__ import annotations

import statistics
from array import array
from collections import deque
from collections.abc import Sequence
from itertools import compress, repeat
from operator import attrgetter, is_
from typing import NamedTuple, TypeVar

from ..analysis.scaling import ScalingCurve, ScalingPoint, above_linear, scalability_pct
from ..analysis.settle import SETTLED, Settler
from ..engine.latency import PairLatency, whole
from ..engine.sample import Sample, ThreadSample
from ..engine.workloads import load_unit
from .columns import Columns, HistoryMap
from .thread_table import ThreadKey, ThreadRow, ThreadTable
from .unit_rows import UnitHistory

P99_SAMPLES = 20  # the p99 curve's point at a pair count: the median of this many samples

#: samples of history kept per row; a sparkline never gets wider than this
HISTORY = 512


_K = TypeVar("_K")

# Read at C speed (map) over a sample's 2,048 threads or 1,024 pairs: no Python per item.
_KEY = attrgetter("pair", "role", "tid")  # thread_key's tuple
_OPS = attrgetter("ops_per_s")
_STATE = attrgetter("state")
_BOUND = attrgetter("bound_cpu")
_LAST = attrgetter("last_cpu")
_PAIR = attrgetter("pair")
_P99 = attrgetter("rtt.p99")


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
        # The latest sample's threads sorted, the median of the running ones (and
        # those sorted, for the imbalance count); made once per sample, if asked.
        self._sorted: tuple[Sample | None, Sequence[ThreadSample], float, list[float]] = (
            None, [], 0.0, [],
        )  # fmt: skip
        # The (pair, role) order of the thread keys, kept while the keys are the same
        # tuple: None when the sampler's own order is it (pair by pair, A then B).
        self._order: tuple[tuple[ThreadKey, ...] | None, list[int] | None] = (None, None)
        self._cpus: tuple[Sample | None, frozenset[int]] = (None, frozenset())
        self.count = 0
        # Per thread, its ops/s over the samples (columns.py): one array a sample, the
        # sparklines' histories and their shared ceiling read out of it when drawn.
        self._threads: Columns[ThreadKey] = Columns(history)
        #: the live threads' histories by thread key, each built when asked for
        self.threads: HistoryMap[ThreadKey] = HistoryMap(self._threads)
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
        # Per pair: the round trip's p99 per sample (ns), kept as the threads' are.
        self._p99: Columns[int] = Columns(history)
        #: the pairs' p99 histories, for the latency panel's sparkline
        self.latency_p99: HistoryMap[int] = HistoryMap(self._p99)
        #: per pair count: all pairs' round-trip p99 per sample (ns), the p99 curve
        self.p99_by_pairs: dict[int, deque[float]] = {}
        #: the last readings of latency and their sample's t: above 256 ends the
        #: sampler reads it every 2 s (engine/latency_pace.py), not every sample
        self.latency: tuple[PairLatency, ...] = ()
        self.latency_t: float | None = None

    # -- input -----------------------------------------------------------------
    def feed(self, sample: Sample) -> None:
        self.latest = sample
        self.count += 1
        threads = sample.threads
        keys = tuple(map(_KEY, threads))
        # A copy at C speed; the same key tuple kept while equal, so that what is
        # keyed to it (the sorted order) needs no comparison of its own.
        self._threads.append(self._threads.keys if keys == self._threads.keys else keys,
                             array("d", map(_OPS, threads)))  # fmt: skip
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
        readings = sample.latency
        if not readings:
            return  # no reading in this sample: the histories hold one entry per reading
        self.latency, self.latency_t = readings, sample.t
        pairs = tuple(map(_PAIR, readings))
        if pairs and min(pairs) < 0:  # the all-pairs reading has no history of its own
            readings = tuple(compress(readings, map((0).__le__, pairs)))  # pair >= 0
            pairs = tuple(map(_PAIR, readings))
        p99s = list(map(_P99, readings))
        if None in p99s:
            p99s = [0.0 if v is None else v for v in p99s]
        self._p99.append(self._p99.keys if pairs == self._p99.keys else pairs, array("d", p99s))
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
            keys = self._threads.keys
            if self._order[0] is not keys:  # the threads changed: sorted again, once
                by = sorted(range(len(keys)), key=lambda i: keys[i][:2])  # (pair, role)
                self._order = (keys, None if by == list(range(len(keys))) else by)
            order = self._order[1]
            threads: Sequence[ThreadSample] = s.threads
            if order is not None:
                threads = [s.threads[i] for i in order]
            running = sorted(
                compress(map(_OPS, threads), map("running".__eq__, map(_STATE, threads)))
            )
            median = statistics.median(running) if running else 0.0
            self._sorted = (s, threads, median, running)
        _, threads, median, running = self._sorted
        return ThreadTable(threads, median, s.total_ops_per_s, self.threads, running)

    def thread_rows(self) -> list[ThreadRow]:
        """Every row (tests, exports); the panel builds only the rows it shows."""
        table = self.thread_table()
        return [table.row(i) for i in range(len(table))]

    def thread_scale(self, width: int) -> float:
        """One ceiling for every thread sparkline (its last `width` samples), so rows compare."""
        return self._threads.ceiling(width)

    def latency_scale(self, width: int) -> float:
        """One ceiling for every pair's p99 sparkline (its last `width` samples)."""
        return self._p99.ceiling(width)

    def pair_cpus(self) -> set[int]:
        """CPUs a pair is bound to (or last ran on, when unpinned)."""
        s = self.latest
        if s is None:
            return set()
        if self._cpus[0] is not s:  # once per sample, however many panels ask
            cpus = set(map(_BOUND, s.threads))
            if None in cpus:  # some unpinned: where those last ran (C-speed passes)
                unpinned = map(is_, map(_BOUND, s.threads), repeat(None))
                cpus |= set(compress(map(_LAST, s.threads), unpinned))
                cpus.discard(None)
            self._cpus = (s, frozenset(cpus))
        return set(self._cpus[1])


def _append(histories: dict[_K, deque[float]], key: _K, value: float, maxlen: int) -> None:
    """Append to key's history, made on first use. Not setdefault: its default, a new
    deque, would be made for every thread of every sample (512 at 256 pairs) only to
    be thrown away."""
    history = histories.get(key)
    if history is None:
        history = histories[key] = deque(maxlen=maxlen)
    history.append(value)
