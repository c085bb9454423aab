"""Means of autocorrelated series: the variance of a mean of windows that are not independent.

Consecutive sampler windows share the box's drifting load, so their log rates
follow an AR(1) process closely enough (lag-1 r 0.5-0.9 on this box,
bench/window_autocorr.py). For an AR(1) series of n values with lag-1
correlation r the variance of the mean is sigma^2 f(n, r) / n with

    f(n, r) = 1 + 2 sum_{k=1}^{n-1} (1 - k/n) r^k,

and the sample variance underestimates sigma^2 by the factor (n - f) / (n - 1).
Both are corrected here. The degrees of freedom are Satterthwaite's moment
match of s^2 at every n (see mean_se). r itself is estimated with Kendall's
small-sample bias correction (the plain lag-1 estimate is low by about
(1 + 3r) / n); below MIN_FOR_R values it is noise, and the caller must supply
r from a longer series of the same session (SeriesMemory, its estimate as it
is) or take R_PRIOR.
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


@functools.lru_cache(maxsize=1024)
def satterthwaite_df(n: int, r: float) -> float:
    """Degrees of freedom of the sample variance of n AR(1) values (unit variance, lag-1 r)
    by matching its first two moments to a scaled chi-square (Satterthwaite, Box 1954):
    tr(C S)^2 / tr((C S)^2), with S the AR(1) correlation matrix and C the centring."""
    if n < 2:
        return 0.0
    if r <= 0.0:
        return n - 1.0
    # The traces in closed form, so that a long series costs O(n), not O(n^2):
    # tr(C S) = n - f(n, r), and tr((C S)^2) = tr(S^2) - 2 |S 1|^2 / n + f^2 with
    # tr(S^2) = n f(n, r^2) and (S 1)_i = sum_j r^|i-j|, from prefix sums of r^k.
    prefix: list[float] = []
    acc, power = 0.0, 1.0
    for _ in range(n):
        acc += power
        prefix.append(acc)
        power *= r
    row_sq = sum((prefix[i] + prefix[n - 1 - i] - 1.0) ** 2 for i in range(n))
    f = ar1_factor(n, r)
    trace_sq = n * ar1_factor(n, r * r) - 2.0 * row_sq / n + f * f
    return (n - f) ** 2 / trace_sq if trace_sq > 0.0 else n - 1.0


def lag1(xs: Sequence[float]) -> float:
    """The plain lag-1 autocorrelation of a series in time order (0 for a constant one)."""
    m = statistics.fmean(xs)
    den = sum((x - m) ** 2 for x in xs)
    if den == 0.0:
        return 0.0
    return sum((a - m) * (b - m) for a, b in zip(xs, xs[1:])) / den


def upper_r(r: float, n: float) -> float:
    """r one standard error high, in [0, R_MAX]."""
    # An estimated r is uncertain by about sqrt((1 - r^2) / n); an interval that
    # takes r one standard error high errs on the wide side, as it should.
    return min(max(r + math.sqrt(max(1.0 - r * r, 0.0) / n), 0.0), R_MAX)


def estimate_r(xs: Sequence[float]) -> float | None:
    """Lag-1 r, bias-corrected (Kendall 1954), one standard error high, in [0, R_MAX];
    None when too short to estimate."""
    n = len(xs)
    if n < MIN_FOR_R:
        return None
    return upper_r((n * lag1(xs) + 1.0) / (n - 3.0), n)


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
    # The degrees of freedom: Satterthwaite's moment match of s^2, at every n. It
    # errs wide of the df that make this interval exact for a known r (2.5 against
    # 3.5 at n 6, r 0.9; 5.6 against 8.0 at n 40: bench/ar1_exact.py), and by about
    # what an estimated r costs: with the session's r as it is (SeriesMemory) the
    # two balance, 96.0-96.4 % in the widest cells (r 0.77-0.9, n 6-10; 10,000
    # series each) and 93.8-97.9 % in every cell of r 0.5-0.9, n 6-40 at 1,000
    # (bench/calibrate.py simulate, two seeds; bench/window_df_rules.py's rivals).
    # n - f, which the rule before issue 23's audit took where larger, overstates
    # what s^2 knows of sigma at high r (25 df at n 40, r 0.9) and covered 92-93 %
    # there with r known, while the max at n 6-10 overcovered (97.3-98.4 %).
    # r to 0.01 for the df alone: it moves smoothly with r, and a redraw asks often.
    df = max(satterthwaite_df(n, round(r, 2)), 0.5)
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
        # point_r until the windows change: a settler asks for r on every look at
        # its summary (several a sample), and each answer walks up to `keep` windows.
        self._point: tuple[float, int] | None = None
        self._point_stale = True

    def new_segment(self) -> None:
        if self._segments[-1]:
            self._segments.append([])
            self._point_stale = True

    def add(self, x: float) -> None:
        self._segments[-1].append(float(x))
        self._point_stale = True
        total = sum(len(s) for s in self._segments)
        while total > self.keep and len(self._segments) > 1:
            total -= len(self._segments.pop(0))

    def point_r(self) -> tuple[float, int] | None:
        """The bias-corrected lag-1 r (not yet clipped) and how many windows it rests
        on; None while too few windows, or too short segments, say anything."""
        if self._point_stale:
            self._point = self._point_r()
            self._point_stale = False
        return self._point

    def _point_r(self) -> tuple[float, int] | None:
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
        # r 0.5 and 0.77, a little low at 0.9).
        length = n / k
        if length < MIN_SEGMENT:
            return None
        raw = num / den
        return (length * raw + 2.0) / (length - 4.0), n

    @property
    def r(self) -> float | None:
        # The estimate as it is, not one standard error high as a series' own r is
        # (estimate_r): hundreds of the session's windows leave it an error of
        # +-0.03-0.06, low as often as high, and mean_se's df already err wide by
        # about what that error costs. Taken high as well, it widened every short
        # point past the goal (97.3-98.4 % at n 6-10, r 0.77-0.9).
        point = self.point_r()
        return None if point is None else min(max(point[0], 0.0), R_MAX)

    def r_or_prior(self) -> float:
        r = self.r
        return R_PRIOR if r is None else r
