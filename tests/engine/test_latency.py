"""Per-round latency: the histogram layout, its percentiles, and real pairs' timings."""

from __future__ import annotations

import random
import time
from types import SimpleNamespace

import pytest
from conftest import two_cpus, wait_for

from ipctop.engine import latency
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.engine.objects import _native

native = pytest.mark.skipif(_native is None, reason="the native extension is not built")


def _plant(values: list[int]) -> bytearray:
    """A histogram (struct lat_hist) holding exactly these values."""
    h = latency.empty()
    words = memoryview(h).cast("Q")
    for v in values:
        words[1 + latency.bucket_of(v)] += 1
        words[0] += v
    return h


def _exact(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[max(0, int(q * len(ordered) + 0.999999) - 1)]


@native
def test_bucket_layout_matches_the_native_one():
    assert _native.LAT_AREA == latency.AREA
    assert _native.LAT_BUCKETS == latency.BUCKETS
    assert _native.LAT_RTT == latency.RTT_OFFSET
    assert _native.LAT_ONEWAY == latency.ONEWAY_OFFSET
    assert _native.LAT_USED == latency.HIST_BYTES
    edges = [0, 1, 127, 128, 129, 255, 256, 1000, 10**6, 2**35, 2**36 - 1, 2**36, 2**50]
    rng = random.Random(13)
    edges += [rng.randrange(1, 2**37) for _ in range(2000)]
    for v in edges:
        assert _native.lat_bucket(v) == latency.bucket_of(v), v


def test_every_bucket_holds_its_values_within_one_percent():
    for i in range(latency.BUCKETS - 1):
        low, width = latency.bucket_range(i)
        assert latency.bucket_of(low) == i
        assert latency.bucket_of(low + width - 1) == i
        mid = latency.bucket_mid(i)
        assert abs(mid - low) <= 0.008 * max(low, 1) + 0.5
        assert abs(mid - (low + width - 1)) <= 0.008 * max(low, 1) + 0.5


@pytest.mark.parametrize("engine", ["native", "python"])
def test_planted_histogram_reads_back_its_percentiles(engine, monkeypatch):
    if engine == "native" and _native is None:
        pytest.skip("the native extension is not built")
    if engine == "python":
        monkeypatch.setattr("ipctop.engine.objects._native", None)
    rng = random.Random(7)
    # A body near 5 us and a tail near 2 ms, as a blocking IPC pair shows.
    values = [int(rng.gauss(5000, 400)) for _ in range(9800)]
    values += [int(rng.uniform(1.5e6, 2.5e6)) for _ in range(200)]
    s = latency.summarize(_plant(values))
    assert s.n == len(values)
    assert s.mean == pytest.approx(sum(values) / len(values))
    for got, q in ((s.p50, 0.5), (s.p99, 0.99), (s.p999, 0.999)):
        assert got == pytest.approx(_exact(values, q), rel=0.01)
    assert s.max == pytest.approx(max(values), rel=0.01)


@pytest.mark.parametrize("engine", ["native", "python"])
def test_merged_and_the_all_pairs_figure_are_the_sums_of_the_histograms(engine, monkeypatch):
    if engine == "native" and _native is None:
        pytest.skip("the native extension is not built")
    if engine == "python":
        monkeypatch.setattr("ipctop.engine.objects._native", None)
    rng = random.Random(3)
    planted = [[int(rng.uniform(500, 5e6)) for _ in range(300)] for _ in range(3)]
    both = latency.merged(*(_plant(v) for v in planted))
    assert both == _plant([v for vs in planted for v in vs])
    # A reading's all-pairs figure (summed as the pairs are read) is their merge.
    block = latency.LatencyBlock(4)
    try:
        for slot, values in enumerate(planted[:2] * 2):
            for off in (latency.RTT_OFFSET, latency.ONEWAY_OFFSET):
                for v in values:
                    latency.record(block.buf, slot * latency.AREA + off, v)
        ends = [SimpleNamespace(slot=s, tid=100 + s) for s in range(4)]
        pairs = [SimpleNamespace(index=i, ends=tuple(ends[2 * i : 2 * i + 2])) for i in range(2)]
        tracker = latency.Tracker(block)
        got = tracker.readings(pairs)
        rtt = latency.merged(*(h[0] for h in tracker.last.values()))
        oneway = latency.merged(*(h for trio in tracker.last.values() for h in trio[1:]))
        assert got[-1] == latency.PairLatency(-1, latency.summarize(rtt), latency.summarize(oneway))
        assert got[-1].rtt.n == 2 * 300 and got[-1].oneway.n == 4 * 300
    finally:
        block.close()


def test_empty_histogram_has_no_percentiles():
    s = latency.summarize(latency.empty())
    assert (s.n, s.p50, s.p99, s.max, s.mean) == (0, None, None, None, None)


def test_take_counts_only_what_came_since_the_previous_reading():
    block = latency.LatencyBlock(2)
    try:
        live = memoryview(block.buf)[latency.AREA + latency.RTT_OFFSET :].cast("Q")
        prev, acc = latency.empty(), latency.empty()
        live[1 + latency.bucket_of(1000)] = 5
        latency.take(block.buf, latency.AREA + latency.RTT_OFFSET, prev, acc)
        live[1 + latency.bucket_of(1000)] = 7
        live[1 + latency.bucket_of(9000)] = 1
        acc2 = latency.empty()
        latency.take(block.buf, latency.AREA + latency.RTT_OFFSET, prev, acc2)
        assert latency.summarize(acc).n == 5
        assert latency.histogram(acc2) == [
            (latency.bucket_mid(latency.bucket_of(1000)), 2),
            (latency.bucket_mid(latency.bucket_of(9000)), 1),
        ]
        del live
    finally:
        block.close()


def _timed(config: RunConfig, seconds: float = 0.4, least: int = 0):
    """The pair's latency over a window of at least `seconds` and `least` rounds of A:
    a loaded box may leave a pair few rounds in a fixed window, so it lasts until
    the rounds the caller judges by have come (30 s at most)."""
    with Engine(config) as engine:
        engine.start(1)
        tracker = latency.Tracker(engine.counters.latency)
        slot = engine.pairs[0].ends[0].slot
        # The ends go on while we read: bracket each histogram read by two counter
        # reads, so a preempted reader (a loaded box) widens the bracket, not the error.
        a0 = engine.counters.rounds(slot)
        tracker.read(engine.pairs)
        b0 = engine.counters.rounds(slot)
        time.sleep(seconds)
        wait_for(lambda: engine.counters.rounds(slot) - b0 >= least, timeout=30)
        a1 = engine.counters.rounds(slot)
        (got,) = tracker.read(engine.pairs)
        b1 = engine.counters.rounds(slot)
        return engine.latency_note, got, (a1 - b0, b1 - a0)


@native
@pytest.mark.parametrize("mode", ["threads", "processes"])
@pytest.mark.parametrize("workload", ["sysv-msg", "sysv-sem", "sysv-msg-shared"])
def test_real_pair_one_way_is_positive_and_below_its_round_trip(workload, mode):
    config = RunConfig(workload=workload, mode=mode, cpus=(0,), latency_every=1)
    note, got, (before, after) = _timed(config, least=51)
    assert "every round" in note
    assert before > 50
    # A's round trip is timed once per round; the one-way latency twice (A to B,
    # B to A), give or take the round in flight at each end.
    assert before - 2 <= got.rtt.n <= after + 2
    assert 2 * before - 4 <= got.oneway.n <= 2 * after + 4
    assert 0 < got.oneway.p50 < got.rtt.p50
    assert got.rtt.p50 <= got.rtt.p99 <= got.rtt.max


@native
@two_cpus
def test_cross_cpu_pair_is_timed_on_both_cpus():
    config = RunConfig(workload="sysv-sem", placement="cross", cpus=(0, 1))
    note, got, (rounds, _) = _timed(config, least=11 * config.latency_every)
    assert rounds > 10
    assert 0 < got.oneway.p50 < got.rtt.p50


@native
def test_one_round_in_k_is_timed_and_said():
    config = RunConfig(workload="sysv-msg", cpus=(0,), latency_every=10)
    note, got, (before, after) = _timed(config, least=101)
    assert "1 round in 10" in note
    assert before > 100
    assert before / 10 - 2 <= got.rtt.n <= after / 10 + 2
    assert 0 < got.oneway.p50 < got.rtt.p50


@native
def test_timing_off_leaves_the_histograms_empty():
    note, got, (rounds, _) = _timed(
        RunConfig(workload="sysv-msg", cpus=(0,), latency=False), least=51
    )
    assert "off" in note
    assert rounds > 50 and got.rtt.n == 0 and got.oneway.n == 0


def test_python_engine_says_latency_is_not_available():
    config = RunConfig(workload="sysv-msg", cpus=(0,), engine="python")
    note, got, _ = _timed(config, 0.2)
    assert note.startswith("latency n/a (") and "Python" in note
    assert got.rtt.n == 0


def test_unit_of_many_threads_is_not_timed():
    config = RunConfig(workload="sysv-sem-multi", cpus=(0,), threads=4)
    with Engine(config) as engine:
        engine.start(1)
        assert not engine.timing
        assert "n/a" in engine.latency_note
        assert latency.Tracker(engine.counters.latency).read(engine.pairs) == []


def test_format_ns_keeps_three_digits():
    assert latency.format_ns(812) == "812ns"
    assert latency.format_ns(12345) == "12.3µs"
    assert latency.format_ns(4.567e6) == "4.57ms"
    assert latency.format_ns(None) == "-"


@native
def test_paused_timing_counts_nothing_and_resumes_without_stale_stamps():
    with Engine(RunConfig(workload="sysv-sem", cpus=(0,))) as engine:
        engine.start(1)
        tracker = latency.Tracker(engine.counters.latency)
        engine.pause_timing(True)
        time.sleep(0.1)
        tracker.read(engine.pairs)
        time.sleep(0.2)
        (paused,) = tracker.read(engine.pairs)
        engine.pause_timing(False)
        slot = engine.pairs[0].ends[0].slot
        at_resume = engine.counters.rounds(slot)
        time.sleep(0.2)
        # More than 50 timed rounds (one in latency_every) once a loaded box has
        # given the pair them: a fixed 0.2 s may hold only a few.
        need = 60 * engine.config.latency_every
        wait_for(lambda: engine.counters.rounds(slot) - at_resume >= need, timeout=30)
        (resumed,) = tracker.read(engine.pairs)
    assert paused.rtt.n == 0 and paused.oneway.n == 0
    assert resumed.rtt.n > 50
    # A stamp older than the pause would show up as a one-way of about 0.2 s.
    assert resumed.oneway.max < resumed.rtt.max + 1e6


def _read_both_ways(block, pairs_of, steps):
    """Readings and `last` of the same block through lat_read and through the
    histogram-at-a-time path (the extension hidden), after each step's writes."""
    import ipctop.engine.objects as objects

    fast, slow = latency.Tracker(block), latency.Tracker(block)
    out = []
    for step in steps:
        step()
        pairs = pairs_of()
        got_fast = (fast.readings(pairs), fast.last)
        saved, objects._native = objects._native, None
        try:
            got_slow = (slow.readings(pairs), slow.last)
        finally:
            objects._native = saved
        out.append((got_fast, got_slow))
    return out


@native
def test_one_pass_reading_equals_reading_each_histogram():
    """lat_read (one native pass over the used buckets, two copies a tracker keeps)
    gives what three takes per pair give: every pair's figures, the all-pairs
    figure and `last`, over readings in which counts grow, new buckets appear and
    a slot is handed to a new end."""
    rng = random.Random(11)
    block = latency.LatencyBlock(6)
    tids = {s: 100 + s for s in range(6)}

    def pairs_of():
        ends = [SimpleNamespace(slot=s, tid=tids[s]) for s in range(6)]
        return [SimpleNamespace(index=i, ends=tuple(ends[2 * i : 2 * i + 2])) for i in range(3)]

    def write(spread):
        def step():
            for slot in range(6):
                for off in (latency.RTT_OFFSET, latency.ONEWAY_OFFSET):
                    for _ in range(rng.randrange(0, 200)):
                        latency.record(
                            block.buf, slot * latency.AREA + off, int(rng.lognormvariate(8, spread))
                        )

        return step

    def new_end_in_slot_3():
        block.clear(3)
        tids[3] = 999
        write(1.0)()

    try:
        got = _read_both_ways(
            block, pairs_of, [write(0.5), write(0.5), write(2.5), (lambda: None), new_end_in_slot_3]
        )
        for (fast, fast_last), (slow, slow_last) in got:
            assert fast == slow
            assert fast_last == slow_last
        # Nothing written between two readings reads as nothing.
        (quiet, _), _ = got[3]
        assert all(p.rtt.n == 0 and p.oneway.n == 0 for p in quiet)
        # A new end in slot 3 counts from its own start, not from the old end's counts.
        (after, last), _ = got[4]
        ab = memoryview(block.buf)[3 * latency.AREA + latency.ONEWAY_OFFSET :].cast("Q")
        assert sum(last[1][1][8:]) == sum(ab[1 : 1 + latency.BUCKETS])
        del ab
    finally:
        block.close()


@native
def test_real_ends_mark_every_bucket_they_count():
    """The monitor reads only buckets whose used bit is set: a real pair's ends
    must set the bit of every bucket they count."""
    with Engine(RunConfig(workload="sysv-sem", cpus=(0,), latency_every=1)) as engine:
        engine.start(1)
        ends = engine.pairs[0].ends
        time.sleep(0.3)
        # Rounds enough to fill a few buckets, however long a loaded box takes.
        wait_for(lambda: engine.counters.rounds(ends[0].slot) >= 500, timeout=30)
        engine.stop()  # the counts stand still while they are checked
        words = memoryview(engine.counters.latency.buf).cast("Q")
        counted = 0
        for end in ends:
            for off in (latency.RTT_OFFSET, latency.ONEWAY_OFFSET):
                base = (end.slot * latency.AREA + off) // 8
                used = words[
                    base + 1 + latency.BUCKETS : base + 1 + latency.BUCKETS + latency.USED_WORDS
                ]
                for i in range(latency.BUCKETS):
                    if words[base + 1 + i]:
                        counted += 1
                        assert used[i // 64] >> (i % 64) & 1, (end.slot, off, i)
        del words, used
    assert counted > 3
