"""Side-by-side comparison of records, as the kernel threads did between kernels,
with a verdict per point that says whether the difference is real.

Each side is one record or several pooled (repeated runs on one box, or
separate sessions): their windows at a pair count are put together. Diff % is
each side against the first at the same pair count, with the 95 % interval of
B/A from Welch's t on the log window rates (analysis.stats); scalability % is
each side against its own 1-pair total.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from ipctop.analysis.load_curve import hold_pct
from ipctop.analysis.scaling import ScalingPoint, diff_pct, scalability_pct
from ipctop.analysis.stats import TEST_WELCH, Difference, difference, pct_digits
from ipctop.errors import UsageError
from ipctop.output.record import record_points
from ipctop.output.tables import fmt_int, fmt_pct, format_table

if TYPE_CHECKING:
    from ipctop.output.record import Record

# What must match for a comparison to mean anything (the TUI's baseline uses
# the first three; compare refuses any of these differing).
SAME_KEYS = ("workload", "placement", "mode")
MATCH_KEYS = SAME_KEYS + (
    "engine", "cpus", "size", "threads", "sems", "think_ns", "queues", "prefill", "queue_keys",
    "load_unit", "fds", "loops", "transport",  # a load sweep's (commands/load_record.py)
)  # fmt: skip

UNSETTLED = "unsettled: not judged"
NO_INTERVAL = "no interval (n < 2)"

Side = Union["Record", Sequence["Record"]]


@dataclass(frozen=True)
class CompareRow:
    pairs: int
    totals: tuple[float | None, ...]  # one per side, None where it has no such pair count
    diffs: tuple[float | None, ...]  # vs the first side; the first's own entry is None
    scalability: tuple[float | None, ...]
    intervals: tuple[Difference | None, ...] = ()  # vs the first side, where both have n >= 2
    settled: tuple[bool, ...] = ()
    samples: tuple[int, ...] = ()  # windows (or runs) behind each total

    def decides(self, i: int) -> bool:
        """Whether side i's difference at this point may decide anything."""
        return bool(self.intervals[i]) and self.settled[0] and self.settled[i]

    def verdict(self, i: int) -> str:
        if i == 0 or self.totals[i] is None or self.totals[0] is None:
            return ""
        if not (self.settled[0] and self.settled[i]):
            return UNSETTLED
        d = self.intervals[i]
        return d.verdict if d is not None else NO_INTERVAL


@dataclass(frozen=True)
class Regression:
    label: str
    pairs: int
    diff_pct: float
    high_pct: float | None = None  # the interval's upper end, when the gate used one


@dataclass(frozen=True)
class Comparison:
    labels: tuple[str, ...]  # "6.1.0 (old.json)", "6.1.0 (a.json + b.json)"
    rows: tuple[CompareRow, ...]
    forced: bool = False
    notes: tuple[str, ...] = ()  # mismatches accepted because of force, and unknowns
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

    def regressions(self, threshold_pct: float) -> list[Regression]:
        """Every settled (side, pair count) whose whole interval lies below -threshold_pct."""
        out = []
        for row in self.rows:
            for i in range(1, len(self.labels)):
                d = row.intervals[i]
                if row.decides(i) and d is not None and d.below(threshold_pct):
                    out.append(Regression(self.labels[i], row.pairs, d.diff_pct, d.high_pct))
        return out


def _records(side: Side) -> list[Record]:
    return [side] if not isinstance(side, (list, tuple)) else list(side)


def _describe(record: Record) -> str:
    text = "/".join(str(getattr(record.config, k, "?")) for k in SAME_KEYS)
    size = getattr(record.config, "size", None)  # payload bytes, in records that have it
    return text if size is None else f"{text}/{size} B"


def record_label(record: Record) -> str:
    kernel = record.box.get("kernel_release") or "unknown kernel"
    return f"{kernel} ({record.name})"


def side_label(records: Sequence[Record]) -> str:
    if len(records) == 1:
        return record_label(records[0])
    kernels = dict.fromkeys(str(r.box.get("kernel_release") or "unknown kernel") for r in records)
    return f"{' + '.join(kernels)} ({' + '.join(r.name for r in records)})"


def mismatches(a: Record, b: Record) -> tuple[list[str], list[str]]:
    """(fields that differ, fields one of them did not record), over MATCH_KEYS."""
    differ, unknown = [], []
    for k in MATCH_KEYS:
        if a.config.recorded(k) and b.config.recorded(k):
            mine, theirs = a.config.to_dict()[k], b.config.to_dict()[k]
            if mine != theirs:
                differ.append(f"{k} {mine!r} vs {theirs!r}")
        elif a.config.recorded(k) or b.config.recorded(k):
            unknown.append(k)
    return differ, unknown


def _check_alike(records: list[Record], force: bool) -> list[str]:
    first, notes = records[0], []
    for other in records[1:]:
        differ, unknown = mismatches(first, other)
        if differ:
            msg = (
                f"{first.name} is {_describe(first)} but {other.name} is {_describe(other)}; "
                f"they differ in {', '.join(differ)}"
            )
            if not force:
                raise UsageError(f"{msg}; pass --force to compare them anyway")
            notes.extend(f"forced: {first.name} vs {other.name}: {d}" for d in differ)
        if unknown:
            notes.append(
                f"not recorded in both {first.name} and {other.name}: {', '.join(unknown)}"
            )
    return notes


