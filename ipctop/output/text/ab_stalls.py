"""ab's stalled windows: what they took out of the blocks, said once and recorded.

A slot's windows are measure_engine's (window_rates for ops/s, cpu_rates for
--metric cpu): one rule (live.measure.kept) leaves a stalled window out of
both. A block whose side kept no window has no log ratio and is left out of
B/A (analysis.stats.block_log_ratios); the blocks the result counts are those
that gave one. `ipctop ab` prints the line and records the object; `compare`
prints the line again from an ab record.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...analysis.stats import block_log_ratios
from ...engine.stalls import STALL_S, StallReport, StallSummary
from ..records.record_ab import AbStalls

Blocks = Sequence[tuple[Sequence[float], Sequence[float]]]


def ab_stalls(slots: Sequence[tuple[str, StallReport | None]], blocks: Blocks) -> AbStalls | None:
    """Each side's stalls summed over its slots (side, RunResult.stalls), and the
    blocks left out; None when no window stalled and every block gave a ratio."""
    sides: dict[str, StallSummary] = {}
    for name, report in slots:
        if report is not None:
            mine = report.summary()
            sides[name] = sides[name].plus(mine) if name in sides else mine
    left_out = len(blocks) - len(block_log_ratios(blocks))
    if not sides and not left_out:
        return None
    return AbStalls.model_validate({**sides, "blocks_left_out": left_out})


def stalls_line(stalls: AbStalls, blocks: int) -> str:
    """One line under ab's result: the windows left out per side, and the blocks."""
    parts = []
    for name in "AB":
        s: StallSummary | None = getattr(stalls, name)
        if s is not None:
            parts.append(f"{name} {s.windows_left_out} window(s) ({s.left_out_s:g} s)")
    line = (
        f"  stalled windows left out (no round or no reading for {STALL_S:g} s: "
        f"not a sample of the metric): {', '.join(parts) or 'none'}"
    )
    if stalls.blocks_left_out:
        line += f"; {stalls.blocks_left_out} of {blocks} block(s) left out: a side kept no window"
    return line
