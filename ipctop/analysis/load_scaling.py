"""Does it hold as the load grows on a fixed set of CPUs? Pure arithmetic.

The seeds' hackbench table put beside each time "a projection for the time
1000 groups would take, assuming linear scaling": time x 1000 / groups. With
linear scaling that column is flat; its growth is what made 2.6.4's
non-linear behaviour visible (388, 390, ... 547, 524). Here every load's
time is the median of repeated fresh runs with its 95 % interval
(stats.summarize: each run is one replicate), and the projection and the
per-unit cost carry the same interval, scaled.

A knee is the first load whose per-unit cost is, with its whole interval,
more than KNEE_PCT above the cheapest load before it (interval above
interval): the same 10 % margin as check's scaling collapse, so run-to-run
noise does not read as one.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from .stats import RUNS, Summary, summarize

PROJECT_TO = 1000  # the seeds' column: the time 1000 groups would take
KNEE_PCT = 10.0


def projection(seconds: float, units: int, target: int = PROJECT_TO) -> float:
    """The time `target` units would take if time grew linearly with units."""
    if units < 1:
        raise ValueError("a projection needs at least one unit")
    return seconds * target / units


@dataclass(frozen=True)
class LoadPoint:
    """One load: its units and the seconds each repeated run took (in run order)."""

    units: int
    seconds: tuple[float, ...]
    messages: int  # messages one run passes

    @property
    def time(self) -> Summary:
        """The median time with its interval, built on the runs' rates and turned
        back: stats works on log rates with a floor meant for ops/s, under which
        a sub-millisecond time would fall; log time is -log rate plus a constant,
        so the interval is the same one."""
        if self.messages <= 0:
            return summarize(self.seconds, unit=RUNS)
        r = summarize([self.messages / s for s in self.seconds], unit=RUNS)
        med = float(statistics.median(self.seconds))
        m = self.messages
        est = None if r.estimate is None else m / r.estimate
        if r.low is None or r.high is None:
            return Summary(r.n, med, None, None, r.method, est, RUNS)
        return Summary(r.n, med, m / r.high, m / r.low, r.method, est, RUNS)

    def cost(self) -> tuple[float, float | None, float | None]:
        """Seconds per unit: median, low, high (None without an interval)."""
        s = self.time
        scale = 1.0 / self.units
        return (
            s.median * scale,
            None if s.low is None else s.low * scale,
            None if s.high is None else s.high * scale,
        )

    def projection(self, target: int = PROJECT_TO) -> tuple[float, float | None, float | None]:
        med, low, high = self.cost()
        return (
            med * target,
            None if low is None else low * target,
            None if high is None else high * target,
        )

    @property
    def rate(self) -> float:
        """Messages per second at the median time."""
        return self.messages / self.time.median if self.time.median > 0 else 0.0


@dataclass(frozen=True)
class Knee:
    at: LoadPoint
    base: LoadPoint
    rise_pct: float

    def line(self, unit: str) -> str:
        c, lo, hi = self.at.cost()
        b, blo, bhi = self.base.cost()
        return (
            f"knee at {self.at.units} {unit}s: {_ms(c)} [{_ms(lo)}, {_ms(hi)}] per {unit}, "
            f"+{self.rise_pct:.0f} % over {_ms(b)} [{_ms(blo)}, {_ms(bhi)}] at {self.base.units}"
        )


def find_knee(points: Sequence[LoadPoint], margin_pct: float = KNEE_PCT) -> Knee | None:
    """The first load whose cost interval lies wholly above the cheapest earlier
    load's interval and whose median is more than margin_pct above its median."""
    pts = sorted(points, key=lambda p: p.units)
    best: LoadPoint | None = None
    for p in pts:
        c, lo, _ = p.cost()
        if best is not None:
            b, _, bhi = best.cost()
            rise = 100.0 * (c - b) / b if b > 0 else 0.0
            if lo is not None and bhi is not None and lo > bhi and rise > margin_pct:
                return Knee(p, best, rise)
        if best is None or c < best.cost()[0]:
            best = p
    return None


def _ms(seconds: float | None) -> str:
    return "?" if seconds is None else f"{seconds * 1e3:.3g} ms"


@dataclass(frozen=True)
class RatePoint:
    """One load of a continuous workload: the rate of each repeated fresh run."""

    units: int
    rates: tuple[float, ...]

    @property
    def rate(self) -> Summary:
        return summarize(self.rates, unit=RUNS)  # each fresh run is one replicate


@dataclass(frozen=True)
class Collapse:
    at: RatePoint
    best: RatePoint
    drop_pct: float

    def line(self, unit: str, what: str = "messages/s") -> str:
        a, b = self.at.rate, self.best.rate
        return (
            f"collapse at {self.at.units} {unit}s: {a.median:,.0f} [{_n(a.low)}, {_n(a.high)}] "
            f"{what}, {self.drop_pct:.0f} % below {b.median:,.0f} [{_n(b.low)}, {_n(b.high)}] "
            f"at {self.best.units}"
        )


def find_collapse(points: Sequence[RatePoint], margin_pct: float = KNEE_PCT) -> Collapse | None:
    """The first load whose rate interval lies wholly below the best earlier load's
    and whose median is more than margin_pct below its median (check's 10 %)."""
    best: RatePoint | None = None
    for p in sorted(points, key=lambda p: p.units):
        s = p.rate
        if best is not None:
            b = best.rate
            drop = 100.0 * (b.median - s.median) / b.median if b.median > 0 else 0.0
            if s.high is not None and b.low is not None and s.high < b.low and drop > margin_pct:
                return Collapse(p, best, drop)
        if best is None or s.median > best.rate.median:
            best = p
    return None


def _n(v: float | None) -> str:
    return "?" if v is None else f"{v:,.0f}"
