"""The statistics module on planted samples whose answers are worked out by hand
(binomial tables, a t table) or by another implementation (scipy's own test)."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats as sps

from ipctop.analysis import stats
from ipctop.analysis.stats import (
    IMPROVEMENT,
    NO_DIFFERENCE,
    REGRESSION,
    TooFewWindows,
    difference,
    fmt_diff,
    median_rank_interval,
    noise_floor,
    require_interval,
    summarize,
)

# Deviations with mean 0 and sample variance 0.00025 (sum of squares 0.001 over 4).
E = (-0.02, -0.01, 0.0, 0.01, 0.02)
T_975_DF8 = 2.306004  # t table, two-sided 95 %, 8 degrees of freedom
T_975_DF4 = 2.776445


def planted(centre: float) -> list[float]:
    return [centre * math.exp(e) for e in E]


@pytest.mark.parametrize(
    ("n", "ranks"),
    # From the binomial table: n=6 -> x(1)..x(6) covers 96.9 %; n=10 -> x(2)..x(9)
    # covers 97.9 % (x(3)..x(8) only 89.1 %); n=20 -> x(6)..x(15) covers 95.9 %.
    [(5, None), (6, (0, 5)), (10, (1, 8)), (20, (5, 14))],
)
def test_median_ranks_match_the_binomial_table(n: int, ranks) -> None:
    assert median_rank_interval(n) == ranks


def test_summary_of_ten_windows_uses_second_and_ninth_order_statistics() -> None:
    windows = [7.0, 1.0, 9.0, 3.0, 10.0, 5.0, 2.0, 8.0, 4.0, 6.0]
    s = summarize(windows)
    assert (s.n, s.median, s.low, s.high) == (10, 5.5, 2.0, 9.0)
    assert s.method == stats.METHOD_ORDER
    assert s.half_width_pct == pytest.approx(50 * 7 / 5.5)


def test_summary_of_five_windows_is_a_t_interval_of_the_geometric_mean() -> None:
    s = summarize(planted(1000.0))
    half = T_975_DF4 * math.sqrt(0.00025) / math.sqrt(5)
    assert s.method == stats.METHOD_LOG_T
    assert s.median == pytest.approx(1000.0)
    assert s.low == pytest.approx(1000.0 * math.exp(-half), rel=1e-6)
    assert s.high == pytest.approx(1000.0 * math.exp(half), rel=1e-6)


def test_one_window_has_no_interval_and_require_interval_refuses_it() -> None:
    s = summarize([42.0])
    assert (s.n, s.median, s.low, s.high, s.half_width_pct) == (1, 42.0, None, None, None)
    with pytest.raises(TooFewWindows, match="at least 2 windows"):
        require_interval([42.0], "a step")
    with pytest.raises(TooFewWindows):
        summarize([])


def test_welch_ratio_interval_matches_the_closed_form() -> None:
    # Equal n and variances: Welch's df is 2(n-1) = 8 and the standard error of
    # the difference of log means is sqrt(2 x 0.00025 / 5) = 0.01 exactly.
    d = difference(planted(1000.0), planted(950.0))
    assert d.ratio == pytest.approx(0.95)
    assert d.low == pytest.approx(0.95 * math.exp(-T_975_DF8 * 0.01), rel=1e-6)
    assert d.high == pytest.approx(0.95 * math.exp(T_975_DF8 * 0.01), rel=1e-6)
    assert d.diff_pct == pytest.approx(-5.0)
    assert d.verdict == REGRESSION
    # The whole interval (up to -2.8 %) lies below -2 %, but not below -3 %.
    assert d.below(2.0) and not d.below(3.0)


def test_p_value_agrees_with_scipys_own_welch_test() -> None:
    a = [101.0, 97.0, 103.0, 99.5, 100.2, 98.1]
    b = [104.0, 99.0, 108.0, 101.0, 102.5, 103.9, 100.0]
    d = difference(a, b)
    ref = sps.ttest_ind([math.log(x) for x in b], [math.log(x) for x in a], equal_var=False)
    assert d.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    # The interval excludes 1 exactly when p < 0.05.
    assert (d.verdict != NO_DIFFERENCE) == (d.p_value < 0.05)


def test_verdicts_in_each_direction() -> None:
    assert difference(planted(100.0), planted(110.0)).verdict == IMPROVEMENT
    assert difference(planted(100.0), planted(100.5)).verdict == NO_DIFFERENCE
    # Constant samples: exact ratio, no interval to speak of.
    exact = difference([5.0, 5.0], [4.0, 4.0])
    assert (exact.low, exact.high, exact.verdict) == (0.8, 0.8, REGRESSION)


def test_difference_needs_two_windows_a_side() -> None:
    with pytest.raises(TooFewWindows, match="2 windows a side"):
        difference([1.0], [1.0, 2.0])


def test_noise_floor_is_the_half_width_of_the_aa_interval() -> None:
    floor = noise_floor(planted(1000.0), planted(1000.0))
    assert floor == pytest.approx(100 * math.sinh(T_975_DF8 * 0.01), rel=1e-6)


def test_false_alarms_of_aa_comparisons_are_near_five_percent() -> None:
    # 2000 A/A comparisons of 8 log-normal windows a side (seeded): the test's
    # own size should be about 5 %; this fails if the interval is too narrow.
    rng = random.Random(12)
    alarms = 0
    for _ in range(2000):
        a = [math.exp(rng.gauss(13.0, 0.05)) for _ in range(8)]
        b = [math.exp(rng.gauss(13.0, 0.05)) for _ in range(8)]
        alarms += difference(a, b).verdict != NO_DIFFERENCE
    assert 60 <= alarms <= 140  # 3 % .. 7 %


def test_fmt_diff_drops_digits_the_noise_does_not_allow() -> None:
    wide = difference([100.0, 110.0, 90.0], [95.0, 105.0, 85.0])
    assert "." not in fmt_diff(wide)
    assert fmt_diff(difference(planted(1000.0), planted(950.0))) == "-5 % [-7, -3]"
    tight = difference([1000 * math.exp(e / 10) for e in E], [950 * math.exp(e / 10) for e in E])
    assert fmt_diff(tight) == "-5.0 % [-5.2, -4.8]"


def test_autocorrelated_windows_get_a_smaller_effective_n() -> None:
    # Two plateaus twice over: mean 1/2, sum of squares 16/4 = 4, 12 of the 15
    # neighbours on one plateau (+1/4 each) and 3 across (-1/4): r = 2.25 / 4.
    logs = ([0.0] * 4 + [1.0] * 4) * 2
    assert stats.lag1_autocorrelation(logs) == pytest.approx(0.5625)
    assert stats.effective_n(logs) == pytest.approx(16 * 0.4375 / 1.5625)
    s = summarize([math.exp(x) for x in logs])
    assert "effective n 4.5" in s.method
    # Shuffled into independence-looking order the same values get the narrower
    # distribution-free interval.
    alternating = [math.exp(x) for x in [0.0, 1.0] * 8]
    assert summarize(alternating).method == stats.METHOD_ORDER
    assert s.half_width_pct > summarize(alternating).half_width_pct


def test_paired_difference_of_abba_blocks_matches_the_closed_form() -> None:
    # Five blocks whose log ratios are log(0.95) + E: sd sqrt(0.00025), 4 df.
    blocks = [([100.0, 100.0], [95.0 * math.exp(e)] * 2) for e in E]
    d = stats.paired_difference(blocks)
    half = T_975_DF4 * math.sqrt(0.00025) / math.sqrt(5)
    assert d.ratio == pytest.approx(0.95)
    assert (d.low, d.high) == (
        pytest.approx(0.95 * math.exp(-half)),
        pytest.approx(0.95 * math.exp(half)),
    )
    assert (d.n_a, d.n_b, d.test, d.verdict) == (10, 10, stats.TEST_PAIRED, REGRESSION)
    ref = sps.ttest_1samp([math.log(0.95) + e for e in E], 0.0)
    assert d.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    with pytest.raises(TooFewWindows, match="2 blocks"):
        stats.paired_difference(blocks[:1])


def test_a_drift_that_abba_cancels_is_not_a_difference() -> None:
    # A linear drift of 2 % per window over A B B A blocks: Welch on the pooled
    # windows sees the spread, the paired blocks see exactly no difference.
    drift = [1000.0 * (1 + 0.02 * i) for i in range(16)]
    blocks = [([drift[i], drift[i + 3]], [drift[i + 1], drift[i + 2]]) for i in range(0, 16, 4)]
    d = stats.paired_difference(blocks)
    assert d.verdict == NO_DIFFERENCE
    assert d.ratio == pytest.approx(1.0, abs=1e-3)
