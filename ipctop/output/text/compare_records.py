"""Side-by-side comparison of records, as the kernel threads did between kernels,
with a verdict per point that says whether the difference is real.

The replicate is the highest level a side has sampled (Kalibera and Jones,
ISMM 2013): with two or more records a side, each record is one session,
summarised once; with one record, each of its runs (the pairs restarted) is
one value. Windows of one run are never the sample when runs exist: they are
correlated and runs differ by more than their windows do. Only a record with
a single run falls back to its windows, with the AR(1) correction, and says
so. B/A is Welch's t on the log replicate values (analysis.stats); with one
record a side from separate sessions the interval needs the box's session
spread (--session-sd, a record's, or the box's stored one): without it the
sessions differ by an unknown amount, so those points are shown but not
judged, and the gate says so (commands/compare.py). Verdicts and the --fail-below gate control
the family-wise error over every point judged (Holm). Scalability % is each
side against its own 1-pair figure.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Union

from ipctop.analysis.scaling import ScalingPoint, diff_pct
from ipctop.analysis.stats import (
    CONFIDENCE,
    SESSIONS,
    TEST_WELCH,
    WINDOWS,
    Difference,
    difference,
    holm,
    pct_digits,
)
from ipctop.analysis.stats import (
    geomean as _geomean,
)
from ipctop.errors import UsageError
from ipctop.output.records.record import record_points, unrated_lines
from ipctop.output.text.compare_boxes import box_differences, kernel_difference
from ipctop.output.text.compare_rows import (
    NOT_JUDGED_WHY,
    CompareRow,
    Comparison,
    SidePoint,
)
from ipctop.output.text.compare_scale import scale_pct, scale_section
from ipctop.output.text.tables import fmt_int, format_table

if TYPE_CHECKING:
    from ipctop.output.records.record import Record

# What must match for a comparison to mean anything (the TUI's baseline uses
# the first three; compare refuses any of these differing).
SAME_KEYS = ("workload", "placement", "mode")
MATCH_KEYS = SAME_KEYS + (
    "engine", "cpus", "size", "threads", "sems", "think_ns", "queues", "prefill", "queue_keys",
    "load_unit", "fds", "loops", "transport",  # a load sweep's (commands/load_record.py)
)  # fmt: skip


Side = Union["Record", Sequence["Record"]]


def _records(side: Side) -> list[Record]:
    return list(side) if isinstance(side, Sequence) else [side]


def _describe(record: Record) -> str:
    text = "/".join(str(getattr(record.config, k, "?")) for k in SAME_KEYS)
    size = getattr(record.config, "size", None)  # payload bytes, in records that have it
    return text if size is None else f"{text}/{size} B"


def record_label(record: Record) -> str:
    kernel = record.box.kernel
    return f"{kernel} ({record.name})"


def side_label(records: Sequence[Record]) -> str:
    if len(records) == 1:
        return record_label(records[0])
    kernels = dict.fromkeys(r.box.kernel for r in records)
    return f"{' + '.join(kernels)} ({' + '.join(r.name for r in records)})"


def mismatches(a: Record, b: Record) -> tuple[list[str], list[str]]:
    """(fields that differ, fields one of them did not record), over MATCH_KEYS."""
    differ, unknown = [], []
    for k in MATCH_KEYS:
        if a.config.recorded(k) and b.config.recorded(k):
            mine, theirs = a.config.said()[k], b.config.said()[k]
            if mine != theirs:
                differ.append(f"{k} {mine!r} vs {theirs!r}")
        elif a.config.recorded(k) or b.config.recorded(k):
            unknown.append(k)
    return differ, unknown


def _check_boxes(first: Record, other: Record, force: bool) -> list[str]:
    """Boxes that differ are refused unless force; the kernels are then said with them.
    Another kernel alone is what compare is for: the side labels name it."""
    boxes = box_differences(first.box, other.box)
    if not boxes:
        return []
    kernels = kernel_difference(first.box, other.box)
    than = "the kernels'" if kernels else "the records'"
    msg = (
        f"{first.name} ({first.box.kernel}) and {other.name} ({other.box.kernel}) were "
        f"made on different boxes ({', '.join(boxes)}): a difference would be the "
        f"boxes' as much as {than}"
    )
    if not force:
        raise UsageError(f"{msg}; pass --force to compare them anyway")
    notes = []
    if kernels:
        notes.append(f"kernels differ: {first.name} has {kernels[0]}, {other.name} {kernels[1]}")
    return notes + [f"forced: {first.name} vs {other.name}: {d}" for d in boxes]


def _check_alike(records: list[Record], force: bool) -> list[str]:
    first = records[0]
    notes: list[str] = []
    for other in records[1:]:
        notes.extend(_check_boxes(first, other, force))
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


def side_point(points: Sequence[ScalingPoint]) -> SidePoint:
    """The replicate values of one side at one pair count (one point per record)."""
    settled = all(p.settled for p in points)
    if len(points) >= 2:
        # Separate sessions: each summarised once by the geometric mean of its runs.
        values = tuple(_geomean(p.repeats) for p in points)
        unit = SESSIONS
    else:
        # One record: the point's own replicate rule (runs, else its lone run's windows).
        values, unit = points[0].samples, points[0].unit
    return SidePoint(tuple(values), unit, settled, _geomean(values))


def side_points(records: Sequence[Record]) -> dict[int, SidePoint]:
    by: dict[int, list[ScalingPoint]] = {}
    for r in records:
        for p in record_points(r):
            by.setdefault(p.pairs, []).append(p)
    return {n: side_point(pts) for n, pts in by.items()}


def _scaling(curve: dict[int, SidePoint]) -> list[ScalingPoint]:
    return [ScalingPoint(pairs=n, total_ops_per_s=p.figure) for n, p in curve.items()]


def _interval(
    a: SidePoint, b: SidePoint, session_var: float, session_df: float = math.inf
) -> Difference | None:
    if a.n < 2 or b.n < 2:
        return None
    # Sessions already carry their spread; one record a side gets the given one.
    extra = session_var if SESSIONS not in (a.unit, b.unit) else 0.0
    return difference(
        a.values, b.values, unit=a.unit, unit_b=b.unit, session_var=extra, session_df=session_df
    )


def separate_sessions(a: Sequence[Record], b: Sequence[Record]) -> bool:
    """One record a side, from two sessions: the case only a session spread can judge.
    (A record against itself is one session: nothing differs between its sides.)"""
    return len(a) == 1 and len(b) == 1 and a[0] != b[0]


def compare(
    sides: Sequence[Side],
    force: bool = False,
    session_sd_pct: float | None = None,
    session_source: str = "",
    no_spread_why: str = "",
    session_df: float = math.inf,
) -> Comparison:
    """Compare every side against the first; a side is a record or several pooled.
    Refuses unlike records (any of MATCH_KEYS) unless force. session_sd_pct is the
    box's session-to-session s.d. (in %), added where a side is one session, with
    session_df degrees of freedom (a measured spread's; infinite when given as known);
    without it, a side that is one session against a baseline of one other
    session is shown but not judged (no_spread_why: why no stored one fitted)."""
    groups = [_records(s) for s in sides]
    if len(groups) < 2 or any(not g for g in groups):
        raise UsageError("compare needs at least two records")
    notes = _check_alike([r for g in groups for r in g], force)
    # A step with no rate is no point of its side (record_points): said, not shown as 0.
    # (Once each: a record compared with itself names its step once.)
    notes += dict.fromkeys(line for g in groups for r in g for line in unrated_lines(r))
    blocked = tuple(
        i > 0 and session_sd_pct is None and separate_sessions(groups[0], g)
        for i, g in enumerate(groups)
    )
    not_judged = ""
    if any(blocked):
        why = f" (stored spread: {no_spread_why})" if no_spread_why else ""
        not_judged = NOT_JUDGED_WHY + why
    session_var = math.log1p(session_sd_pct / 100.0) ** 2 if session_sd_pct else 0.0
    curves = [side_points(g) for g in groups]
    unit = getattr(groups[0][0].config, "load_unit", None)
    rows = []
    for n in sorted(set().union(*curves)):
        pts = [c.get(n) for c in curves]
        totals = tuple(p.figure if p else None for p in pts)
        intervals: list[Difference | None] = [None]
        for p in pts[1:]:
            ok = p is not None and pts[0] is not None
            intervals.append(_interval(pts[0], p, session_var, session_df) if ok else None)  # type: ignore[arg-type]
        rows.append(
            CompareRow(
                pairs=n,
                totals=totals,
                diffs=(None,) + tuple(diff_pct(totals[0], t) for t in totals[1:]),
                scalability=tuple(scale_pct(unit, _scaling(c), n) for c in curves),
                intervals=tuple(intervals),
                settled=tuple(p.settled if p else True for p in pts),
                samples=tuple(p.n if p else 0 for p in pts),
                units=tuple(p.unit if p else "" for p in pts),
                blocked=blocked,
            )
        )
    return Comparison(
        labels=tuple(side_label(g) for g in groups),
        rows=tuple(_holm_rows(rows, len(groups))),
        forced=force,
        notes=tuple(notes),
        session_sd_pct=session_sd_pct,
        session_df=session_df,
        session_source=session_source,
        not_judged=not_judged,
        blocked_sides=tuple(i for i, b in enumerate(blocked) if b),
        unit=unit,
    )


def _holm_rows(rows: list[CompareRow], sides: int) -> list[CompareRow]:
    """Each row with its Holm-adjusted p-values, the family being every point judged."""
    family = [
        (k, i, row.intervals[i].p_value)  # type: ignore[union-attr]
        for k, row in enumerate(rows)
        for i in range(1, sides)
        if row.decides(i)
    ]
    adjusted = holm([p for _, _, p in family])
    by = {(k, i): p for (k, i, _), p in zip(family, adjusted)}
    out = []
    for k, row in enumerate(rows):
        adj = tuple(by.get((k, i)) for i in range(sides))
        out.append(dataclasses.replace(row, adjusted=adj))
    return out


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
    legend = legend_lines(cmp)
    if any(not s for r in cmp.rows for s in r.settled):
        legend.append("~ not settled: shown, never judged")
    parts.append("\n".join(legend))
    scale = scale_section(cmp)
    if scale:
        parts.append(scale)
    return "\n\n".join(parts)


def _units_text(cmp: Comparison) -> str:
    """'A: n=3 runs; B: n=2 sessions', from the most common n of each side."""
    parts = []
    for i in range(len(cmp.labels)):
        seen = [(r.samples[i], r.units[i]) for r in cmp.rows if r.totals[i] is not None]
        if not seen:
            continue
        n, unit = max(set(seen), key=seen.count)
        parts.append(f"{'AB'[i] if len(cmp.labels) == 2 else i + 1}: n={n} {unit}")
    return "; ".join(parts)


def legend_lines(cmp: Comparison) -> list[str]:
    """What the intervals rest on and how the verdicts were called, under the table."""
    judged = len(cmp.judged())
    out = [
        f"test: {TEST_WELCH} of one value per replicate ({_units_text(cmp)}); "
        f"Diff is B/A of geometric means, its 95 % interval per point",
        f"verdicts: Holm-adjusted over the {judged} point(s) judged, 5 % family-wise",
    ]
    units = {u for r in cmp.rows for u in r.units}
    if WINDOWS in units:
        out.append(
            "windows: a side had a single run, so its interval covers within-run noise "
            "only (AR(1)-corrected); sweep --repeat 3 gives runs"
        )
    if cmp.not_judged:
        out.append(cmp.not_judged)
    elif SESSIONS not in units:
        if cmp.session_sd_pct is not None:
            source = cmp.session_source or f"session spread {cmp.session_sd_pct:g} % s.d."
            out.append(f"{source}: added to every interval across sessions")
        else:  # a record against itself: one session, nothing to add
            out.append("one session: the interval covers run-to-run noise only")
    small = cmp.smallest_change_pct()
    if small is not None:
        out.append(f"smallest change these records can show: about ±{small:.0f} %")
    return out


def _group_titles(cmp: Comparison) -> list[tuple[str, int]]:
    # Each side's label spans its columns: ops/s, plus Diff, interval, verdict after the first.
    return [("", 1)] + [(label, 1 if i == 0 else 4) for i, label in enumerate(cmp.labels)]


def comparison_to_dict(cmp: Comparison) -> dict[str, object]:
    """Per point and side: the estimate, its interval, the verdict, n, the unit and
    the test, for CI to read (`compare --json`)."""
    points = []
    for row in cmp.rows:
        for i in range(1, len(cmp.labels)):
            d = row.intervals[i]
            points.append(
                {
                    "pairs": row.pairs,
                    "side": cmp.labels[i],
                    "baseline_ops_per_s": row.totals[0],
                    "ops_per_s": row.totals[i],
                    "diff_pct": row.diffs[i],
                    "low_pct": d.low_pct if d else None,
                    "high_pct": d.high_pct if d else None,
                    "verdict": row.verdict(i),
                    "n_baseline": row.samples[0],
                    "n": row.samples[i],
                    "unit_baseline": row.units[0],
                    "unit": row.units[i],
                    "test": d.test if d else None,
                    "df": d.df if d and math.isfinite(d.df) else None,
                    "p_value": d.p_value if d else None,
                    "p_holm": row.adjusted[i] if row.adjusted else None,
                    "settled": bool(row.settled[0] and row.settled[i]),
                    "judged": row.decides(i),
                    "not_judged_why": row.why_not(i),
                }
            )
    return {
        "schema": "ipctop.compare/1",
        "labels": list(cmp.labels),
        "confidence": CONFIDENCE,
        "family_wise": "holm",
        "session_sd_pct": cmp.session_sd_pct,
        "session_df": cmp.session_df if math.isfinite(cmp.session_df) else None,
        "session_sd_source": cmp.session_source or None,
        "judged": not cmp.not_judged,
        "not_judged": cmp.not_judged or None,
        "smallest_change_pct": cmp.smallest_change_pct(),
        "notes": list(cmp.notes) + legend_lines(cmp),
        "points": points,
    }
