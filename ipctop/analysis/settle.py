"""Decide when the throughput at one pair count has stopped moving.

The reading is the mean over a trailing window, trusted only once the window
is full, its coefficient of variation (sample stdev / mean) is small and the
95 % interval of its samples (analysis.stats) is within ±ci_max_pct of the
median: a point is never called settled on a wide interval.
Samples whose interval straddles a pair-count change mix two regimes, so the
first `skip` samples after a reset are dropped.
"""

from __future__ import annotations

import statistics
from collections import deque
from typing import TYPE_CHECKING

from ipctop.analysis.stats import summarize

if TYPE_CHECKING:
    from ipctop.engine.sample import Sample

SETTLING = "settling"
SETTLED = "settled"
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

    def reset(self, pairs: int | None = None) -> None:
        """Start over, e.g. because the pair count changed."""
        self.pairs = pairs
        self._window.clear()
        self._first = None
        self._to_skip = self.skip

    def feed(self, t: float, total_ops_per_s: float, dt: float | None = None) -> None:
        """One sample: the interval ending at t (of length dt, or since the previous t)."""
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
        # Keep a sample while most of its interval (its midpoint) lies in the window.
        horizon = t - self.window_s
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
        """Mean total ops/s over the window, None before the first counted sample."""
        if not self._window:
            return None
        return statistics.fmean(x for _, _, x in self._window)

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
    def half_width_pct(self) -> float | None:
        """Half the 95 % interval of the window's samples, in % of their median."""
        if len(self._window) < 2:
            return None
        return summarize(self.values).half_width_pct

    @property
    def settled(self) -> bool:
        cv = self.cv
        if cv is None or cv >= self.cv_max or not self.window_full:
            return False
        half = self.half_width_pct
        return half is not None and half <= self.ci_max_pct

    @property
    def state(self) -> str:
        return SETTLED if self.settled else SETTLING
