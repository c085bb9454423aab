"""Settler: when the reading at one pair count has stopped moving."""

from __future__ import annotations

import pytest

from ipctop.analysis.settle import Settler
from ipctop.engine.sample import Sample


def feed_all(s: Settler, values: list[float], t0: float = 0.0, dt: float = 1.0) -> None:
    for i, v in enumerate(values):
        s.feed(t0 + (i + 1) * dt, v)


def test_settles_once_window_full_and_steady() -> None:
    s = Settler(window_s=3.0, cv_max=0.05, skip=1)
    s.feed(1.0, 5.0)  # straddles the start: skipped
    assert s.samples == 0 and s.reading is None and s.cv is None
    s.feed(2.0, 100.0)
    s.feed(3.0, 102.0)
    assert s.state == "settling"  # steady, but only 2 s of 3 s seen
    assert not s.window_full
    s.feed(4.0, 98.0)
    assert s.window_full
    assert s.cv == pytest.approx(0.02)  # sample stdev 2 / mean 100
    assert s.reading == pytest.approx(100.0)
    assert s.settled and s.state == "settled"


def test_noisy_window_does_not_settle() -> None:
    s = Settler(window_s=3.0, cv_max=0.05, skip=0)
    feed_all(s, [100.0, 110.0, 90.0])
    assert s.window_full
    assert s.cv == pytest.approx(0.10)
    assert not s.settled
    # Old noise slides out of the 3 s window; the last three are 100, 101, 99.
    feed_all(s, [100.0, 101.0, 99.0], t0=3.0)
    assert s.samples == 3
    assert s.cv == pytest.approx(0.01)
    assert s.reading == pytest.approx(100.0)
    assert s.settled


def test_cv_boundary_is_strict() -> None:
    s = Settler(window_s=2.0, cv_max=0.1, skip=0)
    feed_all(s, [90.0, 110.0])  # stdev 14.142 / 100
    assert s.cv == pytest.approx(0.1414, abs=1e-4)
    assert not s.settled
    # (The interval criterion is switched off here to test the CV alone.)
    s2 = Settler(window_s=2.0, cv_max=0.1415, skip=0, ci_max_pct=1e6)
    feed_all(s2, [90.0, 110.0])
    assert s2.settled


def test_reset_on_pair_change_skips_straddling_samples() -> None:
    s = Settler(window_s=2.0, cv_max=0.05, skip=2, pairs=1)
    s.feed(1.0, 100.0)
    s.feed(2.0, 100.0)
    s.feed(3.0, 100.0)
    s.feed(4.0, 100.0)
    assert s.settled and s.reading == 100.0
    s.reset(2)
    assert s.pairs == 2 and s.state == "settling" and s.reading is None
    s.feed(5.0, 1000.0)  # straddles the change
    s.feed(6.0, 170.0)  # still ramping
    assert s.samples == 0
    s.feed(7.0, 200.0)
    s.feed(8.0, 200.0)
    # The first counted interval began at 6.0, so 2 s are covered at 8.0.
    assert s.reading == 200.0
    assert s.settled


def test_window_tolerates_timer_jitter() -> None:
    s = Settler(window_s=3.0, skip=1)
    for t in (1.002, 2.001, 3.003, 4.001):
        s.feed(t, 50.0)
    # 4.001 - 1.002 = 2.999 s: half an interval of slack accepts it.
    assert s.samples == 3
    assert s.settled


def test_explicit_dt_and_long_intervals_keep_two_samples() -> None:
    s = Settler(window_s=3.0, skip=0)
    s.feed(5.0, 100.0, dt=5.0)
    assert not s.settled  # a single sample is no evidence
    s.feed(10.0, 100.2, dt=5.0)
    assert s.samples == 2  # the 3 s window alone would hold just one
    assert s.settled
    assert s.reading == pytest.approx(100.1)


def test_a_wide_interval_is_not_settled_whatever_the_cv() -> None:
    # 100 and 103: CV 2.1 %, but two samples give a t interval (1 df, t = 12.71)
    # of ±12.71 x sd(log) / sqrt(2) = ±18.9 %: wider than the stated ±10 %.
    s = Settler(window_s=3.0, skip=0)
    s.feed(5.0, 100.0, dt=5.0)
    s.feed(10.0, 103.0, dt=5.0)
    assert s.cv < s.cv_max
    assert s.half_width_pct == pytest.approx(18.9, abs=0.05)
    assert not s.settled
    assert Settler(window_s=3.0, skip=0, ci_max_pct=7.0).ci_max_pct == 7.0
    with pytest.raises(ValueError):
        Settler(ci_max_pct=0)


def test_zero_throughput_never_settles() -> None:
    s = Settler(window_s=1.0, skip=0)
    feed_all(s, [0.0, 0.0, 0.0])
    assert s.cv is None
    assert not s.settled


def test_feed_sample_resets_when_pairs_change() -> None:
    s = Settler(window_s=2.0, skip=1)

    def sample(t: float, pairs: int, total: float) -> Sample:
        return Sample(t=t, dt=1.0, pairs=pairs, threads=(), total_ops_per_s=total)

    for t in (1.0, 2.0, 3.0, 4.0):
        s.feed_sample(sample(t, 1, 10.0))
    assert s.pairs == 1 and s.settled
    s.feed_sample(sample(5.0, 2, 99.0))
    assert s.pairs == 2 and s.samples == 0 and not s.settled
    s.feed_sample(sample(6.0, 2, 20.0))
    s.feed_sample(sample(7.0, 2, 20.0))
    assert s.reading == 20.0 and s.settled


def test_bad_parameters_rejected() -> None:
    with pytest.raises(ValueError):
        Settler(window_s=0)
    with pytest.raises(ValueError):
        Settler(cv_max=-1)
    with pytest.raises(ValueError):
        Settler(skip=-1)
