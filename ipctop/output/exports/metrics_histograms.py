"""Latency as Prometheus histograms: cumulative `_bucket{le}`, `_sum`, `_count`.

The native ends count every timed round into log-linear histograms (64
buckets per power of two, engine/latency.py). A Prometheus histogram is
cumulative since the series began, so a publisher keeps its own Tracker on
the engine's latency block and adds each interval's counts to a running
histogram per pair: the counts only grow, across engine restarts and
re-added pairs too. The export coarsens to 4 buckets per power of two, from
128 ns to 2^34 ns (17 s), every edge a native bucket edge, so a `le` count is
exact; histogram_quantile() interpolates within one (at most 19 % wide).
Buckets are built at scrape time, not per sample.

Each pair's histogram is 112 series a direction: up to PER_PAIR_MAX pairs
they are exported per pair; above it, as one histogram of every pair with
pair="all". At 129 pairs the per-pair page was 28,896 series (3.6 MB, 0.7 s
of CPU to render), and at 1,024 pairs it would be 229,000: more than a
scraper should be asked to keep. `sum by (le)` reads both the
same, and the per-pair quantile gauges stay per pair at any count.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from itertools import accumulate
from typing import Any

from prometheus_client.core import HistogramMetricFamily, Metric

from ...engine.latency import BUCKETS, HIST_BYTES, Tracker, bucket_of, merged

#: the upper edges exported, in ns: 128 * (1, 1.25, 1.5, 1.75) * 2^k
EDGES_NS = tuple(m << (e - 6) for e in range(7, 34) for m in (64, 80, 96, 112)) + (1 << 34,)
_EDGE_INDEX = tuple(bucket_of(ns) for ns in EDGES_NS)
_LE = tuple(repr(ns / 1e9) for ns in EDGES_NS)
PER_PAIR_MAX = 16  # pairs whose histograms are exported one by one
ALL_PAIRS = "all"  # the pair label of the pooled histogram above it


class LatencyAccumulator:
    """Running histograms per pair (round trip of A; one-way, both directions)
    of whatever engine `engine_of()` returns; feed() once per sample."""

    def __init__(self, engine_of: Callable[[], Any]) -> None:
        self.engine_of = engine_of
        self._engine: Any = None
        self._tracker: Tracker | None = None
        self._lock = threading.Lock()
        self._hists: dict[int, tuple[bytearray, bytearray]] = {}

    def feed(self) -> None:
        engine = self.engine_of()
        if engine is None or not getattr(engine, "timing", False):
            return
        if engine is not self._engine:  # a restart (w, p, m) or a sweep's next step
            self._engine, self._tracker = engine, Tracker(engine.counters.latency)
        assert self._tracker is not None
        try:
            self._tracker.read(engine.pairs)
        except ValueError:
            return  # the engine closed its block meanwhile: nothing more to count
        with self._lock:
            old = dict(self._hists)
        new = {}
        for pair, (rtt, ab, ba) in self._tracker.last.items():
            prev = old.get(pair, (bytearray(HIST_BYTES), bytearray(HIST_BYTES)))
            new[pair] = (merged(prev[0], rtt), merged(prev[1], ab, ba))
        with self._lock:
            # New arrays each time: a scrape holding the old ones reads them whole.
            self._hists = {**old, **new}

    def snapshot(self) -> dict[int, tuple[bytearray, bytearray]]:
        with self._lock:
            return dict(self._hists)


def _buckets(hist: bytes | bytearray) -> tuple[list[tuple[str, float]], float]:
    """Cumulative (le in seconds, count) ending in +Inf, and the sum in seconds."""
    words = memoryview(hist).cast("Q")
    running = list(accumulate(words[1 : 1 + BUCKETS]))
    out = [(le, float(running[i - 1])) for le, i in zip(_LE, _EDGE_INDEX)]
    out.append(("+Inf", float(running[-1])))
    return out, words[0] / 1e9


def histogram_families(
    run: list[str], run_labels: Iterable[str], hists: dict[int, tuple[bytearray, bytearray]]
) -> Iterable[Metric]:
    labels = [*run_labels, "pair"]
    rtt = HistogramMetricFamily(
        "ipctop_round_trip_latency_seconds",
        "A's post to its next wake-up, every timed round since the series began",
        labels=labels,
    )
    wake = HistogramMetricFamily(
        "ipctop_wakeup_latency_seconds",
        "one end's post to its peer's wake-up, both directions, since the series began",
        labels=labels,
    )
    if len(hists) > PER_PAIR_MAX:
        # Every pair's counts only grow (removed pairs' too), so their sum does.
        pooled = (merged(*(r for r, _ in hists.values())), merged(*(w for _, w in hists.values())))
        shown: list[tuple[str, tuple[bytearray, bytearray]]] = [(ALL_PAIRS, pooled)]
    else:
        shown = [(str(pair), h) for pair, h in sorted(hists.items())]
    for pair, (r, w) in shown:
        for fam, h in ((rtt, r), (wake, w)):
            buckets, total = _buckets(h)
            fam.add_metric([*run, pair], buckets, total)
    yield from (rtt, wake)
