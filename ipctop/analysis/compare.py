"""Side-by-side comparison of records, as the kernel threads did between kernels.

Diff % is each record against the first (the "old" kernel) at the same pair
count; scalability % is each record against its own 1-pair total.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ipctop.analysis.scaling import diff_pct, scalability_pct
from ipctop.errors import UsageError
from ipctop.output.record import record_points
from ipctop.output.tables import fmt_int, fmt_pct, fmt_signed, format_table

if TYPE_CHECKING:
    from ipctop.output.record import Record

# What must match for a comparison to mean anything. "size" (payload bytes) is
# optional: records before it have none, and an unknown size matches any.
SAME_KEYS = ("workload", "placement", "mode")
OPTIONAL_KEYS = ("size",)


@dataclass(frozen=True)
class CompareRow:
    pairs: int
    totals: tuple[float | None, ...]  # one per record, None where it has no such pair count
    diffs: tuple[float | None, ...]  # vs the first record; the first's own entry is None
    scalability: tuple[float | None, ...]


@dataclass(frozen=True)
class Regression:
    label: str
    pairs: int
    diff_pct: float


@dataclass(frozen=True)
class Comparison:
    labels: tuple[str, ...]  # "6.1.0 (old.json)"
    rows: tuple[CompareRow, ...]
    forced: bool = False
    notes: tuple[str, ...] = ()  # mismatches accepted because of force

    @property
    def worst_regression_pct(self) -> float | None:
        """The most negative Diff % anywhere (positive if every record improved)."""
        diffs = [d for r in self.rows for d in r.diffs if d is not None]
        return min(diffs) if diffs else None

    def regressions(self, threshold_pct: float) -> list[Regression]:
        """Every (record, pair count) that fell by more than threshold_pct percent."""
        out = []
        for row in self.rows:
            for i, d in enumerate(row.diffs):
                if d is not None and d < -threshold_pct:
                    out.append(Regression(self.labels[i], row.pairs, d))
        return out


def _describe(record: Record) -> str:
    text = "/".join(str(record.config.get(k, "?")) for k in SAME_KEYS)
    size = record.config.get("size")
    return text if size is None else f"{text}/{size} B"


def _differing(a: Record, b: Record) -> list[str]:
    keys = [k for k in SAME_KEYS if a.config.get(k) != b.config.get(k)]
    for k in OPTIONAL_KEYS:
        x, y = a.config.get(k), b.config.get(k)
        if x is not None and y is not None and x != y:
            keys.append(k)
    return keys


def record_label(record: Record) -> str:
    kernel = record.box.get("kernel_release") or "unknown kernel"
    return f"{kernel} ({record.name})"


def compare(records: Sequence[Record], force: bool = False) -> Comparison:
    """Compare records against the first; refuses unlike runs unless force."""
    if len(records) < 2:
        raise UsageError("compare needs at least two records")
    first = records[0]
    notes = []
    for other in records[1:]:
        differing = _differing(first, other)
        if not differing:
            continue
        msg = (
            f"{first.name} is {_describe(first)} but {other.name} is {_describe(other)} "
            f"(workload/placement/mode/size; {', '.join(differing)} differ)"
        )
        if not force:
            raise UsageError(f"{msg}; pass --force to compare them anyway")
        notes.append(msg)

    curves = [{p.pairs: p for p in record_points(r)} for r in records]
    all_pairs = sorted(set().union(*curves))
    rows = []
    for n in all_pairs:
        totals = tuple(c[n].total_ops_per_s if n in c else None for c in curves)
        diffs = (None,) + tuple(diff_pct(totals[0], t) for t in totals[1:])
        scal = tuple(scalability_pct(c.values(), n) for c in curves)
        rows.append(CompareRow(n, totals, diffs, scal))
    return Comparison(
        labels=tuple(record_label(r) for r in records),
        rows=tuple(rows),
        forced=force,
        notes=tuple(notes),
    )


def format_comparison(cmp: Comparison) -> str:
    """A seeds-style fixed-width table: ops/s and Diff per pair count, then scalability."""
    headers = ["pairs"]
    align = "l"
    for i in range(len(cmp.labels)):
        headers.append("ops/s")
        align += "r"
        if i > 0:
            headers.append("Diff [%]")
            align += "r"
    body = []
    for row in cmp.rows:
        cells = [str(row.pairs)]
        for i, t in enumerate(row.totals):
            cells.append(fmt_int(t))
            if i > 0:
                cells.append(fmt_signed(row.diffs[i]))
        body.append(cells)
    table = format_table(headers, body, align, group_titles=_group_titles(cmp))

    scal_rows = [
        [str(r.pairs)] + [fmt_pct(s) for s in r.scalability] for r in cmp.rows if r.pairs > 1
    ]
    parts = [table]
    if scal_rows:
        scal = format_table(["pairs"] + list(cmp.labels), scal_rows, "l" + "r" * len(cmp.labels))
        parts.append("Scalability [%]\n" + scal)
    for note in cmp.notes:
        parts.append(f"forced: {note}")
    return "\n\n".join(parts)


def _group_titles(cmp: Comparison) -> list[tuple[str, int]]:
    # Each record's label spans its columns: ops/s, plus Diff for all but the first.
    return [("", 1)] + [(label, 1 if i == 0 else 2) for i, label in enumerate(cmp.labels)]
