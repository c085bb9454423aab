"""Scaling arithmetic the way the kernel threads read their numbers.

Scalability % = total(N) / total(1) x 100, so linear on 2 CPUs is 200 %.
Efficiency %  = total(N) / (N x total(1)) x 100, so linear is 100 % at any N.
Diff %        = (new - old) / old x 100, between two runs at the same N.

Every ratio needs the 1-pair point; without it the functions return None
rather than guess a baseline.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ipctop.analysis.settle import CI_MAX_PCT
from ipctop.analysis.stats import RUNS, WINDOWS, Summary, TooFewWindows, difference, summarize


def spread_pct(totals: Sequence[float]) -> float:
    """100 x (max - min) / median of repeated totals; 0 for a single run."""
    if len(totals) < 2:
        return 0.0
    med = statistics.median(totals)
    if med <= 0:
        return 0.0
    return 100.0 * (max(totals) - min(totals)) / med


@dataclass(frozen=True)
class ScalingPoint:
    """The settled throughput at one pair count.

    per_pair and spread_pct are derived when left out, so callers that only
    know (pairs, total) can still build one.
    """

    pairs: int
    total_ops_per_s: float
    per_pair: float | None = None
    repeats: tuple[float, ...] = ()
    spread_pct: float | None = None
    settled: bool = True
    # Window rates the point was built from (analysis.stats); empty in old records.
    windows: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        # frozen: derived fields go through object.__setattr__
        repeats = tuple(float(x) for x in self.repeats) or (float(self.total_ops_per_s),)
        object.__setattr__(self, "repeats", repeats)
        if self.per_pair is None:
            per = self.total_ops_per_s / self.pairs if self.pairs > 0 else 0.0
            object.__setattr__(self, "per_pair", per)
        if self.spread_pct is None:
            object.__setattr__(self, "spread_pct", spread_pct(repeats))
        object.__setattr__(self, "windows", tuple(float(x) for x in self.windows))

    @property
    def unit(self) -> str:
        """The replicate: runs (the pairs restarted) when there are two or more, else
        the one run's windows (autocorrelated, corrected for), else the one run."""
        if len(self.repeats) >= 2 or not self.windows:
            return RUNS
        return WINDOWS

    @property
    def samples(self) -> tuple[float, ...]:
        """What an interval is built from: one value per unit (see `unit`)."""
        return self.repeats if self.unit == RUNS else self.windows

    @property
    def summary(self) -> Summary:
        """n, the estimate (geometric mean) and 95 % interval of the point's samples."""
        return summarize(self.samples, unit=self.unit)

    @classmethod
    def from_repeats(
        cls,
        pairs: int,
        totals: Sequence[float],
        settled: bool = True,
        windows: Sequence[float] = (),
    ) -> ScalingPoint:
        """A point whose total is the median of its windows when it has them, else
        of repeated runs (robust to one bad run either way)."""
        if not totals:
            raise ValueError("a scaling point needs at least one total")
        return cls(
            pairs=pairs,
            total_ops_per_s=float(statistics.median(windows or totals)),
            repeats=tuple(float(x) for x in totals),
            settled=settled,
            windows=tuple(windows),
        )


def _by_pairs(points: Iterable[ScalingPoint]) -> dict[int, ScalingPoint]:
    return {p.pairs: p for p in points}


def _base(points: Iterable[ScalingPoint]) -> float | None:
    one = _by_pairs(points).get(1)
    if one is None or one.total_ops_per_s <= 0:
        return None
    return one.total_ops_per_s


def scalability_pct(points: Iterable[ScalingPoint], n: int) -> float | None:
    """total(n) / total(1) x 100, or None if either point is missing."""
    points = list(points)
    base = _base(points)
    pt = _by_pairs(points).get(n)
    if base is None or pt is None:
        return None
    return 100.0 * pt.total_ops_per_s / base


def scalability_interval(points: Iterable[ScalingPoint], n: int) -> tuple[float, float] | None:
    """The 95 % interval of total(n) / total(1) x 100 from both points' windows
    (Welch on log rates, analysis.stats), or None without two windows a side."""
    by = _by_pairs(points)
    one, pt = by.get(1), by.get(n)
    if one is None or pt is None or n == 1:
        return None
    try:
        d = difference(one.samples, pt.samples, unit=one.unit, unit_b=pt.unit)
    except TooFewWindows:
        return None
    return 100.0 * d.low, 100.0 * d.high


def above_linear(points: Iterable[ScalingPoint], n: int, short: bool = False) -> str | None:
    """A line naming a scalability above linear (n x 100 %), with its interval;
    None at or below linear. Above linear is either a low 1-pair reading (noise,
    other load on its CPU) or a real effect (a cache, a clock that rises with
    load), so it is never passed over as "ok". short: for a narrow table."""
    points = list(points)
    scal = scalability_pct(points, n)
    # A relative margin: two geometric means of the same planted rate can differ
    # in the last bit, and 200.0000001 % is not above linear.
    if scal is None or n < 2 or scal <= 100.0 * n * (1 + 1e-9):
        return None
    span = scalability_interval(points, n)
    linear = 100.0 * n
    figure = f"{scal:.0f} %" if span is None else f"{scal:.0f} % [{span[0]:.0f}, {span[1]:.0f}]"
    if span is None:
        why = "no interval"
        long = "no interval to tell noise from a low 1-pair reading or a cache/clock effect"
    elif span[0] <= linear:
        why = "within noise"
        long = "linear is inside the interval: noise, not a gain"
    else:
        why = "beyond noise"
        long = "beyond its interval: a low 1-pair reading (load on its CPU) or a cache/clock effect"
    if short:
        return f"{figure} > linear {linear:.0f} %, {why}"
    return f"{figure} is above linear ({linear:.0f} %): {long}"


