"""When ab may stop: a block count fixed by a pilot (Stein's two-stage procedure).

Stopping as soon as an interval looks narrow enough is optional stopping: the
interval is checked again and again, and an A/A run then calls a change far
more often than 5 % (a simulation with block s.d. 1-2 % gave 7.8-9.5 %).
Stein (1945) removes that: the first PILOT_BLOCKS blocks estimate the s.d. of
the block log ratios, that s.d. fixes how many blocks N give the asked
precision, and the final interval uses the pilot's s.d. with its n - 1
degrees of freedom over all N blocks. The coverage is then exact whatever the
s.d. turns out to be; the data after the pilot never decide when to stop.
A time limit may still end the run early: it does not look at the data, so
the interval over the blocks done stays valid, only wider than asked.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ipctop.analysis.stats import CONFIDENCE, Difference, block_log_ratios, paired_difference

PILOT_BLOCKS = 6
# A pilot that happens to see no spread at all must not end the run at once.
_MIN_SD = 1e-4


@dataclass(frozen=True)
class Plan:
    """The block count a pilot asked for, and the pilot s.d. the interval will use."""

    pilot: int
    sd: float
    blocks: int
    precision_pct: float

    def describe(self) -> str:
        return (
            f"Stein two-stage: {self.pilot} pilot blocks (s.d. of log ratios "
            f"{100 * self.sd:.2f} %) ask for {self.blocks} blocks for ±{self.precision_pct:g} %"
        )


def blocks_needed(
    blocks: Sequence[tuple[Sequence[float], Sequence[float]]],
    precision_pct: float,
    confidence: float = CONFIDENCE,
) -> tuple[int, float]:
    """(N, pilot s.d.) from the pilot blocks given: N blocks make the interval ±precision_pct."""
    ratios = block_log_ratios(blocks)
    n0 = len(ratios)
    if n0 < 2:
        raise ValueError(f"a pilot needs at least 2 blocks, got {n0}")
    from scipy.stats import t

    sd = max(statistics.stdev(ratios), _MIN_SD)
    h = math.log1p(precision_pct / 100.0)
    q = float(t.ppf(0.5 + confidence / 2.0, n0 - 1))
    return max(n0, math.ceil((q * sd / h) ** 2)), sd


def plan(blocks: Sequence[tuple[Sequence[float], Sequence[float]]], precision_pct: float) -> Plan:
    n, sd = blocks_needed(blocks, precision_pct)
    return Plan(len(block_log_ratios(blocks)), sd, n, precision_pct)


class SteinStop:
    """ab's stop rule: PILOT_BLOCKS blocks, then the block count their s.d. asks for.

    The data after the pilot decide only whether to go on: when all blocks
    together spread more than the pilot did, the run continues (to its time
    limit, at worst), never stops sooner, so a verdict still needs Stein's own
    interval to call it."""

    def __init__(self, precision_pct: float) -> None:
        self.precision_pct = precision_pct
        self.plan: Plan | None = None
        self.reached = False  # done() said so: the plan's blocks, at the asked precision

    def done(self, blocks: Sequence[tuple[Sequence[float], Sequence[float]]]) -> bool:
        n = len(block_log_ratios(blocks))
        if n < PILOT_BLOCKS:
            return False
        if self.plan is None:
            # The pilot is the first PILOT_BLOCKS blocks that gave a ratio: a block with
            # a side that kept no window (every one stalled) is no part of it.
            rated = [(a, b) for a, b in blocks if a and b]
            self.plan = plan(rated[:PILOT_BLOCKS], self.precision_pct)
        if n < self.plan.blocks:
            return False
        # The planned count is done; stop only if the interval the run reports
        # (the wider of the pilot's and all blocks', stats.paired_difference) is
        # as narrow as asked. Blocks wilder than the pilot keep it going to the
        # time limit instead of ending on a verdict the pilot alone vouched for.
        d = self.difference(blocks)
        half = (math.log(d.high) - math.log(d.low)) / 2.0
        self.reached = half <= math.log1p(self.precision_pct / 100.0) * (1.0 + 1e-9)
        return self.reached

    def difference(self, blocks: Sequence[tuple[Sequence[float], Sequence[float]]]) -> Difference:
        """B/A over the blocks so far; with the pilot's s.d. once there is a plan."""
        if self.plan is None:
            return paired_difference(blocks)
        return paired_difference(blocks, pilot_sd=self.plan.sd, pilot_n=self.plan.pilot)

    def describe(self) -> str:
        if self.plan is None:
            return f"Stein two-stage: stopped before its {PILOT_BLOCKS} pilot blocks"
        return self.plan.describe()
