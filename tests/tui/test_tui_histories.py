"""The columnar histories (live/columns.py) against the per-thread deques they replaced.

The reference below is main's Session bookkeeping, line for line: a deque per
key, deleted when the key is missing from a sample, and the per-sample peaks
rebuilt from the histories left. Fed the same samples (pairs removed, re-added,
tids changed, the order shuffled, empty samples, histories past their length),
every history, sparkline and ceiling must be the same.
"""

from __future__ import annotations

import random
import statistics
from collections import deque
from collections.abc import Hashable, Iterable
from itertools import islice

import pytest

from ipctop.engine.latency import LatencySummary, PairLatency
from ipctop.engine.sample import Sample, ThreadSample
from ipctop.live.session import Session
from ipctop.live.thread_table import IMBALANCE
from ipctop.tui.widgets.spark import spark

HISTORY = 12  # short, so that histories fill and segments are trimmed


class Reference:
    """main's histories: a deque per key and the per-sample peaks (session.py at 39e3cbc)."""

    def __init__(self, history: int) -> None:
        self.history = history
        self.rows: dict[Hashable, deque[float]] = {}
        self.peaks: deque[float] = deque(maxlen=history)

    def feed(self, items: Iterable[tuple[Hashable, float]], skip_empty: bool = False) -> None:
        seen = set()
        peak = 0.0
        for key, value in items:
            seen.add(key)
            self.rows.setdefault(key, deque(maxlen=self.history)).append(value)
            peak = max(peak, value)
        gone = [k for k in self.rows if k not in seen]
        for key in gone:
            del self.rows[key]
        if gone:
            self.peaks = _peaks_of(self.rows.values(), self.history)
        elif seen or not skip_empty:  # the latency panel's kept no peak for an empty sample
            self.peaks.append(peak)

    def scale(self, width: int) -> float:
        recent = islice(reversed(self.peaks), width) if width > 0 else self.peaks
        return max(recent, default=0.0)


def _peaks_of(histories: Iterable[deque[float]], history: int) -> deque[float]:
    histories = list(histories)
    longest = max((len(h) for h in histories), default=0)
    peaks = [0.0] * longest
    for h in histories:
        offset = longest - len(h)
        for i, v in enumerate(h, offset):
            if v > peaks[i]:
                peaks[i] = v
    return deque(peaks, maxlen=history)


def _summary(p99: float | None) -> LatencySummary:
    return LatencySummary(10, 1.0, 1.0, p99, p99, p99)  # type: ignore[arg-type]


def _samples(seed: int, n: int) -> list[Sample]:
    """A run whose pairs come and go: added, removed, re-added with new tids, shuffled."""
    rng = random.Random(seed)
    pairs = list(range(4))
    tid = {p: 100 + 10 * p for p in range(40)}
    out = []
    for i in range(n):
        roll = rng.random()
        if roll < 0.08 and max(pairs, default=0) < 30:
            pairs.append(max(pairs, default=-1) + 1)  # a pair added
        elif roll < 0.16 and pairs:
            pairs.remove(rng.choice(pairs))  # a pair removed
        elif roll < 0.20 and pairs:
            p = rng.choice(pairs)
            tid[p] += 1000  # a pair restarted: new tids, new rows
        elif roll < 0.24 and len(pairs) < 30:
            pairs.append(rng.choice([p for p in range(40) if p not in pairs]))  # one back
        order = list(pairs)
        if rng.random() < 0.1:
            rng.shuffle(order)  # a sampler that lists them otherwise
        empty = rng.random() < 0.03
        threads = tuple(
            ThreadSample(
                p,
                r,
                tid[p] + (r == "B"),
                rng.choice([p % 2, p % 2, None]),  # unpinned at times
                rng.choice([p % 2, p % 2, 1 - p % 2, None]),
                i,
                rng.choice([0.0, rng.uniform(50, 150), rng.uniform(50, 1000)]),
                state=rng.choice(["running"] * 6 + ["starting"]),
            )
            for p in ([] if empty else order)
            for r in "AB"
        )
        latency = (PairLatency(-1, _summary(5.0), _summary(2.0)),) + tuple(
            PairLatency(p, _summary(rng.choice([None, rng.uniform(1, 900)])), _summary(1.0))
            for p in ([] if empty or rng.random() < 0.05 else order)
        )
        total = sum(t.ops_per_s for t in threads)
        out.append(
            Sample(
                t=0.5 * (i + 1),
                dt=0.5,
                pairs=len(order),
                threads=threads,
                total_ops_per_s=total,
                latency=latency,
            )  # fmt: skip
        )
    return out


