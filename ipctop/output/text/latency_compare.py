"""Latency side by side: each record's p50 and p99 per pair count, with intervals.

A step's figures come from its sampler windows (every interval of every run,
all pairs together), summarized as throughput is (analysis.stats): median and
95 % interval; against the first record, the ratio by Welch's t on logs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...analysis.stats import difference, fmt_diff, fmt_interval, summarize
from ...engine.latency import format_ns
from .tables import format_table

if TYPE_CHECKING:
    from ..records.record import Record

SHOWN = (("rtt_p50", "round trip p50"), ("rtt_p99", "round trip p99"),
         ("oneway_p50", "one-way p50"), ("oneway_p99", "one-way p99"))  # fmt: skip


def _windows(record: Record) -> dict[int, dict[str, tuple[float, ...]]]:
    return {s.pairs: s.latency.windows for s in record.steps if s.latency is not None}


def has_latency(records: Sequence[Record]) -> bool:
    return any(_windows(r) for r in records)


def format_latency_comparison(records: Sequence[Record], labels: Sequence[str]) -> str:
    """One row per pair count and figure; a record without timing shows '-'."""
    curves = [_windows(r) for r in records]
    counts = sorted(set().union(*curves))
    headers = ["pairs", "figure"] + [str(x) for x in labels]
    headers += [f"vs first: {x}" for x in labels[1:]]
    rows = []
    for n in counts:
        for key, name in SHOWN:
            samples = [list(c.get(n, {}).get(key, ())) for c in curves]
            row = [str(n), name]
            row += [fmt_interval(summarize(xs), format_ns) if xs else "-" for xs in samples]
            for xs in samples[1:]:
                ok = len(xs) >= 2 and len(samples[0]) >= 2
                row.append(fmt_diff(difference(samples[0], xs)) if ok else "-")
            rows.append(row)
    return format_table(headers, rows, "ll" + "r" * (len(headers) - 2))
