"""The latency table of `ipctop ab` and of `compare AB.json`."""

from __future__ import annotations

from collections.abc import Sequence

from ...analysis.ab_latency import FIGURES, Block, differences, side_values, verdict
from ...analysis.stats import NO_DIFFERENCE, RUNS, fmt_diff, fmt_interval, holm, summarize
from ...engine.latency import format_ns
from .tables import format_table

TITLE = (
    "latency (all pairs; per slot: geometric mean of the slots [95 % interval] n; "
    "B/A from the ABBA blocks' log ratios)"
)


def format_ab_latency(blocks: Sequence[Block]) -> str | None:
    """One row per figure both sides timed; None when neither side timed rounds."""
    diffs = differences(blocks)
    # Several figures judged at once: Holm over them keeps the family-wise error at 5 %.
    keys = [k for k, _ in FIGURES if k in diffs]
    adjusted = dict(zip(keys, holm([diffs[k].p_value for k in keys])))
    rows = []
    for key, name in FIGURES:
        a, b = side_values(blocks, "A", key), side_values(blocks, "B", key)
        if not a and not b:
            continue
        d = diffs.get(key)
        rows.append(
            [
                name,
                # Each slot starts its own pairs: a slot is a run.
                fmt_interval(summarize(a, unit=RUNS), format_ns) if a else "-",
                fmt_interval(summarize(b, unit=RUNS), format_ns) if b else "-",
                fmt_diff(d) if d else "- (fewer than 2 blocks timed)",
                (verdict(d) if adjusted[key] < 0.05 else NO_DIFFERENCE) if d else "",
            ]
        )
    if not rows:
        return None
    table = format_table(["figure", "A", "B", "B/A", "verdict"], rows, "lllll")
    note = f"verdicts Holm-adjusted over the {len(keys)} figure(s), 5 % family-wise"
    return f"{TITLE}\n{table}\n{note}"
