"""The latency table of `ipctop ab` and of `compare AB.json`."""

from __future__ import annotations

from collections.abc import Sequence

from ..analysis.ab_latency import FIGURES, Block, differences, side_values, verdict
from ..analysis.stats import fmt_diff, fmt_interval, summarize
from ..engine.latency import format_ns
from .tables import format_table

TITLE = (
    "latency (all pairs; per slot: median of the slots [95 % interval] n; "
    "B/A from the ABBA blocks' log ratios)"
)


def format_ab_latency(blocks: Sequence[Block]) -> str | None:
    """One row per figure both sides timed; None when neither side timed rounds."""
    diffs = differences(blocks)
    rows = []
    for key, name in FIGURES:
        a, b = side_values(blocks, "A", key), side_values(blocks, "B", key)
        if not a and not b:
            continue
        d = diffs.get(key)
        rows.append(
            [
                name,
                fmt_interval(summarize(a), format_ns) if a else "-",
                fmt_interval(summarize(b), format_ns) if b else "-",
                fmt_diff(d) if d else "- (fewer than 2 blocks timed)",
                verdict(d) if d else "",
            ]
        )
    if not rows:
        return None
    table = format_table(["figure", "A", "B", "B/A", "verdict"], rows, "lllll")
    return f"{TITLE}\n{table}"