def efficiency_pct(points: Iterable[ScalingPoint], n: int) -> float | None:
    """total(n) / (n x total(1)) x 100, or None if either point is missing."""
    scal = scalability_pct(points, n)
    if scal is None or n <= 0:
        return None
    return scal / n


def diff_pct(old: float | None, new: float | None) -> float | None:
    """(new - old) / old x 100; None when there is nothing sensible to divide by."""
    if old is None or new is None or old <= 0:
        return None
    return 100.0 * (new - old) / old


def ideal_line(points: Iterable[ScalingPoint]) -> list[tuple[int, float]] | None:
    """(pairs, pairs x total(1)) for every pair count present: perfect linear scaling."""
    points = list(points)
    base = _base(points)
    if base is None:
        return None
    return [(p.pairs, p.pairs * base) for p in sorted(points, key=lambda p: p.pairs)]


@dataclass
class _Slot:
    settled: list[float] = field(default_factory=list)
    provisional: float | None = None
    windows: list[float] = field(default_factory=list)  # every settled visit's samples
    replaced: int = 0  # earlier visits dropped because the latest one disagreed with them
    # The settled point as last built: its interval is the costly part, and the
    # screen asks for the curve at every redraw while visits come seconds apart.
    point: ScalingPoint | None = field(default=None, compare=False)


class ScalingCurve:
    """Scaling points collected while the pair count moves up and down.

    A live session visits pair counts in any order (1, 2, 3, 2, 3...). Each
    settled reading at a pair count is kept as one repeat, so a revisit adds
    evidence instead of overwriting it; the point's total is their median.
    An unsettled reading only stands in until the first settled one arrives,
    so the curve can draw something while the numbers are still moving.
    Call add(..., settled=True) once per settled visit, not once per sample.

    A point is settled only within its stated width (settle.CI_MAX_PCT): when
    a revisit's windows pooled with the earlier ones would widen the interval
    past it (the box changed between the visits), the earlier visits are
    dropped and the latest stands alone (`replaced` counts them), rather than
    a "settled" point of ±150 % whose bar stretches the chart.
    """

    def __init__(self) -> None:
        self._slots: dict[int, _Slot] = {}

    def add(
        self, pairs: int, total: float, settled: bool = True, windows: Sequence[float] = ()
    ) -> None:
        """windows: the samples a settled reading was made of, kept for its interval."""
        if pairs < 1:
            raise ValueError(f"pair count must be at least 1, got {pairs}")
        slot = self._slots.setdefault(pairs, _Slot())
        if settled:
            new = [float(x) for x in windows]
            if slot.settled and new and slot.windows:
                pooled = summarize(slot.windows + new).half_width_pct
                if pooled is None or pooled > CI_MAX_PCT:
                    slot.replaced += len(slot.settled)
                    slot.settled.clear()
                    slot.windows.clear()
            slot.settled.append(float(total))
            slot.windows.extend(new)
            slot.provisional = None
            slot.point = None
        elif not slot.settled:
            slot.provisional = float(total)

    def points(self) -> list[ScalingPoint]:
        out = []
        for pairs in sorted(self._slots):
            slot = self._slots[pairs]
            if slot.settled and slot.point is not None:
                out.append(slot.point)
            elif slot.settled:
                # The total stays the median of the visits; the windows give the interval.
                point = ScalingPoint.from_repeats(pairs, slot.settled, settled=True)
                if slot.windows:
                    half = summarize(slot.windows).half_width_pct
                    point = ScalingPoint(
                        pairs,
                        point.total_ops_per_s,
                        repeats=point.repeats,
                        # Never settled wider than the stated width, whatever said so.
                        settled=half is not None and half <= CI_MAX_PCT,
                        windows=tuple(slot.windows),
                    )
                slot.point = point
                out.append(point)
            elif slot.provisional is not None:
                out.append(ScalingPoint(pairs, slot.provisional, settled=False))
        return out

    def replaced(self, pairs: int) -> int:
        """How many earlier settled visits at this pair count a disagreeing revisit dropped."""
        slot = self._slots.get(pairs)
        return slot.replaced if slot is not None else 0

    def reset(self) -> None:
        self._slots.clear()

    def __len__(self) -> int:
        return len(self.points())

    def as_rows(self) -> list[dict[str, Any]]:
        """One dict per pair count, with every derived figure (None where unknown)."""
        pts = self.points()
        return [
            {
                "pairs": p.pairs,
                "total_ops_per_s": p.total_ops_per_s,
                "per_pair": p.per_pair,
                "scalability_pct": scalability_pct(pts, p.pairs),
                "efficiency_pct": efficiency_pct(pts, p.pairs),
                "spread_pct": p.spread_pct,
                "repeats": list(p.repeats),
                "settled": p.settled,
            }
            for p in pts
        ]
