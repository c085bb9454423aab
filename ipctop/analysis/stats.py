"""How sure a figure is: intervals, the difference of two samples, and many at once.

Every interval names its unit of replication and n, and its figure is the
estimate the interval is built around (a geometric mean: rates are positive
and their noise multiplicative, so everything is done on log rates and the
ratio B/A is exp() of a difference). The units, lowest first:

- WINDOWS: sampler windows of one run. They are autocorrelated (the box's load
  drifts), so their interval is AR(1)-corrected (analysis.autocorr): the
  variance of the mean is inflated by f(n, r), and the degrees of freedom are
  Satterthwaite's for s^2 of an AR(1) of that r. r comes from the caller (a
  session's longer series), else from the windows themselves when there are
  at least autocorr.MIN_FOR_R, else autocorr.R_PRIOR. An interval of windows
  covers within-run noise only.
- RUNS: independent runs (the pairs restarted), each summarised once. Runs of
  one box differ by more than their windows do; across sessions the runs are
  the replicate.
- SESSIONS: separate sessions (ipctop started again), each summarised once.
- BLOCKS: ab's interleaved ABBA blocks, one log ratio per block.

The public API other commands build on:

- ``summarize(xs, unit=...)`` -> ``Summary``: estimate, 95 % interval, n, unit.
- ``difference(a, b, unit=..., session_var=...)`` -> ``Difference``: Welch's t
  on log values, plus a session-level variance when the sides come from
  separate sessions and that variance is known.
- ``paired_difference(blocks)``: ab's one-sample t on block log ratios.
- ``log_difference(d, se, df, ...)``: the interval and p of a log ratio whose
  standard error a caller worked out (analysis.point_diff's one new run).
- ``holm(p_values)``: family-wise error over many verdicts.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ipctop.analysis.autocorr import R_PRIOR, estimate_r, mean_se
from ipctop.analysis.batch_means import BATCHES, batch_se
from ipctop.plain import to_plain

CONFIDENCE = 0.95
# The sampler's interval doubles as the window. A longer window does not make
# neighbouring windows independent on a shared box (the load drifts: BENCHMARKS.md,
# "How long a window is"), so the autocorrelation is corrected for instead.
WINDOW_S = 0.5

REGRESSION = "regression"
IMPROVEMENT = "improvement"
NO_DIFFERENCE = "no difference shown"

WINDOWS = "windows"
RUNS = "runs"
SESSIONS = "sessions"
BLOCKS = "blocks"
UNITS = (WINDOWS, RUNS, SESSIONS, BLOCKS)

METHOD_LOG_T = "t on log rates"
TEST_WELCH = "Welch's t on log rates"
TEST_PAIRED = "t on ABBA blocks' log ratios"

# Rates of zero (a stalled window) have no log; they count as this many ops/s,
# which makes the spread huge rather than the arithmetic fail.
_FLOOR = 1e-3
# An interval of a few strongly correlated windows can be astronomically wide;
# beyond a factor e^30 it says nothing more, and exp() must not overflow.
_MAX_HALF = 30.0


class TooFewWindows(ValueError):
    """An interval needs at least two values."""


@dataclass(frozen=True)
class Summary:
    """n values of one rate: the estimate (geometric mean) and a 95 % interval around it.

    `median` is the sample median, kept for readers that want it; the printed
    figure is `estimate`, the centre of the interval.
    """

    n: int
    median: float
    low: float | None
    high: float | None
    method: str
    estimate: float | None = None
    unit: str = WINDOWS
    r: float | None = None  # the lag-1 correlation the interval assumed (windows only)

    def __post_init__(self) -> None:
        if self.estimate is None:
            object.__setattr__(self, "estimate", self.median)

    @property
    def figure(self) -> float:
        return float(self.estimate if self.estimate is not None else self.median)

    @property
    def half_width_pct(self) -> float | None:
        """Half the interval's width in % of the estimate: the "±" of the figure."""
        if self.low is None or self.high is None or self.figure <= 0:
            return None
        return 50.0 * (self.high - self.low) / self.figure

    @property
    def basis(self) -> str:
        """'n=3 runs' or 'n=40 windows, r 0.77': what the interval rests on."""
        text = f"n={self.n} {self.unit}"
        if self.unit == WINDOWS and self.r is not None:
            text += f", lag-1 r {self.r:.2f}"
        return text

    def to_dict(self) -> dict[str, object]:
        # Kept for the order records have: the estimate (always set) second.
        return {"n": self.n, "estimate": self.figure, **to_plain(self)}


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
    unit: str = WINDOWS
    se: float = 0.0  # of log(B/A)
    df: float = math.inf
    notes: tuple[str, ...] = field(default=())

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

    def p_below(self, pct: float) -> float:
        """One-sided p-value against "B is at most pct % below A" (small: it is further below)."""
        limit = math.log1p(-min(pct, 99.999) / 100.0)
        d = math.log(self.ratio)
        if self.se <= 0.0:
            return 0.0 if d < limit else 1.0
        from scipy.stats import t

        return float(t.cdf((d - limit) / self.se, self.df))

    def to_dict(self) -> dict[str, object]:
        # Kept for what it leaves out (se, notes) and adds (the verdict), and an
        # infinite df (a normal test) as JSON's null.
        plain = {k: v for k, v in to_plain(self).items() if k not in ("se", "notes")}
        return {**plain, "df": self.df if math.isfinite(self.df) else None, "verdict": self.verdict}


