"""Latency side by side: each record's p50 and p99 per pair count, with intervals.

A step's figures come from its sampler windows (every interval of every run,
all pairs together), summarized as throughput is (analysis.stats): geometric
mean and 95 % interval; against the first record, the ratio by Welch's t on
logs. Records keep no latency per run, so these rest on windows (within-run
noise, no session term): shown with their intervals, never judged. A step
with no rate is skipped here as in the rate table (record.unrated), and said
with the rate table's own line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...analysis.stats import difference, fmt_diff, fmt_interval, summarize
from ...engine.latency import format_ns
from ..records.record import unrated, unrated_lines
from .tables import format_table

if TYPE_CHECKING:
    from ..records.record import Record

SHOWN = (("rtt_p50", "round trip p50"), ("rtt_p99", "round trip p99"),
         ("oneway_p50", "one-way p50"), ("oneway_p99", "one-way p99"))  # fmt: skip


def _windows(record: Record) -> dict[int, dict[str, tuple[float, ...]]]:
    # A step with no rate is no measurement of its latency either (its windows, if
    # any, are a stalled run's); a step with no window of any figure has nothing to show.
    skip = unrated(record)
    return {
        s.pairs: s.latency.windows
        for s in record.steps
        if s.latency is not None and s.pairs not in skip and any(s.latency.windows.values())
    }


def has_latency(records: Sequence[Record]) -> bool:
    return any(_windows(r) for r in records)


def format_latency_comparison(records: Sequence[Record], labels: Sequence[str]) -> str:
    """One row per pair count and figure; a record without timing shows '-'. Under
    the table, each timed step skipped for no rate, once (the rate table's line)."""
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
    table = format_table(headers, rows, "ll" + "r" * (len(headers) - 2))
    # The steps this table would have shown (their latency was recorded), once each.
    timed = [(r, [s.pairs for s in r.steps if s.latency is not None]) for r in records]
    skipped = dict.fromkeys(line for r, ns in timed for line in unrated_lines(r, ns))
    return "\n".join([table, *(f"  {line}" for line in skipped)])


NOT_JUDGED = (
    "latency rests on each record's sampler windows (within-run noise only; records keep "
    "no latency per run, so no session term): shown, not judged"
)


def latency_comparison_rows(
    records: Sequence[Record], labels: Sequence[str]
) -> list[dict[str, Any]]:
    """compare --json's latency: per pair count, figure and record, the estimate in ns,
    its interval and n, and against the first record the ratio; never a verdict."""
    curves = [_windows(r) for r in records]
    out: list[dict[str, Any]] = []
    for n in sorted(set().union(*curves)):
        for key, _ in SHOWN:
            samples = [list(c.get(n, {}).get(key, ())) for c in curves]
            for i, xs in enumerate(samples):
                if not xs:
                    continue
                s = summarize(xs)
                row: dict[str, Any] = {
                    "pairs": n, "figure": key, "side": labels[i], "estimate_ns": s.figure,
                    "low_ns": s.low, "high_ns": s.high, "n": s.n, "unit": s.unit,
                    "method": s.method, "judged": False,
                }  # fmt: skip
                if i and len(xs) >= 2 and len(samples[0]) >= 2:
                    d = difference(samples[0], xs)
                    row.update(diff_pct=d.diff_pct, low_pct=d.low_pct, high_pct=d.high_pct,
                               test=d.test)  # fmt: skip
                out.append(row)
    return out
