"""Means of autocorrelated series: the variance of a mean of windows that are not independent.

Consecutive sampler windows share the box's drifting load, so their log rates
follow an AR(1) process closely enough (lag-1 r 0.5-0.9 on this box,
bench/window_autocorr.py). For an AR(1) series of n values with lag-1
correlation r the variance of the mean is sigma^2 f(n, r) / n with

    f(n, r) = 1 + 2 sum_{k=1}^{n-1} (1 - k/n) r^k,

and the sample variance underestimates sigma^2 by the factor (n - f) / (n - 1).
Both are corrected here. The degrees of freedom are n - f, or for a short
series Satterthwaite's moment match of s^2 where it is larger (see mean_se).
r itself is estimated with Kendall's small-sample bias correction (the plain
lag-1 estimate is low by about (1 + 3r) / n); below MIN_FOR_R values it is
noise, and the caller must supply r from a longer series of the same session
(SeriesMemory) or take R_PRIOR.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

# Below this many values a lag-1 estimate is mostly noise.
MIN_FOR_R = 10
# When nothing better is known: the lag-1 r this box measured at 0.5 s under load
# (BENCHMARKS.md, "window autocorrelation"); erring high only widens an interval.
R_PRIOR = 0.77
R_MAX = 0.95
# Segments shorter than this on average give no session r: their own mean and
# slope take so much of the lag-1 estimate that the bias correction (a factor
# L / (L - 4)) amplifies noise, or a short cycle, up to R_MAX.
MIN_SEGMENT = 12


def ar1_factor(n: int, r: float) -> float:
    """f(n, r): how much autocorrelation inflates the variance of a mean of n values."""
    if n <= 1 or r <= 0.0:
        return 1.0
    return 1.0 + 2.0 * sum((1.0 - k / n) * r**k for k in range(1, n))


# Above this many values n - f is always the larger df (and the O(n^2) sums cost).
SATTERTHWAITE_MAX_N = 32


@functools.lru_cache(maxsize=1024)
def satterthwaite_df(n: int, r: float) -> float:
    """Degrees of freedom of the sample variance of n AR(1) values (unit variance, lag-1 r)
    by matching its first two moments to a scaled chi-square (Satterthwaite, Box 1954):
    tr(C S)^2 / tr((C S)^2), with S the AR(1) correlation matrix and C the centring."""
    if n < 2:
        return 0.0
    if r <= 0.0:
        return n - 1.0
    # (C S)[i][j] = r^|i-j| - column mean of S at j.
    col = [sum(r ** abs(i - j) for i in range(n)) / n for j in range(n)]
    m = [[r ** abs(i - j) - col[j] for j in range(n)] for i in range(n)]
    trace = sum(m[i][i] for i in range(n))
    trace_sq = sum(m[i][j] * m[j][i] for i in range(n) for j in range(n))
    return trace * trace / trace_sq if trace_sq > 0.0 else n - 1.0


def lag1(xs: Sequence[float]) -> float:
    """The plain lag-1 autocorrelation of a series in time order (0 for a constant one)."""
    m = statistics.fmean(xs)
    den = sum((x - m) ** 2 for x in xs)
    if den == 0.0:
        return 0.0
    return sum((a - m) * (b - m) for a, b in zip(xs, xs[1:])) / den


def _upper(r: float, n: float) -> float:
    # An estimated r is uncertain by about sqrt((1 - r^2) / n); an interval that
    # takes r one standard error high errs on the wide side, as it should.
    return min(max(r + math.sqrt(max(1.0 - r * r, 0.0) / n), 0.0), R_MAX)


def estimate_r(xs: Sequence[float]) -> float | None:
    """Lag-1 r, bias-corrected (Kendall 1954), one standard error high, in [0, R_MAX];
    None when too short to estimate."""
    n = len(xs)
    if n < MIN_FOR_R:
        return None
    return _upper((n * lag1(xs) + 1.0) / (n - 3.0), n)


@dataclass(frozen=True)
class MeanEstimate:
    """The mean of a series with its standard error and degrees of freedom."""

    mean: float
    se: float
    df: float
    r: float
    n: int


def mean_se(xs: Sequence[float], r: float) -> MeanEstimate:
    """Mean, AR(1)-corrected standard error and effective degrees of freedom (n >= 2)."""
    n = len(xs)
    if n < 2:
        raise ValueError("a standard error needs at least 2 values")
    r = min(max(r, 0.0), R_MAX)
    f = ar1_factor(n, r)
    s2 = statistics.variance(xs)
    # n - f can reach 0 for short, strongly correlated series: the data then say
    # almost nothing about sigma, and the interval must show it.
    denom = max(n - f, 0.05)
    var_mean = s2 * (n - 1) / denom * f / n
    # The degrees of freedom of s^2 under AR(1): n - f (n - 1 when independent)
    # kept coverage within 93-97 % for a known r up to 0.9 at n >= 10 (simulation,
    # bench/calibrate.py); n / f - 1, the naive effective n, overcovers badly
    # (99-100 % at r 0.77). Below that, n - f falls towards 0 while s^2 still
    # carries the information of Satterthwaite's moment match, which is larger.
    small = n <= SATTERTHWAITE_MAX_N
    # r to 0.01 for the df alone: it moves smoothly with r, and a redraw asks often.
    df = max(n - f, satterthwaite_df(n, round(r, 2)) if small else 0.0, 0.5)
    return MeanEstimate(statistics.fmean(xs), math.sqrt(var_mean), df, r, n)


def slope_se(ts: Sequence[float], xs: Sequence[float], r: float) -> tuple[float, float, float]:
    """OLS slope of xs on ts, its AR(1)-inflated standard error and df (n >= 4)."""
    n = len(xs)
    if n < 4:
        raise ValueError("a trend needs at least 4 values")
    mt, mx = statistics.fmean(ts), statistics.fmean(xs)
    sxx = sum((t - mt) ** 2 for t in ts)
    if sxx == 0.0:
        return 0.0, math.inf, 1.0
    b = sum((t - mt) * (x - mx) for t, x in zip(ts, xs)) / sxx
    resid = [x - mx - b * (t - mt) for t, x in zip(ts, xs)]
    s2 = sum(e * e for e in resid) / (n - 2)
    # The slope's variance under AR(1) inflates by about the same f as a mean's;
    # residuals of a fit lose a little more of sigma, hence n - f - 1.
    f = ar1_factor(n, min(max(r, 0.0), R_MAX))
    denom = max(n - f - 1.0, 0.05)
    var_b = s2 * (n - 2) / denom * f / sxx
    return b, math.sqrt(var_b), max(n / f - 2.0, 0.2)


def _detrended(xs: Sequence[float]) -> list[float]:
    n = len(xs)
    mt, mx = (n - 1) / 2.0, statistics.fmean(xs)
    sxx = sum((i - mt) ** 2 for i in range(n))
    b = sum((i - mt) * (x - mx) for i, x in enumerate(xs)) / sxx
    return [x - mx - b * (i - mt) for i, x in enumerate(xs)]


class SeriesMemory:
    """The lag-1 r of one session's windows, for intervals over too few windows to estimate it.

    Windows are fed in segments (one per pair count); r is estimated from each
    segment's residuals about its own straight line, so neither a level shift
    between pair counts nor a warm-up climb is taken for correlation (a trend
    is the settle rule's to find, and would otherwise widen its own test).
    """

    def __init__(self, keep: int = 2000) -> None:
        self.keep = keep
        self._segments: list[list[float]] = [[]]

    def new_segment(self) -> None:
        if self._segments[-1]:
            self._segments.append([])

    def add(self, x: float) -> None:
        self._segments[-1].append(float(x))
        total = sum(len(s) for s in self._segments)
        while total > self.keep and len(self._segments) > 1:
            total -= len(self._segments.pop(0))

    @property
    def r(self) -> float | None:
        num = den = 0.0
        n = k = 0
        for seg in self._segments:
            if len(seg) < 4:
                continue
            e = _detrended(seg)
            num += sum(a * b for a, b in zip(e, e[1:]))
            den += sum(x * x for x in e)
            n += len(seg)
            k += 1
        if n < MIN_FOR_R or den == 0.0:
            return None
        # Each segment's own line costs the bias of a series of its length
        # (about (2 + 4r) / n for a mean and a slope; checked by simulation at
        # r 0.5 and 0.77, a little low at 0.9, which the upper margin covers).
        length = n / k
        if length < MIN_SEGMENT:
            return None
        raw = num / den
        return _upper((length * raw + 2.0) / (length - 4.0), n)

    def r_or_prior(self) -> float:
        r = self.r
        return R_PRIOR if r is None else r