def logs_of(values: Sequence[float]) -> list[float]:
    return [math.log(max(float(x), _FLOOR)) for x in values]


def geomean(values: Sequence[float]) -> float:
    """The geometric mean; a constant series (or one value) is returned exactly,
    since exp(log(x)) is not x in floats. 0 for no values."""
    if len(values) < 2 or min(values) == max(values):
        return float(values[0]) if values else 0.0
    return math.exp(statistics.fmean(logs_of(values)))


def t_quantile(df: float, confidence: float) -> float:
    # scipy.special's stdtrit is what t.ppf computes, bit for bit, without the
    # distribution's argument machinery: 1.6 us a call instead of 86, and the
    # monitor asks for several intervals at every sample.
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + confidence / 2.0))


def log_mean(
    values: Sequence[float], unit: str = WINDOWS, r: float | None = None
) -> tuple[float, float, float, float]:
    """(mean of logs, its standard error, df, r used) for n >= 2 values of `unit`."""
    logs = logs_of(values)
    if unit == WINDOWS:
        if r is None:
            r = estimate_r(logs)
        if r is None:
            r = R_PRIOR
    else:
        r = 0.0
    m = mean_se(logs, r)
    return m.mean, m.se, m.df, r


def summarize(
    values: Sequence[float],
    confidence: float = CONFIDENCE,
    *,
    unit: str = WINDOWS,
    r: float | None = None,
) -> Summary:
    """The geometric mean of rates (windows in time order, or one value per run)
    with a `confidence` interval valid for their unit."""
    n = len(values)
    if n == 0:
        raise TooFewWindows("nothing to summarize")
    med = float(statistics.median(float(x) for x in values))
    if n < 2:
        return Summary(n, med, None, None, METHOD_LOG_T, float(values[0]), unit, None)
    mean, se, df, r_used = log_mean(values, unit, r)
    half = min(t_quantile(df, confidence) * se, _MAX_HALF)
    method = METHOD_LOG_T
    if unit == WINDOWS:
        method += f", AR(1) r {r_used:.2f}"
    estimate = geomean(values)
    return Summary(
        n,
        med,
        min(math.exp(mean - half), estimate),
        max(math.exp(mean + half), estimate),
        method,
        estimate,
        unit,
        r_used if unit == WINDOWS else None,
    )


def require_interval(windows: Sequence[float], what: str = "an interval") -> Summary:
    """summarize(), but fewer than two values is an error naming `what`."""
    if len(windows) < 2:
        raise TooFewWindows(f"{what} needs at least 2 windows, got {len(windows)}")
    return summarize(windows)


def combine(
    parts: Sequence[tuple[float, float]],
    session_var: float = 0.0,
    session_df: float = math.inf,
) -> tuple[float, float]:
    """(se, Welch-Satterthwaite df) of a sum of independent terms, each (se, df),
    plus one session term of variance 2 x session_var (one offset per side)."""
    terms = [(se * se, df) for se, df in parts]
    if session_var > 0.0:
        terms.append((2.0 * session_var, session_df))
    var = sum(v for v, _ in terms)
    if var == 0.0:
        return 0.0, math.inf
    den = sum(v * v / df for v, df in terms if math.isfinite(df) and df > 0)
    return math.sqrt(var), (var * var / den) if den > 0 else math.inf


def difference(
    a: Sequence[float],
    b: Sequence[float],
    confidence: float = CONFIDENCE,
    *,
    unit: str = WINDOWS,
    r_a: float | None = None,
    r_b: float | None = None,
    session_var: float = 0.0,
    session_df: float = math.inf,
    notes: Sequence[str] = (),
    unit_b: str | None = None,
) -> Difference:
    """B/A by Welch's t on log values of `unit` (B's of `unit_b` when the sides
    differ, e.g. sessions against runs); each side needs at least two.

    session_var (a variance of log rates, e.g. from `ipctop check`) adds the
    spread between sessions when A and B were measured in separate ones."""
    unit_b = unit_b or unit
    if len(a) < 2 or len(b) < 2:
        raise TooFewWindows(
            f"a difference needs at least 2 {unit} a side, got {len(a)} and {len(b)}"
        )
    ma, sa, dfa, _ = log_mean(a, unit, r_a)
    mb, sb, dfb, _ = log_mean(b, unit_b, r_b)
    if unit_b != unit:
        unit = f"{unit} vs {unit_b}"
    se, df = combine([(sa, dfa), (sb, dfb)], session_var, session_df)
    return log_difference(
        mb - ma, se, df, len(a), len(b), test=TEST_WELCH, unit=unit, notes=notes,
        confidence=confidence,
    )  # fmt: skip


