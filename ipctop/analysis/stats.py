"""How sure a figure is: intervals from windows, and the difference of two samples.

A *window* is one reading of a rate (ops/s over a fixed stretch of time).
Every figure ipctop reports is built from K windows and carries n, the median
and a 95 % confidence interval; this module is the only place that computes
them, so the CLI, the TUI, `compare`, `ab` and `check` agree.

The public API is small on purpose (other commands build on it):

- ``summarize(windows)`` -> ``Summary``: n, median, a 95 % interval.
- ``difference(a, b)`` -> ``Difference``: B/A with its 95 % interval, a
  p-value and a verdict (regression / improvement / no difference shown).
- ``noise_floor(a, b)``: the smallest difference an A/A pair like this one
  could show, as a percentage (the interval's half-width).

Choices, stated once:

- The interval of one sample is distribution-free when it can be: the order
  statistics around the median whose binomial coverage is at least 95 %
  (needs n >= 6). With 2..5 windows no such interval exists; it falls back to
  Student's t on the log rates (an interval of the geometric mean).
- Two samples are compared with Welch's t test on log rates: rates are
  positive and their noise is multiplicative, and the log turns a ratio into a
  difference, so the interval of B/A is exp() of Welch's interval. Welch does
  not assume equal variances (A and B rarely have them).
- Windows are not independent on a shared box: its load drifts over tens of
  seconds, so consecutive windows of any length up to 2 s were correlated
  (lag-1 r 0.5..0.9, bench/window_autocorr.py). When the windows of a sample
  (in time order) show a positive lag-1 autocorrelation r, the interval is a
  t interval on the log rates over an effective n = n (1 - r) / (1 + r), which
  widens it by sqrt((1 + r) / (1 - r)) as it should; only when r <= 0 is the
  distribution-free median interval used.
- Two configurations are told apart best by interleaving them (``ipctop ab``):
  an ABBA block cancels a linear drift, so ``paired_difference`` takes one
  log ratio per block, log(mean B) - log(mean A), and a one-sample t on those.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95
# The sampler's interval doubles as the window. No length up to 2 s made the
# windows independent on the shared box (the load drifts), so length buys
# nothing past the sampler's 0.5 s; the autocorrelation is corrected for instead.
WINDOW_S = 0.5

REGRESSION = "regression"
IMPROVEMENT = "improvement"
NO_DIFFERENCE = "no difference shown"

METHOD_ORDER = "order statistics of the median"
METHOD_LOG_T = "t on log rates"
TEST_WELCH = "Welch's t on log rates"
TEST_PAIRED = "t on ABBA blocks' log ratios"
# Below this many windows the autocorrelation estimate is noise; it is taken as 0.
MIN_FOR_R = 8

# Rates of zero (a stalled window) have no log; they count as this many ops/s,
# which makes the spread huge rather than the arithmetic fail.
_FLOOR = 1e-3


class TooFewWindows(ValueError):
    """An interval needs at least two windows."""


@dataclass(frozen=True)
class Summary:
    """n windows of one rate: their median and a 95 % interval (None when n < 2)."""

    n: int
    median: float
    low: float | None
    high: float | None
    method: str

    @property
    def half_width_pct(self) -> float | None:
        """Half the interval's width in % of the median: the "±" of the figure."""
        if self.low is None or self.high is None or self.median <= 0:
            return None
        return 50.0 * (self.high - self.low) / self.median

    def to_dict(self) -> dict[str, object]:
        return {
            "n": self.n,
            "median": self.median,
            "low": self.low,
            "high": self.high,
            "method": self.method,
        }


@dataclass(frozen=True)
class Difference:
    """B against A: the ratio of their geometric means with a 95 % interval."""

    n_a: int
    n_b: int
    ratio: float
    low: float
    high: float
    p_value: float
    test: str = TEST_WELCH

    @property
    def diff_pct(self) -> float:
        return 100.0 * (self.ratio - 1.0)

    @property
    def low_pct(self) -> float:
        return 100.0 * (self.low - 1.0)

    @property
    def high_pct(self) -> float:
        return 100.0 * (self.high - 1.0)

    @property
    def half_width_pct(self) -> float:
        return 50.0 * (self.high - self.low) / self.ratio

    @property
    def verdict(self) -> str:
        """Regression or improvement only when the whole interval is on one side of 0."""
        if self.high < 1.0:
            return REGRESSION
        if self.low > 1.0:
            return IMPROVEMENT
        return NO_DIFFERENCE

    def below(self, pct: float) -> bool:
        """True when the whole interval lies more than pct % below A (a CI gate)."""
        return self.high_pct < -pct

    def to_dict(self) -> dict[str, object]:
        return {
            "n_a": self.n_a,
            "n_b": self.n_b,
            "ratio": self.ratio,
            "low": self.low,
            "high": self.high,
            "p_value": self.p_value,
            "test": self.test,
            "verdict": self.verdict,
        }


def _logs(windows: Sequence[float]) -> list[float]:
    return [math.log(max(float(x), _FLOOR)) for x in windows]


def lag1_autocorrelation(xs: Sequence[float]) -> float:
    """The lag-1 autocorrelation of a series in time order (0 for a constant one)."""
    m = statistics.fmean(xs)
    den = sum((x - m) ** 2 for x in xs)
    if den == 0:
        return 0.0
    return sum((a - m) * (b - m) for a, b in zip(xs, xs[1:])) / den


def effective_n(logs: Sequence[float]) -> float:
    """n shrunk by the positive lag-1 autocorrelation: n (1 - r) / (1 + r), at least 2."""
    n = len(logs)
    if n < MIN_FOR_R:
        return float(n)
    r = min(max(lag1_autocorrelation(logs), 0.0), 0.9)
    return max(2.0, n * (1.0 - r) / (1.0 + r))


