"""What a comparison of records is: one side's point, a row per pair count with
its verdicts, the comparison and its regressions (compare_records builds them)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ipctop.analysis.stats import (
    CONFIDENCE,
    IMPROVEMENT,
    NO_DIFFERENCE,
    REGRESSION,
    Difference,
    holm,
)

UNSETTLED = "unsettled: not judged"
NOT_JUDGED = "not judged: sessions differ"
NOT_JUDGED_WHY = (
    "not judged: sessions differ by an unknown amount; run `ipctop sweep --sessions 5` "
    "once on this box with these CPUs, or give --session-sd, or 2+ records a side"
)
NO_INTERVAL = "no interval (n < 2)"

ALPHA = 1.0 - CONFIDENCE


@dataclass(frozen=True)
class SidePoint:
    """One side at one pair count: the replicate values its interval is built from."""

    values: tuple[float, ...]  # one per session, per run, or (one run only) per window
    unit: str
    settled: bool
    figure: float  # the estimate (geometric mean of values), what the table prints

    @property
    def n(self) -> int:
        return len(self.values)


@dataclass(frozen=True)
class CompareRow:
    pairs: int
    totals: tuple[float | None, ...]  # one per side, None where it has no such pair count
    diffs: tuple[float | None, ...]  # vs the first side; the first's own entry is None
    scalability: tuple[float | None, ...]
    intervals: tuple[Difference | None, ...] = ()  # vs the first side, where both have n >= 2
    settled: tuple[bool, ...] = ()
    samples: tuple[int, ...] = ()  # replicate values behind each total
    units: tuple[str, ...] = ()  # the unit of each side's values
    adjusted: tuple[float | None, ...] = ()  # Holm-adjusted p-value vs the first side
    # Side i is one session against one other session with no session spread known.
    blocked: tuple[bool, ...] = ()

    def decides(self, i: int) -> bool:
        """Whether side i's difference at this point may decide anything."""
        if self.blocked and self.blocked[i]:
            return False
        return bool(self.intervals[i]) and self.settled[0] and self.settled[i]

    def why_not(self, i: int) -> str | None:
        """Why side i's point is not judged (None when it is)."""
        if i == 0 or self.decides(i):
            return None
        if self.totals[i] is None or self.totals[0] is None:
            return "missing on a side"
        if not (self.settled[0] and self.settled[i]):
            return "not settled"
        if self.intervals[i] is None:
            return "fewer than 2 replicate values on a side"
        return NOT_JUDGED_WHY

    def verdict(self, i: int) -> str:
        if i == 0 or self.totals[i] is None or self.totals[0] is None:
            return ""
        if not (self.settled[0] and self.settled[i]):
            return UNSETTLED
        d = self.intervals[i]
        if d is None:
            return NO_INTERVAL
        if self.blocked and self.blocked[i]:
            return NOT_JUDGED
        p = self.adjusted[i] if self.adjusted else d.p_value
        if p is None or p >= ALPHA:
            return NO_DIFFERENCE
        return REGRESSION if d.ratio < 1.0 else IMPROVEMENT


@dataclass(frozen=True)
class Regression:
    label: str
    pairs: int
    diff_pct: float
    high_pct: float | None = None  # the interval's upper end, when the gate used one
    p_holm: float | None = None


@dataclass(frozen=True)
class Comparison:
    labels: tuple[str, ...]  # "6.1.0 (old.json)", "6.1.0 (a.json + b.json)"
    rows: tuple[CompareRow, ...]
    forced: bool = False
    notes: tuple[str, ...] = ()  # forced mismatches, unknowns, steps skipped for no rate
    session_sd_pct: float | None = None  # the session spread added, when one was given
    session_df: float = math.inf  # its degrees of freedom (a measured one's: K - 1)
    session_source: str = ""  # where that spread came from, for the legend
    not_judged: str = ""  # why sides of one session each got no verdict ("" when judged)
    blocked_sides: tuple[int, ...] = ()
    unit: str | None = None  # a load sweep's "group" or "room": its steps are loads

    @property
    def worst_regression_pct(self) -> float | None:
        """The most negative Diff % anywhere (positive if every side improved)."""
        diffs = [d for r in self.rows for d in r.diffs if d is not None]
        return min(diffs) if diffs else None

    @property
    def decidable(self) -> int:
        """Points that have an interval and are settled on both sides."""
        return sum(r.decides(i) for r in self.rows for i in range(1, len(self.labels)))

    def judged(self) -> list[tuple[CompareRow, int, Difference]]:
        return [
            (row, i, row.intervals[i])  # type: ignore[misc]
            for row in self.rows
            for i in range(1, len(self.labels))
            if row.decides(i)
        ]

    def smallest_change_pct(self) -> float | None:
        """The median half-width of the judged intervals: changes smaller than this
        one could not be told from noise by these records."""
        widths = sorted(d.half_width_pct for _, _, d in self.judged())
        return widths[len(widths) // 2] if widths else None

    def regressions(self, threshold_pct: float) -> list[Regression]:
        """Every settled (side, pair count) more than threshold_pct below the first
        side, one-sided at 5 % family-wise over every point judged (Holm)."""
        judged = self.judged()
        adjusted = holm([d.p_below(threshold_pct) for _, _, d in judged])
        return [
            Regression(self.labels[i], row.pairs, d.diff_pct, d.high_pct, p)
            for (row, i, d), p in zip(judged, adjusted)
            if p < ALPHA
        ]