def pooled_points(records: Sequence[Record]) -> dict[int, ScalingPoint]:
    """One point per pair count: every record's samples at it put together, settled
    only when every record's point is."""
    by: dict[int, list[ScalingPoint]] = {}
    for r in records:
        for p in record_points(r):
            by.setdefault(p.pairs, []).append(p)
    out = {}
    for n, pts in by.items():
        if len(pts) == 1:
            out[n] = pts[0]
            continue
        samples = [x for p in pts for x in p.samples]
        out[n] = ScalingPoint(
            pairs=n,
            total_ops_per_s=float(statistics.median(samples)),
            repeats=tuple(x for p in pts for x in p.repeats),
            settled=all(p.settled for p in pts),
            windows=tuple(samples),
        )
    return out


def compare(sides: Sequence[Side], force: bool = False) -> Comparison:
    """Compare every side against the first; a side is a record or several pooled.
    Refuses unlike records (any of MATCH_KEYS) unless force."""
    groups = [_records(s) for s in sides]
    if len(groups) < 2 or any(not g for g in groups):
        raise UsageError("compare needs at least two records")
    notes = _check_alike([r for g in groups for r in g], force)
    curves = [pooled_points(g) for g in groups]
    unit = getattr(groups[0][0].config, "load_unit", None)
    scale = hold_pct if unit else scalability_pct  # a load's ideal is flat, not linear
    rows = []
    for n in sorted(set().union(*curves)):
        pts = [c.get(n) for c in curves]
        totals = tuple(p.total_ops_per_s if p else None for p in pts)
        diffs = (None,) + tuple(diff_pct(totals[0], t) for t in totals[1:])
        intervals: list[Difference | None] = [None]
        for p in pts[1:]:
            ok = p is not None and pts[0] is not None
            ok = ok and len(p.samples) >= 2 and len(pts[0].samples) >= 2
            intervals.append(difference(pts[0].samples, p.samples) if ok else None)
        rows.append(
            CompareRow(
                pairs=n,
                totals=totals,
                diffs=diffs,
                scalability=tuple(scale(c.values(), n) for c in curves),
                intervals=tuple(intervals),
                settled=tuple(p.settled if p else True for p in pts),
                samples=tuple(len(p.samples) if p else 0 for p in pts),
            )
        )
    return Comparison(
        labels=tuple(side_label(g) for g in groups),
        rows=tuple(rows),
        forced=force,
        notes=tuple(notes),
        unit=unit,
    )


def _diff_cells(row: CompareRow, i: int) -> list[str]:
    d, diff = row.intervals[i], row.diffs[i]
    if diff is None:
        return ["-", "-", ""]
    if d is None:
        return [f"{diff:+.1f}", "-", row.verdict(i)]
    k = pct_digits(d.half_width_pct)
    return [f"{diff:+.{k}f}", f"[{d.low_pct:+.{k}f}, {d.high_pct:+.{k}f}]", row.verdict(i)]


def format_comparison(cmp: Comparison) -> str:
    """A seeds-style table: ops/s per side, then Diff, its 95 % interval and the verdict."""
    first = f"{cmp.unit}s" if cmp.unit else "pairs"
    headers, align = [first], "l"
    for i in range(len(cmp.labels)):
        headers.append("msgs/s" if cmp.unit else "ops/s")
        align += "r"
        if i > 0:
            headers += ["Diff [%]", "95% interval", "verdict"]
            align += "rrl"
    body = []
    for row in cmp.rows:
        cells = [str(row.pairs)]
        for i, t in enumerate(row.totals):
            cells.append(fmt_int(t) + ("" if row.settled[i] else " ~"))
            if i > 0:
                cells += _diff_cells(row, i)
        body.append(cells)
    table = format_table(headers, body, align, group_titles=_group_titles(cmp))

    # Forced mismatches go first: a reader must see them before any figure.
    parts = ["\n".join(cmp.notes)] if cmp.notes else []
    parts.append(table)
    legend = [
        f"test: {TEST_WELCH} of the windows (old records: of the runs); a verdict only "
        "when the whole 95 % interval is on one side of 0"
    ]
    if any(not s for r in cmp.rows for s in r.settled):
        legend.append("~ not settled: shown, never judged")
    parts.append("\n".join(legend))
    lightest = cmp.rows[0].pairs if cmp.rows and cmp.unit else 1
    scal_rows = [
        [str(r.pairs)] + [fmt_pct(s) for s in r.scalability] for r in cmp.rows if r.pairs > lightest
    ]
    if scal_rows:
        scal = format_table([first] + list(cmp.labels), scal_rows, "l" + "r" * len(cmp.labels))
        title = (
            f"Hold [%] (messages/s against the lightest load's, {lightest} {cmp.unit}"
            f"{'' if lightest == 1 else 's'})"
            if cmp.unit
            else "Scalability [%]"
        )
        parts.append(title + "\n" + scal)
    return "\n\n".join(parts)


def _group_titles(cmp: Comparison) -> list[tuple[str, int]]:
    # Each side's label spans its columns: ops/s, plus Diff, interval, verdict after the first.
    return [("", 1)] + [(label, 1 if i == 0 else 4) for i, label in enumerate(cmp.labels)]
