"""The statistics module on planted samples whose answers are worked out by hand
(a t table, the AR(1) covariance matrix) or by another implementation (scipy's own test)."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from scipy import stats as sps

from ipctop.analysis import autocorr, stats, stopping
from ipctop.analysis.stats import (
    IMPROVEMENT,
    NO_DIFFERENCE,
    REGRESSION,
    TooFewWindows,
    difference,
    fmt_diff,
    noise_floor,
    require_interval,
    summarize,
    t_quantile,
)
from ipctop.output.records.record_checks import number_problems

# Deviations with mean 0 and sample variance 0.00025 (sum of squares 0.001 over 4).
E = (-0.02, -0.01, 0.0, 0.01, 0.02)
T_975_DF8 = 2.306004  # t table, two-sided 95 %, 8 degrees of freedom
T_975_DF4 = 2.776445


def planted(centre: float) -> list[float]:
    return [centre * math.exp(e) for e in E]


def test_runs_are_a_t_interval_of_the_geometric_mean() -> None:
    s = summarize(planted(1000.0), unit=stats.RUNS)
    half = T_975_DF4 * math.sqrt(0.00025) / math.sqrt(5)
    assert s.estimate == pytest.approx(1000.0)
    assert (s.low, s.high) == (
        pytest.approx(1000.0 * math.exp(-half)),
        pytest.approx(1000.0 * math.exp(half)),
    )
    assert (s.n, s.unit, s.r) == (5, stats.RUNS, None)
    # The printed figure is the interval's centre, not the median.
    skewed = summarize([100.0, 100.0, 400.0], unit=stats.RUNS)
    assert skewed.median == 100.0
    assert skewed.estimate == pytest.approx((100.0 * 100.0 * 400.0) ** (1 / 3))
    assert stats.fmt_interval(skewed, lambda x: f"{x:.0f}").startswith("159 [")


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
    d = difference(planted(1000.0), planted(950.0), unit=stats.RUNS)
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
    d = difference(a, b, unit=stats.RUNS)
    ref = sps.ttest_ind([math.log(x) for x in b], [math.log(x) for x in a], equal_var=False)
    assert d.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    # The interval excludes 1 exactly when p < 0.05.
    assert (d.verdict != NO_DIFFERENCE) == (d.p_value < 0.05)


def test_verdicts_in_each_direction() -> None:
    assert difference(planted(100.0), planted(110.0), unit=stats.RUNS).verdict == IMPROVEMENT
    assert difference(planted(100.0), planted(100.5), unit=stats.RUNS).verdict == NO_DIFFERENCE
    # Constant samples: exact ratio, no interval to speak of.
    exact = difference([5.0, 5.0], [4.0, 4.0], unit=stats.RUNS)
    assert (exact.low, exact.high, exact.verdict) == (0.8, 0.8, REGRESSION)


def test_difference_needs_two_windows_a_side() -> None:
    with pytest.raises(TooFewWindows, match="2 windows a side"):
        difference([1.0], [1.0, 2.0])


def test_noise_floor_is_the_half_width_of_the_aa_interval() -> None:
    floor = noise_floor(planted(1000.0), planted(1000.0), unit=stats.RUNS)
    assert floor == pytest.approx(100 * math.sinh(T_975_DF8 * 0.01), rel=1e-6)


def test_false_alarms_of_aa_comparisons_are_near_five_percent() -> None:
    # 2000 A/A comparisons of 8 log-normal windows a side (seeded): the test's
    # own size should be about 5 %; this fails if the interval is too narrow.
    rng = random.Random(12)
    alarms = 0
    for _ in range(2000):
        a = [math.exp(rng.gauss(13.0, 0.05)) for _ in range(8)]
        b = [math.exp(rng.gauss(13.0, 0.05)) for _ in range(8)]
        alarms += difference(a, b, unit=stats.RUNS).verdict != NO_DIFFERENCE
    assert 60 <= alarms <= 140  # 3 % .. 7 %


def test_fmt_diff_drops_digits_the_noise_does_not_allow() -> None:
    wide = difference([100.0, 110.0, 90.0], [95.0, 105.0, 85.0])
    assert "." not in fmt_diff(wide)
    assert fmt_diff(difference(planted(1000.0), planted(950.0), unit=stats.RUNS)) == "-5 % [-7, -3]"
    tight = difference(
        [1000 * math.exp(e / 10) for e in E], [950 * math.exp(e / 10) for e in E], unit=stats.RUNS
    )
    assert fmt_diff(tight) == "-5.0 % [-5.2, -4.8]"


def test_ar1_variance_factor_matches_the_covariance_matrix() -> None:
    # Var(mean) of an AR(1) series = 1'Sigma1 / n^2 with Sigma_ij = r^|i-j|:
    # computed here from the matrix itself, not from the closed sum.
    for n, r in ((6, 0.77), (20, 0.5), (40, 0.9)):
        direct = sum(r ** abs(i - j) for i in range(n) for j in range(n)) / n
        assert autocorr.ar1_factor(n, r) == pytest.approx(direct, rel=1e-12)
    assert autocorr.ar1_factor(10, 0.0) == 1.0


def test_satterthwaite_df_matches_the_matrix_moments_of_the_sample_variance() -> None:
    # E and Var of s^2 under AR(1) are traces of C S (numpy's matrices here, not the
    # closed form's prefix sums), short series and long ones alike.
    import numpy as np

    for n, r in ((2, 0.5), (6, 0.77), (10, 0.9), (20, 0.5), (32, 0.95), (40, 0.9), (200, 0.77)):
        i = np.arange(n)
        m = (np.eye(n) - 1.0 / n) @ (r ** np.abs(i[:, None] - i[None, :]))
        want = np.trace(m) ** 2 / np.trace(m @ m)
        assert autocorr.satterthwaite_df(n, r) == pytest.approx(float(want), rel=1e-9)
    assert autocorr.satterthwaite_df(5, 0.0) == 4.0  # independent: n - 1


def test_an_interval_takes_satterthwaites_df_at_every_n() -> None:
    est = autocorr.mean_se([0.0, 0.1, 0.3, 0.2, 0.4, 0.3], 0.9)
    assert est.df == pytest.approx(autocorr.satterthwaite_df(6, 0.9))
    # Long series too: n - f, which the rule before issue 23's audit took where it
    # was larger (and at every n from 33), has over three times the df at r 0.9.
    long = [float(k % 3) for k in range(40)]
    est = autocorr.mean_se(long, 0.9)
    assert est.df == pytest.approx(autocorr.satterthwaite_df(40, 0.9))
    assert 3 * est.df < 40 - autocorr.ar1_factor(40, 0.9)
    assert autocorr.mean_se(long, 0.5).df == pytest.approx(autocorr.satterthwaite_df(40, 0.5))
    # The df take r to 0.01; the standard error takes it as given.
    assert autocorr.mean_se(long, 0.904).df == est.df
    assert autocorr.mean_se(long, 0.904).se > est.se
    # Independent values: the plain t interval's n - 1, whatever the length.
    assert autocorr.mean_se(long, 0.0).df == 39.0


def test_lag1_estimate_of_a_planted_series_and_its_bias_correction() -> None:
    # Two plateaus twice over: mean 1/2, sum of squares 16/4 = 4, 12 of the 15
    # neighbours on one plateau (+1/4 each) and 3 across (-1/4): r = 2.25 / 4.
    logs = ([0.0] * 4 + [1.0] * 4) * 2
    assert autocorr.lag1(logs) == pytest.approx(0.5625)
    corrected = (16 * 0.5625 + 1) / 13
    upper = corrected + math.sqrt((1 - corrected**2) / 16)
    assert autocorr.estimate_r(logs) == pytest.approx(upper)
    assert autocorr.estimate_r(logs[:9]) is None  # too short to say


def test_correlated_windows_get_a_wider_interval_than_independent_ones() -> None:
    # The same values, once on two plateaus (correlated), once alternating.
    logs = ([0.0] * 4 + [1.0] * 4) * 2
    s = summarize([math.exp(x) for x in logs])
    alternating = summarize([math.exp(x) for x in [0.0, 1.0] * 8])
    assert s.r > 0.5 and alternating.r == 0.0
    assert s.half_width_pct > alternating.half_width_pct
    assert s.basis.startswith("n=16 windows, lag-1 r")


def test_few_windows_take_the_session_r_or_the_prior() -> None:
    w = planted(1000.0)
    assert summarize(w).r == autocorr.R_PRIOR
    assert summarize(w, r=0.2).r == 0.2
    assert summarize(w, r=0.2).half_width_pct < summarize(w).half_width_pct


@pytest.mark.parametrize("r", [0.5, 0.9])
def test_window_interval_covers_an_ar1_mean_about_95_percent(r: float) -> None:
    # 600 seeded AR(1) series of 30 windows, r known from the session: the
    # interval must neither undercover (the old bug: 82-90 %) nor balloon.
    rng = random.Random(7)
    hits = 0
    for _ in range(600):
        x, xs = rng.gauss(0, 0.05), []
        for _ in range(30):
            xs.append(1e6 * math.exp(x))
            x = r * x + rng.gauss(0, 0.05 * math.sqrt(1 - r * r))
        s = summarize(xs, r=r)
        hits += s.low <= 1e6 <= s.high
    assert 0.92 <= hits / 600 <= 0.985


def _ar1_logs(n: int, r: float, rng: random.Random) -> list[float]:
    """A planted stationary AR(1) series of log rates, marginal s.d. 5 %, mean 0."""
    x, xs = rng.gauss(0, 0.05), []
    for _ in range(n):
        xs.append(x)
        x = r * x + rng.gauss(0, 0.05 * math.sqrt(1 - r * r))
    return xs


def test_the_sessions_r_is_its_bias_corrected_estimate_without_a_margin() -> None:
    import numpy as np

    rng = random.Random(3)
    # Two pair counts, the second at another level: each segment's own line goes.
    segments = [_ar1_logs(60, 0.77, rng), [0.3 + v for v in _ar1_logs(40, 0.77, rng)]]
    memory = autocorr.SeriesMemory()
    for seg in segments:
        memory.new_segment()
        for v in seg:
            memory.add(v)
    num = den = 0.0
    for seg in segments:  # numpy's fit of each line, not autocorr's sums
        t = np.arange(len(seg))
        e = np.asarray(seg) - np.polyval(np.polyfit(t, seg, 1), t)
        num += float(e[:-1] @ e[1:])
        den += float(e @ e)
    want = (50 * num / den + 2) / (50 - 4)  # 100 windows in 2 segments: length 50
    assert memory.point_r() == pytest.approx((want, 100), rel=1e-9)
    assert memory.r == pytest.approx(want, rel=1e-9)
    # Over many planted sessions of 200 windows it is r itself, on average; one
    # standard error high (what it was before issue 23) would be 0.045-0.061 over.
    for r in (0.5, 0.77):
        rs = []
        for _ in range(300):
            memory = autocorr.SeriesMemory()
            for v in _ar1_logs(200, r, rng):
                memory.add(v)
            estimate = memory.r
            assert estimate is not None
            rs.append(estimate)
        assert abs(statistics.fmean(rs) - r) < 0.02, (r, statistics.fmean(rs))


@pytest.mark.parametrize(
    ("r", "n"), [(0.5, 6), (0.77, 6), (0.9, 6), (0.77, 10), (0.9, 10), (0.9, 40)]
)
def test_the_tuis_window_interval_covers_95_percent_with_the_sessions_r(r: float, n: int) -> None:
    # As the TUI has it: r estimated from 200 earlier windows of the session
    # (SeriesMemory), then a point of n windows, through summarize. Issue 23's
    # goal is 93-97 %; the rule before its audit gave up to 98.4 % at n 6-10 here.
    # 2,000 planted series a cell: the bounds leave 0.5 point (about one binomial
    # s.d.) for the seed.
    rng = random.Random(23)
    hits = 0
    for _ in range(2000):
        memory = autocorr.SeriesMemory()
        for v in _ar1_logs(200, r, rng):
            memory.add(v)
        memory.new_segment()
        s = summarize([1e6 * math.exp(v) for v in _ar1_logs(n, r, rng)], r=memory.r_or_prior())
        hits += s.low <= 1e6 <= s.high
    assert 0.925 <= hits / 2000 <= 0.975


def test_welch_on_correlated_windows_holds_its_size() -> None:
    # A/A of 10 windows a side at r 0.77: plain Welch called 21 % (issue 23).
    rng = random.Random(5)
    calls = 0
    for _ in range(600):
        sides = []
        for _ in range(2):
            x, xs = rng.gauss(0, 0.05), []
            for _ in range(10):
                xs.append(1e6 * math.exp(x))
                x = 0.77 * x + rng.gauss(0, 0.05 * math.sqrt(1 - 0.77**2))
            sides.append(xs)
        calls += difference(*sides, r_a=0.77, r_b=0.77).verdict != NO_DIFFERENCE
    assert calls / 600 <= 0.08


def test_session_variance_widens_the_difference() -> None:
    a, b = planted(1000.0), planted(950.0)
    plain = difference(a, b, unit=stats.RUNS)
    wide = difference(a, b, unit=stats.RUNS, session_var=0.0004, session_df=4)
    # se^2 = 0.01^2 + 2 x 0.0004; Satterthwaite df from the three terms.
    var = 0.0001 + 0.0008
    df = var**2 / ((0.00005**2) / 4 * 2 + 0.0008**2 / 4)
    assert wide.se == pytest.approx(math.sqrt(var))
    assert wide.df == pytest.approx(df)
    assert wide.half_width_pct > plain.half_width_pct


def test_holm_adjusts_as_the_step_down_procedure_does() -> None:
    # Worked by hand: sorted 0.01, 0.02, 0.03, 0.5 times 4, 3, 2, 1, then monotone.
    assert stats.holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])
    assert stats.holm([]) == []


def test_p_below_is_the_one_sided_test_of_the_gate() -> None:
    d = difference(planted(1000.0), planted(950.0), unit=stats.RUNS)
    # log(0.95) - log(0.97) over se 0.01 on 8 df.
    z = (math.log(0.95) - math.log(0.97)) / 0.01
    assert d.p_below(3.0) == pytest.approx(sps.t.cdf(z, 8))
    assert d.p_below(10.0) > 0.5


def _aa_block(rng: random.Random, sd: float) -> tuple[list[float], list[float]]:
    return [1e6], [1e6 * math.exp(rng.gauss(0, sd))]


def test_stein_two_stage_holds_the_aa_rate_whatever_the_spread() -> None:
    rng = random.Random(11)
    for sd in (0.01, 0.05):
        calls = 0
        for _ in range(800):
            blocks = [_aa_block(rng, sd) for _ in range(stopping.PILOT_BLOCKS)]
            need, pilot_sd = stopping.blocks_needed(blocks, 1.0)
            blocks += [_aa_block(rng, sd) for _ in range(need - len(blocks))]
            d = stats.paired_difference(blocks, pilot_sd=pilot_sd, pilot_n=stopping.PILOT_BLOCKS)
            calls += d.verdict != NO_DIFFERENCE
        assert calls / 800 <= 0.075, sd


def test_stein_plan_asks_for_more_blocks_when_blocks_spread_more() -> None:
    tight = [([100.0], [100.0 * math.exp(e / 10)]) for e in E]
    loose = [([100.0], [100.0 * math.exp(e * 5)]) for e in E]
    assert stopping.plan(tight, 1.0).blocks == len(tight)
    n = stopping.plan(loose, 1.0).blocks
    # t(4) x sd / log(1.01), squared, with sd = 5 x sqrt(0.00025).
    assert n == math.ceil((T_975_DF4 * 5 * math.sqrt(0.00025) / math.log(1.01)) ** 2)


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


def test_paired_interval_of_two_wild_blocks_is_capped_so_a_record_holds_it() -> None:
    # A p99 20x higher on B, then on A (`ipctop ab -w signal --json` on a loaded box):
    # t with 1 df makes the half-width 12.7 x 3.0, e^38, which no record may hold.
    d = stats.paired_difference([([10.0], [200.0]), ([200.0], [10.0])])
    assert d.ratio == pytest.approx(1.0)
    assert (d.low, d.high) == (pytest.approx(math.exp(-30.0)), pytest.approx(math.exp(30.0)))
    assert d.verdict == NO_DIFFERENCE
    assert number_problems(d.to_dict()) == []


def test_a_drift_that_abba_cancels_is_not_a_difference() -> None:
    # A linear drift of 2 % per window over A B B A blocks: Welch on the pooled
    # windows sees the spread, the paired blocks see exactly no difference.
    drift = [1000.0 * (1 + 0.02 * i) for i in range(16)]
    blocks = [([drift[i], drift[i + 3]], [drift[i + 1], drift[i + 2]]) for i in range(0, 16, 4)]
    d = stats.paired_difference(blocks)
    assert d.verdict == NO_DIFFERENCE
    assert d.ratio == pytest.approx(1.0, abs=1e-3)


def test_t_quantile_is_scipys_t_ppf_exactly() -> None:
    # The fast path (scipy.special.stdtrit) must give the very figures t.ppf gave,
    # so no interval anywhere moves by a bit.
    for df in (0.5, 0.93, 1.0, 2.5, 4.0, 7.77, 19.0, 58.2, 1000.0):
        for confidence in (0.9, 0.95, 0.99):
            assert t_quantile(df, confidence) == float(sps.t.ppf(0.5 + confidence / 2.0, df))
