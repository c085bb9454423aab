"""Decide when the throughput at one pair count has stopped moving.

Settled means stopped moving, and known to within the stated width:

- the window holds at least window_s of samples (it then grows, up to
  max_window_s, so a noisy point can still settle on more evidence);
- the coefficient of variation is below cv_max;
- the 95 % interval of the window's geometric mean is within ±ci_max_pct. The
  windows are autocorrelated, so the interval is AR(1)-corrected with the
  session's own lag-1 r (SeriesMemory: every window of this session, each pair
  count's segment demeaned), which a few windows could never estimate;
- no trend: the 95 % interval of the slope of the log rate (AR(1)-corrected
  too) excludes zero and the fitted change across the window exceeds
  TREND_MIN_PCT, and the point is RISING or FALLING, never settled.

The reading is the geometric mean over the window: the centre of its interval.
Samples whose interval straddles a pair-count change mix two regimes, so the
first `skip` samples after a reset are dropped.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from typing import TYPE_CHECKING

from ipctop.analysis.autocorr import SeriesMemory, slope_se
from ipctop.analysis.stats import Summary, logs_of, summarize, t_quantile

if TYPE_CHECKING:
    from ipctop.engine.sample import Sample

SETTLING = "settling"
SETTLED = "settled"
RISING = "rising"
FALLING = "falling"
# A fitted change smaller than this across the window is not called a trend,
# however sure: the width rule already bounds what is left.
TREND_MIN_PCT = 2.0
# The window grows to this many seconds while a point has not settled.
MAX_WINDOW_S = 30.0
# The stated width: a settled point's 95 % interval is within ± this % of its median.
# With drifting (autocorrelated) samples the interval is about 1.7 x the CV, so
# at 10 % the CV rule still decides on a steady box, while a window of too few
# effective samples (a short visit, a drift) cannot settle on a low CV alone.
CI_MAX_PCT = 10.0


class Settler:
    def __init__(
        self,
        window_s: float = 3.0,
        cv_max: float = 0.05,
        skip: int = 1,
        min_samples: int = 2,
        pairs: int | None = None,
        ci_max_pct: float = CI_MAX_PCT,
        max_window_s: float = MAX_WINDOW_S,
        memory: SeriesMemory | None = None,
        r: float | None = None,
    ) -> None:
        if window_s <= 0:
            raise ValueError(f"window_s must be positive, got {window_s}")
        if cv_max < 0:
            raise ValueError(f"cv_max must not be negative, got {cv_max}")
        if skip < 0:
            raise ValueError(f"skip must not be negative, got {skip}")
        if ci_max_pct <= 0:
            raise ValueError(f"ci_max_pct must be positive, got {ci_max_pct}")
        self.window_s = window_s
        self.max_window_s = max(max_window_s, window_s)
        # The session's windows, for the lag-1 r no short window can estimate.
        self.memory = memory if memory is not None else SeriesMemory()
        self.fixed_r = r  # a known lag-1 r (replay of planted series, tests)
        self.cv_max = cv_max
        self.ci_max_pct = ci_max_pct
        self.skip = skip
        # One sample has a CV of 0, which would "settle" on no evidence.
        self.min_samples = max(2, min_samples)
        self.pairs = pairs
        # Kept across resets: the first sample after a change needs it for its start.
        self._prev_t: float | None = None
        self._window: deque[tuple[float | None, float, float]] = deque()  # (start, end, total)
        self._first: tuple[float | None, float] | None = None  # first counted (start, end)
        self._to_skip = skip
        self._summary_key: tuple[int, tuple[float | None, float, float] | None, float] | None = None
        self._summary: Summary | None = None
        # The trend and the verdict until the window changes: the header, the chart and
        # the session each ask every sample, and a trend is a fitted slope with its t.
        self._version = 0  # counts every change of the window
        self._trend: tuple[tuple[object, ...], float | None] | None = None
        self._settled: tuple[tuple[object, ...], bool] | None = None

    def reset(self, pairs: int | None = None) -> None:
        """Start over, e.g. because the pair count changed."""
        self.pairs = pairs
        self._version += 1
        self._window.clear()
        self._first = None
        self._to_skip = self.skip
        self.memory.new_segment()

    def feed(self, t: float, total_ops_per_s: float, dt: float | None = None) -> None:
        """One sample: the interval ending at t (of length dt, or since the previous t)."""
        self._version += 1
        if dt is not None:
            start = t - dt
        elif self._prev_t is not None:
            start = self._prev_t
        else:
            start = None  # first sample ever and no dt: guessed from the others later
        self._prev_t = t
        if self._to_skip > 0:
            self._to_skip -= 1
            return
        if self._first is None:
            self._first = (start, t)
        self._window.append((start, t, float(total_ops_per_s)))
        self.memory.add(logs_of([total_ops_per_s])[0])
        # Keep a sample while most of its interval (its midpoint) lies in the window.
        horizon = t - self.max_window_s
        typical = self._typical_interval()
        while len(self._window) > self.min_samples:
            s, e, _ = self._window[0]
            if s is None:
                s = e - typical
            if (s + e) / 2.0 >= horizon:
                break
            self._window.popleft()

    def _typical_interval(self) -> float:
        lengths = [e - s for s, e, _ in self._window if s is not None]
        return statistics.median(lengths) if lengths else 0.0

    def feed_sample(self, sample: Sample) -> None:
        """Feed a sampler Sample, resetting first if its pair count differs."""
        if sample.pairs != self.pairs:
            self.reset(sample.pairs)
        self.feed(sample.t, sample.total_ops_per_s, sample.dt)

    @property
    def samples(self) -> int:
        return len(self._window)

    @property
    def window_full(self) -> bool:
        if self._first is None or len(self._window) < self.min_samples:
            return False
        t_now = self._window[-1][1]
        typical = self._typical_interval()
        start, end = self._first
        t_start = start if start is not None else end - typical
        # Half an interval of slack so timer jitter does not cost a whole extra sample.
        return t_now - t_start >= self.window_s - typical / 2.0

    @property
    def reading(self) -> float | None:
        """Geometric mean of the window's ops/s, None before the first counted sample."""
        if not self._window:
            return None
        return self.summary.figure

    @property
    def cv(self) -> float | None:
        """Coefficient of variation over the window; None with too few samples or no throughput."""
        if len(self._window) < 2:
            return None
        values = [x for _, _, x in self._window]
        mean = statistics.fmean(values)
        if mean <= 0:
            return None
        return statistics.stdev(values) / mean

    @property
    def values(self) -> tuple[float, ...]:
        """The window's samples, oldest first: what a settled point's interval is built from."""
        return tuple(x for _, _, x in self._window)

    @property
    def r(self) -> float:
        """The lag-1 r the window's interval assumes: the session's, else the prior."""
        return self.fixed_r if self.fixed_r is not None else self.memory.r_or_prior()

    @property
    def summary(self) -> Summary:
        # reading, half_width_pct, settled and state each ask for it on every
        # sample: made once per change of the window, not once per question.
        key = (len(self._window), self._window[-1] if self._window else None, self.r)
        if self._summary is None or self._summary_key != key:
            self._summary = summarize(self.values, r=self.r)
            self._summary_key = key
        return self._summary

    @property
    def half_width_pct(self) -> float | None:
        """Half the 95 % interval of the window's geometric mean, in % of it."""
        if len(self._window) < 2:
            return None
        return self.summary.half_width_pct

    def _looked_at(self) -> tuple[object, ...]:
        """What the trend and the verdict depend on beyond the window's values."""
        return (self._version, self.r, self.cv_max, self.ci_max_pct, self.window_s)

    @property
    def trend_pct(self) -> float | None:
        """The fitted change across the window in %, when its slope is sure (else None)."""
        key = self._looked_at()
        if self._trend is None or self._trend[0] != key:
            self._trend = (key, self._trend_now())
        return self._trend[1]

    def _trend_now(self) -> float | None:
        if len(self._window) < 4:
            return None
        ts = [e for _, e, _ in self._window]
        logs = logs_of(self.values)
        b, se, df = slope_se(ts, logs, self.r)
        if b == 0.0:
            return None
        half = t_quantile(df, 0.95) * se
        if abs(b) <= half:
            return None
        change = 100.0 * math.expm1(b * (ts[-1] - ts[0]))
        return change if abs(change) >= TREND_MIN_PCT else None

    @property
    def settled(self) -> bool:
        key = self._looked_at()
        if self._settled is None or self._settled[0] != key:
            self._settled = (key, self._settled_now())
        return self._settled[1]

    def _settled_now(self) -> bool:
        cv = self.cv
        if cv is None or cv >= self.cv_max or not self.window_full:
            return False
        half = self.half_width_pct
        return half is not None and half <= self.ci_max_pct and self.trend_pct is None

    @property
    def state(self) -> str:
        if self.window_full:
            trend = self.trend_pct
            if trend is not None:
                return RISING if trend > 0 else FALLING
        return SETTLED if self.settled else SETTLING
