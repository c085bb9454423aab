"""Fixed-width text tables in the style the kernel threads posted results."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ipctop.analysis.scaling import ScalingPoint, efficiency_pct, scalability_pct

GAP = "   "
# A pair this far from the median pair is a finding: shared core, SMT sibling, wrong binding.
IMBALANCE_RATIO = 1.5


def fmt_int(v: float | None) -> str:
    """948005.4 -> "948,005"; None -> "-". Halves round away from zero, as people expect."""
    if v is None:
        return "-"
    return f"{int(math.copysign(math.floor(abs(v) + 0.5), v)):,}"


def fmt_pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def fmt_half_width(v: float | None) -> str:
    """'±1.2' for a half-width in %, with the digits the noise allows; '-' without one."""
    if v is None:
        return "-"
    return f"±{v:.1f}" if v < 10 else f"±{v:.0f}"


def fmt_signed(v: float | None) -> str:
    return "-" if v is None else f"{v:+.1f}"


def format_table(
    headers: Sequence[str],
    rows: Iterable[Sequence[Any]],
    align: str | Sequence[str] | None = None,
    group_titles: Sequence[tuple[str, int]] | None = None,
) -> str:
    """Columns as wide as their widest cell; align is one "l"/"r" per column.

    group_titles, if given, is a line of (title, column span) above the headers,
    each title right-aligned over the columns it spans.
    """
    rows = [[str(c) for c in r] for r in rows]
    ncols = len(headers)
    for i, r in enumerate(rows):
        if len(r) != ncols:
            raise ValueError(f"row {i} has {len(r)} cells, headers have {ncols}")
    align = list(align) if align is not None else ["l"] + ["r"] * (ncols - 1)
    if len(align) != ncols or any(a not in "lr" for a in align):
        raise ValueError(f"align needs one 'l' or 'r' per column, got {align!r}")
    widths = [max([len(headers[i])] + [len(r[i]) for r in rows]) for i in range(ncols)]

    lines = []
    if group_titles:
        if sum(span for _, span in group_titles) != ncols:
            raise ValueError("group_titles spans do not add up to the number of columns")
        col = 0
        for title, span in group_titles:
            have = sum(widths[col : col + span]) + len(GAP) * (span - 1)
            if len(title) > have:
                widths[col + span - 1] += len(title) - have
            col += span
        cells, col = [], 0
        for title, span in group_titles:
            have = sum(widths[col : col + span]) + len(GAP) * (span - 1)
            cells.append(title.rjust(have))
            col += span
        lines.append(GAP.join(cells))

    def line(cells: Sequence[str]) -> str:
        return GAP.join(
            c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(cells, widths, align)
        )

    lines.append(line(headers))
    lines.extend(line(r) for r in rows)
    return "\n".join(x.rstrip() for x in lines)


def _get(t: Any, key: str, default: Any = None) -> Any:
    return t.get(key, default) if isinstance(t, dict) else getattr(t, key, default)


def _cpu_text(t: Any) -> str:
    """Where the thread ran: a sweep step's cpu, or a live sample's last/bound CPU."""
    cpu = _get(t, "cpu")
    if cpu is not None:
        return str(cpu)
    bound, last = _get(t, "bound_cpu"), _get(t, "last_cpu")
    if last is not None and bound is not None and last != bound:
        return f"{last} (bound {bound})"
    where = last if last is not None else bound
    return "-" if where is None else str(where)


def format_matrix(
    step_threads: Iterable[Any],
    total: float | None = None,
    title: str | None = None,
    total_note: str = "",
) -> str:
    """The originals' result matrix: each pair's A beside its partner B, then the total.

    Threads may be StepThread, ThreadSample or their dicts. total defaults to the
    sum of every thread's ops/s. Pairs far from the median pair are flagged, since
    in the original threads such imbalance was how misplaced pairs were found.
    """
    by_pair: dict[int, dict[str, Any]] = {}
    for t in step_threads:
        by_pair.setdefault(int(_get(t, "pair")), {})[str(_get(t, "role"))] = t
    sums = {
        p: sum(float(_get(t, "ops_per_s", 0.0)) for t in roles.values())
        for p, roles in by_pair.items()
    }
    median = statistics.median(sums.values()) if sums else 0.0
    flagged = False
    rows = []
    pairs = all(set(roles) <= {"A", "B"} for roles in by_pair.values())
    for p in sorted(by_pair):
        odd = median > 0 and (
            sums[p] > median * IMBALANCE_RATIO or sums[p] < median / IMBALANCE_RATIO
        )
        flagged |= odd
        if not pairs:  # units of T0, T1, ... threads: one row per thread
            for role, t in sorted(by_pair[p].items()):
                rows.append([str(p), role, _cpu_text(t), fmt_int(_get(t, "ops_per_s")),
                             "!" if odd else ""])  # fmt: skip
            continue
        a, b = by_pair[p].get("A"), by_pair[p].get("B")
        rows.append(
            [
                str(p),
                _cpu_text(a) if a is not None else "-",
                fmt_int(_get(a, "ops_per_s")) if a is not None else "-",
                _cpu_text(b) if b is not None else "-",
                fmt_int(_get(b, "ops_per_s")) if b is not None else "-",
                "!" if odd else "",
            ]
        )
    if total is None:
        total = sum(sums.values())
    if pairs:
        table = format_table(["pair", "A cpu", "A ops/s", "B cpu", "B ops/s", ""], rows, "lrrrrl")
    else:
        table = format_table(["unit", "thread", "cpu", "ops/s", ""], rows, "llrrl")
    out = ([title] if title else []) + [table, f"total {fmt_int(total)} ops/s{total_note}"]
    if flagged:
        out.append(
            f"! this pair differs from the median pair by more than {IMBALANCE_RATIO:g}x:"
            " check where its threads really run; on their CPUs, an SMT sibling, a busy CPU"
            " or steal can slow a pair too"
        )
    return "\n".join(out)


def format_summary(
    points: Iterable[ScalingPoint],
    title: str | None = None,
    unrated: Mapping[int, str] | None = None,
) -> str:
    """pairs, total, per pair, scalability, efficiency and run-to-run spread.

    unrated: pairs -> why, the steps with no rate (no point): a row that says so,
    never a total of 0, and no ratio against a 1-pair rate that is not there.
    """
    points = sorted(points, key=lambda p: p.pairs)
    none = dict(unrated or {})
    rows: list[tuple[int, list[str]]] = [
        (n, [str(n), "no rate", *["-"] * 6]) for n in none if n not in {p.pairs for p in points}
    ]
    for p in points:
        rows.append(
            (
                p.pairs,
                [
                    str(p.pairs),
                    fmt_int(p.total_ops_per_s) + ("" if p.settled else " ~"),
                    fmt_int(p.per_pair),
                    fmt_pct(scalability_pct(points, p.pairs)),
                    fmt_pct(efficiency_pct(points, p.pairs)),
                    fmt_pct(p.spread_pct) if len(p.repeats) > 1 else "-",
                    str(len(p.samples)),
                    fmt_half_width(p.summary.half_width_pct),
                ],
            )
        )
    table = format_table(
        [
            "pairs",
            "total ops/s",
            "ops/s per pair",
            "scalability [%]",
            "efficiency [%]",
            "spread [%]",
            "n",
            "±95% [%]",
        ],
        [cells for _, cells in sorted(rows, key=lambda r: r[0])],
        "lrrrrrrr",
    )
    out = ([title] if title else []) + [table]
    out += [f"no rate at {n} pair(s): {why}" for n, why in sorted(none.items())]
    out.append(
        "n: runs (the windows of one run when it is alone); "
        "±95%: half the 95 % interval of the geometric mean, in %"
    )
    if any(not p.settled for p in points):
        out.append("~ not settled: the reading was still moving")
    return "\n".join(out)
