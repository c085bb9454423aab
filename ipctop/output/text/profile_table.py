"""Profiles as text: the top symbols of a span, and the delta between two.

Shares are of the pairs' own samples. With n samples a share's binomial
noise is about 100/sqrt(n) points, so shares print with one decimal and the
interval beside them says how far to trust it.
"""

from __future__ import annotations

from statistics import mean

from ...analysis.profile_delta import (
    counter_deltas,
    hardware_note,
    symbol_deltas,
    t95,
)
from ...cpus import format_cpu_list
from ...engine.costs import Costs
from ...engine.profile.window import Profile, SymbolShare
from .tables import format_table


def describe(p: Profile) -> str:
    """One line: event, perf version, CPUs, windows, samples, cost."""
    if p.na:
        return f"profile n/a ({p.na})"
    windows = len(p.windows) or getattr(p, "window_count", 0)
    cost = "" if p.cost_pct is None else f" · perf used {p.cost_pct:.1f} % of a CPU"
    return (
        f"profile: {p.event} at {p.frequency} Hz on CPUs {format_cpu_list(list(p.cpus))} · "
        f"perf {p.perf_version} · {windows} window(s) · {p.samples:,} samples of the pairs{cost}"
    )


def _interval(values: tuple[float, ...]) -> str:
    if len(values) < 2:
        return ""
    m = mean(values)
    sd = (sum((v - m) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    return f"±{t95(len(values) - 1) * sd / len(values) ** 0.5:.1f}"


def _rows(symbols: list[SymbolShare]) -> list[list[str]]:
    return [
        [
            f"{s.self_pct:.1f}",
            _interval(s.windows_self_pct),
            f"{s.total_pct:.1f}",
            f"{s.self_samples:,}",
            s.name,
            s.dso,
        ]
        for s in symbols
    ]


def format_profile(p: Profile, n: int = 8) -> str:
    """Top kernel and user symbols by self share, then the notes."""
    lines = [describe(p)]
    if not p.na:
        headers = ["self %", "95 %", "total %", "samples", "symbol", "where"]
        for title, kernel in (("kernel", True), ("user", False)):
            top = p.top(n, kernel=kernel)
            if top:
                lines.append(f"{title}:")
                lines.append(format_table(headers, _rows(top), "rrrrll"))
    lines += [n for n in p.notes if n not in lines]
    return "\n".join(lines)


def format_delta(
    labels: tuple[str, str],
    a: Profile,
    b: Profile,
    costs_a: Costs | None = None,
    costs_b: Costs | None = None,
    n: int = 6,
) -> str:
    """Symbols whose total share moved most (both ends), beside the counters that moved."""
    la, lb = labels
    out = [f"the delta explained: A = {la}, B = {lb}"]
    if a.na or b.na:
        out.append(f"symbols: n/a (A: {a.na or 'ok'}, B: {b.na or 'ok'})")
    else:
        deltas = symbol_deltas(a, b)
        ends = deltas[:n] + [d for d in deltas[-n:] if d not in deltas[:n]]
        rows = [
            [
                f"{d.a_total_pct:.1f}",
                f"{d.change_pp:+.1f}",
                "" if d.half_width is None else f"±{d.half_width:.1f}",
                f"{d.b_total_pct:.1f}",
                f"{d.self_change_pp:+.1f}",
                d.name,
            ]
            for d in ends
        ]
        headers = ["A total %", "change pp", "95 %", "B total %", "self pp", "symbol"]
        out.append(
            f"symbols whose share of the pairs' samples moved most (n = {a.samples:,} "
            f"and {b.samples:,}; total: anywhere in the chain, self: the leaf):"
        )
        out.append(format_table(headers, rows, "rrrrrl"))
    counters = counter_deltas(costs_a, costs_b)
    rows = [
        [
            "n/a" if c.a is None else f"{c.a:,.3g}",
            "n/a" if c.change_pct is None else f"{c.change_pct:+.0f} %",
            "n/a" if c.b is None else f"{c.b:,.3g}",
            c.name + (f" (n/a: {c.why})" if c.why else ""),
        ]
        for c in counters
    ]
    out.append("counters (per round unless named otherwise; one window each, no interval):")
    out.append(format_table(["A", "%change", "B", "counter"], rows, "rrrl"))
    hw = hardware_note(a, b)
    if hw:
        out.append(hw)
    return "\n".join(out)
