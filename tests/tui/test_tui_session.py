"""The TUI's model without a screen: histories, imbalance, settling, the sweep's steps."""

from __future__ import annotations

import threading
import time

import pytest

from ipctop.engine.sample import Sample, ThreadSample
from ipctop.live import monitor
from ipctop.live.auto_sweep import AutoSweep
from ipctop.live.fixed_run import fixed_samples
from ipctop.live.monitor import MonitorCpuMeter, choose_monitor_cpu
from ipctop.live.session import Session
from ipctop.tui.widgets.spark import BARS, si, spark


def _sample(t: float, per_pair: list[float], last_cpu: dict[int, int] | None = None) -> Sample:
    threads = []
    for p, ops in enumerate(per_pair):
        for role in "AB":
            threads.append(
                ThreadSample(
                    p, role, 100 + 2 * p + (role == "B"), p, (last_cpu or {}).get(p, p), 0, ops
                )
            )
    return Sample(
        t=t,
        dt=0.5,
        pairs=len(per_pair),
        threads=tuple(threads),
        total_ops_per_s=sum(t.ops_per_s for t in threads),
    )


def test_spark_shares_the_given_scale_and_fills_the_width() -> None:
    assert spark([50.0, 100.0], 4, 100.0) == "  " + BARS[4] + BARS[-1]
    # Same values, a larger ceiling: lower bars, so rows drawn together compare.
    assert spark([50.0, 100.0], 4, 200.0) == "  " + BARS[2] + BARS[4]
    assert len(spark(list(range(1000)), 7, 999.0)) == 7
    assert spark([1.0], 0, 1.0) == ""
    assert si(1_234_567) == "1.23M" and si(None) == "-" and si(12) == "12"


def test_a_pair_20_percent_off_the_median_is_highlighted() -> None:
    s = Session()
    s.feed(_sample(0.5, [100.0, 100.0, 100.0, 70.0]))
    rows = s.thread_rows()
    hot = {(r.sample.pair, r.sample.role) for r in rows if r.imbalanced}
    assert hot == {(3, "A"), (3, "B")}
    # 15 % off is within tolerance.
    s.feed(_sample(1.0, [100.0, 100.0, 100.0, 85.0]))
    assert not any(r.imbalanced for r in s.thread_rows())


def test_thread_off_its_binding_is_flagged() -> None:
    s = Session()
    s.feed(_sample(0.5, [10.0, 10.0], last_cpu={1: 0}))
    flagged = [(r.sample.pair, r.sample.role) for r in s.thread_rows() if r.sample.off_cpu]
    assert flagged == [(1, "A"), (1, "B")]


def test_thread_rows_share_one_scale_over_the_visible_history() -> None:
    s = Session()
    s.feed(_sample(0.5, [500.0, 10.0]))
    for i in range(10):
        s.feed(_sample(1.0 + i / 2, [100.0, 10.0]))
    assert s.thread_scale(width=20) == 500.0
    # The 500 has scrolled out of a 5-wide sparkline.
    assert s.thread_scale(width=5) == 100.0


def test_a_removed_thread_loses_its_history() -> None:
    s = Session()
    s.feed(_sample(0.5, [10.0, 10.0]))
    s.feed(_sample(1.0, [10.0]))
    assert len(s.threads) == 2


def test_a_removed_thread_no_longer_holds_the_scale_up() -> None:
    s = Session()
    s.feed(_sample(0.5, [10.0, 900.0]))
    s.feed(_sample(1.0, [20.0, 800.0]))
    assert s.thread_scale(width=10) == 900.0
    s.feed(_sample(1.5, [30.0]))  # pair 1 removed: its 900 and 800 go with it
    assert s.thread_scale(width=10) == 30.0
    # Pair 0's own past still counts, aligned on the samples it shared.
    assert s.thread_scale(width=1) == 30.0 and s.thread_scale(width=3) == 30.0
    s.feed(_sample(2.0, [5.0, 7.0]))  # a new pair 1: a short history, ending now
    assert s.thread_scale(width=1) == 7.0 and s.thread_scale(width=2) == 30.0


def test_each_visit_records_one_settled_point_and_unsettled_ones_say_settling() -> None:
    s = Session()
    s.feed(_sample(0.5, [100.0]))
    s.feed(_sample(1.0, [100.0]))
    # Too early to be settled: a provisional point stands in.
    (p,) = s.points()
    assert p.pairs == 1 and not p.settled and s.settle_state == "settling"
    for i in range(3, 12):
        s.feed(_sample(i / 2, [100.0]))
    (p,) = s.points()
    assert p.settled and p.repeats == (200.0,)  # both ends count each round
    for i in range(12, 30):
        s.feed(_sample(i / 2, [100.0, 90.0]))
    pts = {p.pairs: p for p in s.points()}
    assert pts[2].settled and pts[2].total_ops_per_s == pytest.approx(380.0)
    assert s.scalability_at(2) == pytest.approx(190.0)
    assert s.scalability_now() == pytest.approx(190.0)
    # A second visit to 1 pair at the same level adds a repeat instead of overwriting.
    for i in range(30, 45):
        s.feed(_sample(i / 2, [100.5 if i % 2 else 99.5]))
    one = {p.pairs: p for p in s.points()}[1]
    assert len(one.repeats) == 2 and s.curve.replaced(1) == 0
    # One that disagrees (the box changed) replaces them: no settled point wider
    # than the stated width made of two regimes.
    for i in range(45, 47):
        s.feed(_sample(i / 2, [100.0, 90.0]))
    for i in range(47, 62):
        s.feed(_sample(i / 2, [150.0]))
    one = {p.pairs: p for p in s.points()}[1]
    assert one.repeats == (300.0,) and s.curve.replaced(1) == 2
    assert one.summary.half_width_pct is not None and one.summary.half_width_pct <= 10.0
    s.reset_curve()
    assert s.points() == [] and s.scalability_now() is None


