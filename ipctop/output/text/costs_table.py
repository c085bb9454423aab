"""The sweep's "where the time goes" table, one row per pair count."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .tables import format_table


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def _cell(v: float | None, fmt: str) -> str:
    return "n/a" if v is None else fmt.format(v)


def format_costs(steps: Iterable[Any]) -> str:
    """steps carry .pairs and .costs (a Costs); n/a columns say why below."""
    rows, missing, flags = [], {}, []
    for step in steps:
        c = step.costs
        if c is None:
            continue
        missing.update(c.missing)
        flags += [f for f in c.flags if f not in flags]
        t = c.threads
        rows.append(
            [
                str(step.pairs),
                _cell(c.cpu_us_per_round, "{:.2f}"),
                _cell(c.system_share_pct, "{:.0f}"),
                _cell(_mean(u for _, u in c.rtt_us), "{:.2f}"),
                _cell(_mean(x.run_delay_us_per_round for x in t), "{:.2f}"),
                _cell(_mean(x.vcsw_per_round for x in t), "{:.2f}"),
                _cell(_mean(x.ivcsw_per_round for x in t), "{:.2f}"),
                _cell(sum((x.migrations or 0) for x in t) if t else None, "{:.0f}"),
                _cell(_sum(x.resched_per_round for x in c.cpus), "{:.4f}"),
                _cell(_sum(x.callfunc_per_round for x in c.cpus), "{:.4f}"),
                _cell(_sum(x.remote_wakeups_per_s for x in c.cpus), "{:,.0f}"),
            ]
        )
    if not rows:
        return ""
    headers = ["pairs", "CPU µs/round", "sys %", "RTT µs", "run delay µs/round",
               "vcsw/round", "ivcsw/round", "migrations", "resched IPI/round",
               "callfunc IPI/round", "remote wakeups/s"]  # fmt: skip
    lines = [format_table(headers, rows, "r" * len(headers))]
    lines += [f"n/a {name}: {why}" for name, why in sorted(missing.items())]
    lines += [f"flag: {f}" for f in flags]
    return "\n".join(lines)


def _sum(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) if vals else None