@pytest.mark.parametrize("seed", range(6))
def test_histories_sparklines_and_ceilings_are_the_deques(seed: int) -> None:
    s = Session(history=HISTORY)
    threads, p99s = Reference(HISTORY), Reference(HISTORY)
    for sample in _samples(seed, 90):
        s.feed(sample)
        threads.feed(((t.pair, t.role, t.tid), t.ops_per_s) for t in sample.threads)
        p99s.feed(
            ((x.pair, float(x.rtt.p99 or 0.0)) for x in sample.latency if x.pair >= 0),
            skip_empty=True,
        )
        for mine, ref in ((s.threads, threads), (s.latency_p99, p99s)):
            assert set(mine) == set(ref.rows) and len(mine) == len(ref.rows)
            for key, want in ref.rows.items():
                got = mine[key]
                assert list(got) == list(want) and len(got) == len(want), (sample.t, key)
                assert list(reversed(got)) == list(reversed(want))
                assert [got[i] for i in range(-len(want), len(want))] == list(want) * 2
        for width in (0, 1, 2, 3, 5, 11, 12, 40):
            assert s.thread_scale(width) == threads.scale(width), (sample.t, width)
            assert s.latency_scale(width) == p99s.scale(width), (sample.t, width)
        top = s.thread_scale(5)
        for row in s.thread_rows():
            want = threads.rows[(row.sample.pair, row.sample.role, row.sample.tid)]
            for lag in (0, 2):
                assert spark(row.history, 5, top, lag) == spark(want, 5, top, lag)


def test_a_row_taken_before_its_thread_left_keeps_the_history_it_had() -> None:
    s = Session(history=HISTORY)
    samples = _samples(1, 30)
    s.feed(samples[0])
    key = next(iter(s.threads))
    view = s.threads[key]
    s.feed(samples[0].__class__(t=99.0, dt=0.5, pairs=0, threads=(), total_ops_per_s=0.0))
    assert key not in s.threads and list(view) == [
        t.ops_per_s for t in samples[0].threads if (t.pair, t.role, t.tid) == key
    ]


@pytest.mark.parametrize("seed", range(4))
def test_the_table_and_its_counts_are_main_s(seed: int) -> None:
    s = Session(history=HISTORY)
    for sample in _samples(seed, 60):
        s.feed(sample)
        table = s.thread_table()
        assert list(table.threads) == sorted(sample.threads, key=lambda t: (t.pair, t.role))
        running = [t.ops_per_s for t in sample.threads if t.state == "running"]
        median = statistics.median(running) if running else 0.0
        assert table.median == median
        limit = IMBALANCE * median
        want = sum(
            1
            for t in sample.threads
            if median > 0 and t.state == "running" and abs(t.ops_per_s - median) > limit
        )
        assert table.imbalanced() == want == sum(r.imbalanced for r in s.thread_rows())
        assert table.off_cpu() == sum(1 for t in sample.threads if t.off_cpu)
        cpus = {t.bound_cpu if t.bound_cpu is not None else t.last_cpu for t in sample.threads}
        assert s.pair_cpus() == cpus - {None}


def test_the_imbalance_count_at_the_edge_is_the_comparison_s() -> None:
    # Values exactly IMBALANCE off the median, and a hair either side: bisected on
    # sorted values, the count must still be abs(v - m) > limit's.
    m = 1000.0
    edge = [m + IMBALANCE * m, m - IMBALANCE * m]
    near = [v + d for v in edge for d in (-1e-9, 0.0, 1e-9)]
    ops = [m] * 9 + near + [m * 0.1, m * 3]
    threads = tuple(ThreadSample(i, "A", i, 0, 0, 0, v) for i, v in enumerate(ops))
    s = Session()
    s.feed(Sample(t=0.5, dt=0.5, pairs=len(ops), threads=threads, total_ops_per_s=sum(ops)))
    median = statistics.median(ops)
    want = sum(1 for v in ops if abs(v - median) > IMBALANCE * median)
    assert s.thread_table().imbalanced() == want
