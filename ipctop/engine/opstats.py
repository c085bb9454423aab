"""Per-operation rates across threads, as msgbench printed them."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

#: {op: {"per_s", "avg", "stddev", "min", "max"}}, in the order the workload names them
OpStats = dict[str, dict[str, float]]


def op_stats(names: Sequence[str], per_thread: Sequence[Sequence[float]]) -> OpStats:
    """{op: {per_s, avg, stddev, min, max}} from each thread's rate of each op.

    per_s is the sum over threads; avg/stddev/min/max describe how the threads
    shared it (a lookup regression shows as a lower average, contention as a
    wider spread).
    """
    out = {}
    for i, name in enumerate(names):
        rates = [t[i] for t in per_thread if i < len(t)]
        if rates:
            out[name] = spread(rates, sum(rates))
    return out


def spread(rates: Sequence[float], per_s: float) -> dict[str, float]:
    """The total rate and how `rates` (at least one) spread: avg, stddev, min, max."""
    return {
        "per_s": per_s,
        "avg": statistics.fmean(rates),
        "stddev": statistics.stdev(rates) if len(rates) > 1 else 0.0,
        "min": min(rates),
        "max": max(rates),
    }


def format_op_stats(stats: OpStats) -> list[list[str]]:
    return [
        [name, f"{s['per_s']:,.0f}", f"{s['avg']:,.0f}", f"{s['stddev']:,.0f}",
         f"{s['min']:,.0f}", f"{s['max']:,.0f}"]
        for name, s in stats.items()
    ]  # fmt: skip