def _t_quantile(df: float, confidence: float) -> float:
    from scipy.stats import t

    return float(t.ppf(0.5 + confidence / 2.0, df))


def median_rank_interval(n: int, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """0-based ranks (lo, hi) of the sorted sample bounding the median with at
    least `confidence` coverage, or None when n is too small for any."""
    from scipy.stats import binom

    # Coverage of [x_(k), x_(n-1-k)] is 1 - 2 P(X <= k) with X ~ Binomial(n, 1/2).
    best = None
    for k in range(n // 2):
        if 1.0 - 2.0 * float(binom.cdf(k, n, 0.5)) >= confidence:
            best = k
        else:
            break
    if best is None:
        return None
    return best, n - 1 - best


def summarize(windows: Sequence[float], confidence: float = CONFIDENCE) -> Summary:
    """n, median and a `confidence` interval of rates given in time order."""
    n = len(windows)
    if n == 0:
        raise TooFewWindows("no windows to summarize")
    xs = sorted(float(x) for x in windows)
    med = float(statistics.median(xs))
    if n < 2:
        return Summary(n, med, None, None, METHOD_ORDER)
    logs = _logs(windows)
    n_eff = effective_n(logs)
    ranks = median_rank_interval(n, confidence) if n_eff == n else None
    if ranks is not None:
        return Summary(n, med, xs[ranks[0]], xs[ranks[1]], METHOD_ORDER)
    m = statistics.fmean(logs)
    half = _t_quantile(n_eff - 1, confidence) * statistics.stdev(logs) / math.sqrt(n_eff)
    method = METHOD_LOG_T if n_eff == n else f"{METHOD_LOG_T}, effective n {n_eff:.1f}"
    return Summary(n, med, math.exp(m - half), math.exp(m + half), method)


def require_interval(windows: Sequence[float], what: str = "an interval") -> Summary:
    """summarize(), but fewer than two windows is an error naming `what`."""
    if len(windows) < 2:
        raise TooFewWindows(f"{what} needs at least 2 windows, got {len(windows)}")
    return summarize(windows)


def difference(
    a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE
) -> Difference:
    """B/A by Welch's t on log rates; each side needs at least two windows."""
    if len(a) < 2 or len(b) < 2:
        raise TooFewWindows(
            f"a difference needs at least 2 windows a side, got {len(a)} and {len(b)}"
        )
    la, lb = _logs(a), _logs(b)
    na, nb = effective_n(la), effective_n(lb)
    ma, mb = statistics.fmean(la), statistics.fmean(lb)
    va, vb = statistics.variance(la) / na, statistics.variance(lb) / nb
    d = mb - ma
    se = math.sqrt(va + vb)
    if se == 0.0:
        # Both sides constant: the ratio is exact (only a planted sample does this).
        p = 1.0 if d == 0.0 else 0.0
        return Difference(len(a), len(b), math.exp(d), math.exp(d), math.exp(d), p)
    # Welch-Satterthwaite degrees of freedom.
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    from scipy.stats import t

    half = _t_quantile(df, confidence) * se
    p = float(2.0 * t.sf(abs(d) / se, df))
    return Difference(len(a), len(b), math.exp(d), math.exp(d - half), math.exp(d + half), p)


def paired_difference(
    blocks: Sequence[tuple[Sequence[float], Sequence[float]]], confidence: float = CONFIDENCE
) -> Difference:
    """B/A from interleaved blocks, each (A windows, B windows) measured side by
    side (ABBA): one log ratio per block, then a one-sample t on them."""
    ratios = [
        math.log(max(statistics.fmean(b), _FLOOR)) - math.log(max(statistics.fmean(a), _FLOOR))
        for a, b in blocks
        if a and b
    ]
    n = len(ratios)
    if n < 2:
        raise TooFewWindows(f"a paired difference needs at least 2 blocks, got {n}")
    na = sum(len(a) for a, _ in blocks)
    nb = sum(len(b) for _, b in blocks)
    d = statistics.fmean(ratios)
    se = statistics.stdev(ratios) / math.sqrt(n)
    if se == 0.0:
        p = 1.0 if d == 0.0 else 0.0
        return Difference(na, nb, math.exp(d), math.exp(d), math.exp(d), p, TEST_PAIRED)
    from scipy.stats import t

    half = _t_quantile(n - 1, confidence) * se
    p = float(2.0 * t.sf(abs(d) / se, n - 1))
    return Difference(na, nb, math.exp(d), math.exp(d - half), math.exp(d + half), p, TEST_PAIRED)


def noise_floor(a: Sequence[float], b: Sequence[float]) -> float:
    """The smallest difference (in %) an A/A comparison like this one can show:
    the half-width of its interval of B/A."""
    return difference(a, b).half_width_pct


def fmt_interval(s: Summary, fmt) -> str:
    """'1.23M [1.20M, 1.26M] n=10' with fmt formatting each rate."""
    if s.low is None or s.high is None:
        return f"{fmt(s.median)} (n={s.n}, no interval)"
    return f"{fmt(s.median)} [{fmt(s.low)}, {fmt(s.high)}] n={s.n}"


def pct_digits(half_width_pct: float | None) -> int:
    """Decimals a percentage deserves: none once the noise is a few %, one below."""
    if half_width_pct is None or half_width_pct >= 2.0:
        return 0
    return 1


def fmt_diff(d: Difference) -> str:
    """'-5.2 % [-6.8, -3.6]': no more digits than the interval allows."""
    k = pct_digits(d.half_width_pct)
    return f"{d.diff_pct:+.{k}f} % [{d.low_pct:+.{k}f}, {d.high_pct:+.{k}f}]"
