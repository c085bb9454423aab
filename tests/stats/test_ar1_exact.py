"""mean_se's degrees of freedom with r known, held against the exact ones.

bench/ar1_exact.py gives the exact miss rate of mean_se's interval for a
Gaussian AR(1) of known r (Imhof's integral). It is checked here against
answers worked out elsewhere (the Cauchy law, Student's t) and against planted
AR(1) series; then it shows that mean_se's Satterthwaite df err wide, never
narrow, when r is known, which is what lets an estimated r (the TUI's case,
tests/stats/test_stats.py) keep 93-97 %.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from conftest import ROOT
from scipy import stats as sps

from ipctop.analysis import autocorr

sys.path.insert(0, str(ROOT / "bench"))
from ar1_exact import above_zero, exact_df, miss_rate  # noqa: E402

RS = (0.5, 0.77, 0.9)
NS = (6, 8, 10, 12, 16, 20, 30, 40)


def t975(df: float) -> float:
    return float(sps.t.ppf(0.975, df))


def test_imhofs_integral_matches_a_ratio_of_two_chi_squares() -> None:
    # a Z1^2 > b Z2^2 is |Z1 / Z2| > sqrt(b / a), and Z1 / Z2 is standard Cauchy.
    for a, b in ((1.0, 1.0), (1.0, 0.01), (0.3, 2.0)):
        want = 1.0 - 2.0 / math.pi * math.atan(math.sqrt(b / a))
        assert above_zero([a, -b]) == pytest.approx(want, abs=1e-7)
    assert above_zero([1.0]) == pytest.approx(1.0, abs=1e-7)


@pytest.mark.parametrize("n", [2, 3, 6, 20])
def test_independent_values_give_students_t(n: int) -> None:
    # r = 0 is the textbook case: the interval is exact with n - 1 df.
    assert miss_rate(n, 1e-9, t975(n - 1)) == pytest.approx(0.05, abs=1e-6)
    assert exact_df(n, 1e-9) == pytest.approx(n - 1, rel=1e-3)
    assert exact_df(n, 0.0) == n - 1


def planted_ar1(rows: int, n: int, r: float, rng: np.random.Generator) -> np.ndarray:
    """Planted Gaussian AR(1) series, one a row, stationary from the first value, mean 0."""
    x = np.empty((rows, n))
    x[:, 0] = rng.standard_normal(rows)
    for k in range(1, n):
        x[:, k] = r * x[:, k - 1] + math.sqrt(1 - r * r) * rng.standard_normal(rows)
    return x


@pytest.mark.parametrize(("n", "r"), [(6, 0.9), (10, 0.77), (40, 0.9)])
def test_planted_series_miss_as_often_as_the_integral_says(n: int, r: float) -> None:
    # 20,000 planted series a cell, r known; each interval's half-width is mean_se's
    # standard error times a quantile: at the exact df the series miss 5 %, at
    # mean_se's own df as often as Imhof's integral says. 4 binomial s.d. (0.6
    # point at 5 %) of slack.
    rows = 20_000
    x = planted_ar1(rows, n, r, np.random.default_rng(29))
    f = autocorr.ar1_factor(n, r)
    se = np.sqrt(x.var(axis=1, ddof=1) * (n - 1) / (n - f) * f / n)
    for row in range(50):  # the vectorised standard error is mean_se's own
        assert se[row] == pytest.approx(autocorr.mean_se(x[row].tolist(), r).se, rel=1e-9)
    df_exact, df_own = exact_df(n, r), autocorr.mean_se(x[0].tolist(), r).df
    for df in (df_exact, df_own):
        want = miss_rate(n, r, t975(df))
        missed = float(np.mean(np.abs(x.mean(axis=1)) > t975(df) * se))
        slack = 4 * math.sqrt(want * (1 - want) / rows)
        assert abs(missed - want) <= slack, (df, missed, want)
    assert miss_rate(n, r, t975(df_exact)) == pytest.approx(0.05, abs=1e-4)


def test_mean_se_df_err_wide_of_the_exact_ones_when_r_is_known() -> None:
    # Issue 23's cells: Satterthwaite's moment match never has more df than the
    # exact ones, so with r known the interval covers at least 95 % (not far
    # over: the whole excess is what an estimated r costs back). n - f, taken
    # where larger before the audit, has far too many at r 0.9 (25 at n 40).
    for r in RS:
        for n in NS:
            exact = exact_df(n, r)
            own = autocorr.mean_se([float(k % 3) for k in range(n)], r).df
            assert own == pytest.approx(autocorr.satterthwaite_df(n, r))
            assert own <= exact, (n, r)
            covered = 1.0 - miss_rate(n, r, t975(own))
            assert 0.95 <= covered <= 0.99, (n, r, covered)
    assert 40 - autocorr.ar1_factor(40, 0.9) > 3 * exact_df(40, 0.9)
