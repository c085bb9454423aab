"""Latency figures as text: the compact per-interval form and the per-pair table."""

from __future__ import annotations

from collections.abc import Iterable

from ...engine.latency import PairLatency, format_ns
from .tables import format_table


def compact(pairs: Iterable[PairLatency]) -> str:
    """`lat 0:rtt=7.14us/17.5us,ow=3.73us/5.54us` (p50/p99) for a run line."""
    parts = []
    for p in pairs:
        name = "all" if p.pair < 0 else str(p.pair)  # -1 is every pair pooled
        if p.rtt.n == 0 and p.oneway.n == 0:
            parts.append(f"{name}:-")
            continue
        parts.append(
            f"{name}:rtt={format_ns(p.rtt.p50)}/{format_ns(p.rtt.p99)},"
            f"ow={format_ns(p.oneway.p50)}/{format_ns(p.oneway.p99)}"
        )
    return "lat(p50/p99) " + " ".join(parts) if parts else ""


def table(pairs: Iterable[PairLatency]) -> str:
    """One row per pair: the round trip A saw and the one-way wake-up, n and percentiles."""
    headers = ["pair", "what", "n", "p50", "p99", "p99.9", "max", "mean"]
    rows = []
    for p in pairs:
        name = "all" if p.pair < 0 else str(p.pair)
        for what, s in (("round trip", p.rtt), ("one-way", p.oneway)):
            rows.append(
                [
                    name,
                    what,
                    f"{s.n:,}",
                    format_ns(s.p50),
                    format_ns(s.p99),
                    format_ns(s.p999),
                    format_ns(s.max),
                    format_ns(s.mean),
                ]
            )
    return format_table(headers, rows, "llrrrrrr")