def log_difference(
    d: float,
    se: float,
    df: float,
    n_a: int,
    n_b: int,
    *,
    test: str,
    unit: str,
    notes: Sequence[str] = (),
    confidence: float = CONFIDENCE,
) -> Difference:
    """B/A from d = log(B/A), its standard error and degrees of freedom: the
    ratio, its t interval (at most e^_MAX_HALF wide) and the two-sided p-value."""
    if se == 0.0:
        # Both sides constant: the ratio is exact (only a planted sample does this).
        e = math.exp(d)
        return Difference(n_a, n_b, e, e, e, 1.0 if d == 0.0 else 0.0, test, unit, 0.0, df,
                          tuple(notes))  # fmt: skip
    from scipy.stats import t

    half = min(t_quantile(df, confidence) * se, _MAX_HALF)
    p = float(2.0 * t.sf(abs(d) / se, df))
    return Difference(
        n_a,
        n_b,
        math.exp(d),
        math.exp(d - half),
        math.exp(d + half),
        p,
        test,
        unit,
        se,
        df,
        tuple(notes),
    )


def block_log_ratios(blocks: Sequence[tuple[Sequence[float], Sequence[float]]]) -> list[float]:
    """One log(mean B / mean A) per ABBA block that has both sides."""
    return [
        math.log(max(statistics.fmean(b), _FLOOR)) - math.log(max(statistics.fmean(a), _FLOOR))
        for a, b in blocks
        if a and b
    ]


def paired_difference(
    blocks: Sequence[tuple[Sequence[float], Sequence[float]]],
    confidence: float = CONFIDENCE,
    *,
    pilot_sd: float | None = None,
    pilot_n: int | None = None,
) -> Difference:
    """B/A from interleaved blocks, each (A windows, B windows) measured side by
    side (ABBA): one log ratio per block, then a one-sample t on them.

    With a pilot (Stein's two-stage procedure, analysis.stopping) the interval
    is the wider of two: the pilot's s.d. with its n - 1 degrees of freedom
    (the block count was chosen from that s.d., so only then is the coverage
    exact for steady normal blocks) and all blocks' own s.d. Stein's alone
    trusts the pilot: on this VM a pilot of six calm blocks (s.d. 1.1 %) was
    followed by two of -21 % and -19 %, and an A/A run called a 5 % regression
    [-5.9, -4.0]. Over the same blocks it calls nothing Stein's interval would
    not. From 20 blocks on, a third arm: the means of 10 consecutive batches
    with 9 df (analysis.batch_means: a slow drift between the sides)."""
    ratios = block_log_ratios(blocks)
    n = len(ratios)
    if n < 2:
        raise TooFewWindows(f"a paired difference needs at least 2 blocks, got {n}")
    na = sum(len(a) for a, _ in blocks)
    nb = sum(len(b) for _, b in blocks)
    d = statistics.fmean(ratios)
    sd, df = statistics.stdev(ratios), float(n - 1)
    if pilot_sd is not None and pilot_n is not None and pilot_n >= 2:
        from scipy.stats import t

        q = 0.5 + confidence / 2.0
        if t.ppf(q, pilot_n - 1) * pilot_sd > t.ppf(q, n - 1) * sd:
            sd, df = pilot_sd, float(pilot_n - 1)
    se = sd / math.sqrt(n)
    notes: list[str] = []
    arm = batch_se(ratios)
    if (
        arm is not None
        and t_quantile(arm[1], confidence) * arm[0] > t_quantile(df, confidence) * se
    ):
        se, df = arm
        notes.append(f"wider from batch means: {n} blocks in {BATCHES} batches")
    # log_difference caps the interval at e^_MAX_HALF: two blocks of a noisy p99 can
    # reach e^38, more than a record may hold (`ab --json` would refuse to write it).
    return log_difference(
        d, se, df, na, nb, test=TEST_PAIRED, unit=BLOCKS, notes=notes, confidence=confidence
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input's order (family-wise error)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out


def noise_floor(a: Sequence[float], b: Sequence[float], unit: str = WINDOWS) -> float:
    """The smallest difference (in %) an A/A comparison like this one can show:
    the half-width of its interval of B/A."""
    return difference(a, b, unit=unit).half_width_pct


def fmt_interval(s: Summary, fmt: Callable[[float], str]) -> str:
    """'1.23M [1.20M, 1.26M] n=10 windows' with fmt formatting each rate."""
    if s.low is None or s.high is None:
        return f"{fmt(s.figure)} (n={s.n}, no interval)"
    return f"{fmt(s.figure)} [{fmt(s.low)}, {fmt(s.high)}] n={s.n} {s.unit}"


def pct_digits(half_width_pct: float | None) -> int:
    """Decimals a percentage deserves: none once the noise is a few %, one below."""
    if half_width_pct is None or half_width_pct >= 2.0:
        return 0
    return 1


def fmt_diff(d: Difference) -> str:
    """'-5.2 % [-6.8, -3.6]': no more digits than the interval allows."""
    k = pct_digits(d.half_width_pct)
    return f"{d.diff_pct:+.{k}f} % [{d.low_pct:+.{k}f}, {d.high_pct:+.{k}f}]"
