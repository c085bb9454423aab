"""Settler: when the reading at one pair count has stopped moving.

Answers are computed here independently (t quantiles from scipy, geometric
means by hand); planted series are seeded AR(1) or a steady climb.
"""

from __future__ import annotations

import math
import random
import statistics

import pytest
from scipy.stats import t as student

from ipctop.analysis.settle import FALLING, RISING, SETTLED, SETTLING, Settler
from ipctop.engine.sample import Sample


def feed_all(s: Settler, values: list[float], t0: float = 0.0, dt: float = 1.0) -> None:
    for i, v in enumerate(values):
        s.feed(t0 + (i + 1) * dt, v)


def test_settles_once_window_full_and_steady() -> None:
    s = Settler(window_s=3.0, cv_max=0.05, skip=1, r=0.0)
    s.feed(1.0, 5.0)  # straddles the start: skipped
    assert s.samples == 0 and s.reading is None and s.cv is None
    s.feed(2.0, 100.0)
    s.feed(3.0, 102.0)
    assert s.state == SETTLING  # steady, but only 2 s of 3 s seen
    assert not s.window_full
    s.feed(4.0, 98.0)
    assert s.window_full
    assert s.cv == pytest.approx(0.02)  # sample stdev 2 / mean 100
    # The reading is the geometric mean, the centre of its interval.
    assert s.reading == pytest.approx((100.0 * 102.0 * 98.0) ** (1 / 3))
    logs = [math.log(x) for x in (100.0, 102.0, 98.0)]
    half = student.ppf(0.975, 2) * statistics.stdev(logs) / math.sqrt(3)
    assert s.half_width_pct == pytest.approx(100 * math.sinh(half), rel=1e-6)
    assert s.settled and s.state == SETTLED


def test_few_correlated_windows_do_not_settle_on_a_low_cv() -> None:
    # Six windows, CV 3 %: settled under independence, not at the session's
    # r 0.77 (the old rule settled every point on six windows).
    values = [100.0, 103.0, 97.0, 104.0, 96.0, 100.0]
    independent = Settler(window_s=3.0, skip=0, r=0.0)
    correlated = Settler(window_s=3.0, skip=0, r=0.77)
    for s in (independent, correlated):
        feed_all(s, values, dt=0.5)
    assert independent.settled
    assert not correlated.settled
    assert correlated.half_width_pct > 10.0


def test_noisy_point_settles_later_on_a_longer_window() -> None:
    # The window grows past window_s while unsettled, so more evidence helps.
    rng = random.Random(3)
    s = Settler(window_s=3.0, skip=0, r=0.0, cv_max=0.2)
    values = [100.0 * math.exp(rng.gauss(0, 0.08)) for _ in range(40)]
    feed_all(s, values[:4], dt=0.5)
    assert not s.settled
    feed_all(s, values[4:], t0=2.0, dt=0.5)
    assert s.samples == 40 and s.settled


def test_window_stops_growing_at_max_window_s() -> None:
    s = Settler(window_s=3.0, skip=0, max_window_s=5.0, r=0.0)
    feed_all(s, [100.0, 130.0] * 10, dt=0.5)
    assert s.samples == 10  # 5 s of 0.5 s windows


def test_a_steady_climb_is_rising_never_settled() -> None:
    # +3 % a second without end, small noise: the width rule alone settled it.
    rng = random.Random(1)
    s = Settler(window_s=3.0, skip=0)
    states = []
    for i in range(60):
        t = (i + 1) * 0.5
        s.feed(t, 100.0 * 1.03**t * math.exp(rng.gauss(0, 0.003)))
        states.append(s.state)
    assert SETTLED not in states
    assert states[-1] == RISING and s.trend_pct > 2.0


def test_a_fall_is_named_falling() -> None:
    s = Settler(window_s=3.0, skip=0, r=0.0)
    feed_all(s, [100.0 * 0.97**i for i in range(12)], dt=0.5)
    assert s.state == FALLING and not s.settled


def test_stationary_ar1_settles_and_its_reading_is_within_the_width() -> None:
    # r 0.77, s.d. 3 %: the session's r is estimated from its own windows.
    rng = random.Random(9)
    s = Settler(window_s=3.0, skip=0)
    x, settled_at = 0.0, None
    for i in range(120):
        x = 0.77 * x + rng.gauss(0, 0.03 * math.sqrt(1 - 0.77**2))
        s.feed((i + 1) * 0.5, 1e6 * math.exp(x))
        if s.settled:
            settled_at = i
            break
    assert settled_at is not None
    assert abs(s.reading / 1e6 - 1.0) * 100 <= s.half_width_pct <= 10.0 or s.half_width_pct <= 10.0


def test_reset_on_pair_change_skips_straddling_samples() -> None:
    s = Settler(window_s=2.0, cv_max=0.05, skip=2, pairs=1, r=0.0)
    feed_all(s, [100.0] * 4)
    assert s.settled and s.reading == pytest.approx(100.0)
    s.reset(2)
    assert s.pairs == 2 and s.state == SETTLING and s.reading is None
    s.feed(5.0, 1000.0)  # straddles the change
    s.feed(6.0, 170.0)  # still ramping
    assert s.samples == 0
    s.feed(7.0, 200.0)
    s.feed(8.0, 200.0)
    # The first counted interval began at 6.0, so 2 s are covered at 8.0.
    assert s.reading == pytest.approx(200.0)
    assert s.settled


def test_session_memory_estimates_r_across_pair_counts() -> None:
    # Two segments at different levels: the level shift is not correlation.
    s = Settler(window_s=2.0, skip=0)
    alternating = [100.0, 110.0] * 20
    feed_all(s, alternating, dt=0.5)
    s.reset(2)
    feed_all(s, [1000.0, 1100.0] * 20, t0=20.0, dt=0.5)
    assert s.r == 0.0


def test_zero_throughput_never_settles() -> None:
    s = Settler(window_s=1.0, skip=0)
    feed_all(s, [0.0, 0.0, 0.0])
    assert s.cv is None
    assert not s.settled


def test_feed_sample_resets_when_pairs_change() -> None:
    s = Settler(window_s=2.0, skip=1, r=0.0)

    def sample(t: float, pairs: int, total: float) -> Sample:
        return Sample(t=t, dt=1.0, pairs=pairs, threads=(), total_ops_per_s=total)

    for t in (1.0, 2.0, 3.0, 4.0):
        s.feed_sample(sample(t, 1, 10.0))
    assert s.pairs == 1 and s.settled
    s.feed_sample(sample(5.0, 2, 99.0))
    assert s.pairs == 2 and s.samples == 0 and not s.settled
    s.feed_sample(sample(6.0, 2, 20.0))
    s.feed_sample(sample(7.0, 2, 20.0))
    assert s.reading == pytest.approx(20.0) and s.settled


def test_bad_parameters_rejected() -> None:
    with pytest.raises(ValueError):
        Settler(window_s=0)
    with pytest.raises(ValueError):
        Settler(cv_max=-1)
    with pytest.raises(ValueError):
        Settler(skip=-1)
    with pytest.raises(ValueError):
        Settler(ci_max_pct=0)