def test_scalability_needs_a_one_pair_reading() -> None:
    s = Session()
    for i in range(1, 20):
        s.feed(_sample(i / 2, [100.0, 100.0]))
    assert s.scalability_now() is None


def test_fake_fixed_run_settles_at_each_pair_count() -> None:
    s = Session()
    for sample in fixed_samples():
        s.feed(sample)
    assert [(p.pairs, p.settled) for p in s.points()] == [(1, True), (2, True), (3, True)]
    assert 240 < s.scalability_at(3) < 260  # pair 2 runs at half speed


def test_sweep_waits_for_the_step_and_for_a_settled_reading() -> None:
    sw = AutoSweep(target=3, step=5.0, last_change=0.0, pairs=1)
    assert sw.next_step(1.0, 1, settled=True) == "wait"
    assert sw.next_step(5.0, 1, settled=False) == "wait"
    assert sw.next_step(5.5, 1, settled=True) == "add"
    assert sw.next_step(6.0, 2, settled=False) == "wait"  # the count changed: a new step
    assert sw.next_step(21.0, 2, settled=False) == "add"  # gave up waiting after 3 K
    assert sw.next_step(22.0, 3, settled=True) == "wait"
    assert sw.next_step(27.0, 3, settled=True) == "done"
    assert AutoSweep(2, 5.0, 0.0, 0).next_step(0.0, 0, settled=False) == "add"


def test_monitor_goes_to_a_cpu_without_pairs() -> None:
    assert choose_monitor_cpu([0, 1, 2, 3], {0, 1}) == 3
    assert choose_monitor_cpu([0, 1], {0, 1}) is None
    assert choose_monitor_cpu([0, 1], None) is None  # an unpinned pair may run anywhere


def test_monitor_meter_leaves_out_the_excluded_threads() -> None:
    burned, read = threading.Event(), threading.Event()
    tid: list[int] = []

    def burn() -> None:
        tid.append(threading.get_native_id())
        start = time.thread_time()
        while time.thread_time() - start < 0.3:  # CPU time, not wall time
            pass
        burned.set()
        read.wait()  # stay alive: a finished thread's time leaves /proc/self/task

    everything, others = MonitorCpuMeter(), MonitorCpuMeter()
    t = threading.Thread(target=burn)
    t.start()
    while not tid:
        time.sleep(0.001)
    assert everything.read(set()) is None  # priming
    others.read({tid[0]})
    burned.wait()
    all_pct = everything.read(set())
    rest_pct = others.read({tid[0]})
    read.set()
    t.join()
    assert all_pct is not None and rest_pct is not None
    assert all_pct > rest_pct


def test_monitor_meter_lists_threads_only_when_their_count_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Listing /proc/self/task costs milliseconds at 2,048 threads: the meter
    # lists again only when the count changes, and then counts a new thread.
    listed: list[int] = []
    real_listing = monitor.own_tids

    def counted_listing() -> list[int]:
        listed.append(1)
        return real_listing()

    monkeypatch.setattr(monitor, "own_tids", counted_listing)
    asked: list[int] = []

    def no_pairs() -> set[int]:
        asked.append(1)
        return set()

    meter = MonitorCpuMeter()
    assert meter.read_lazy(no_pairs) is None  # priming lists
    meter.read_lazy(no_pairs)
    assert (len(listed), len(asked)) == (1, 1)  # the same threads: no listing, no pairs asked

    burned, read = threading.Event(), threading.Event()

    def burn() -> None:
        start = time.thread_time()
        while time.thread_time() - start < 0.3:  # CPU time, not wall time
            pass
        burned.set()
        read.wait()  # stay alive: a finished thread's time leaves /proc/self/task

    t = threading.Thread(target=burn)
    begun = time.monotonic()
    meter.read_lazy(no_pairs)
    t.start()
    burned.wait()
    pct = meter.read_lazy(no_pairs)
    elapsed = time.monotonic() - begun
    read.set()
    t.join()
    assert (len(listed), len(asked)) == (2, 2)  # one thread more: listed again
    # The new thread's 0.3 s of CPU (less a tick of /proc's rounding) is in the reading.
    assert pct is not None and pct >= 100.0 * 0.29 / elapsed
