"""A B B A blocks for the fidelity scripts (chat_fidelity.py, hackbench_fidelity.py).

Each block runs A, B, B, A, so a drift of the box over a block weighs on both
sides alike. A block's figure is log(mean B) - log(mean A); B/A comes with its
95 % interval from a t on the blocks' log ratios (analysis/stats.paired_difference).
The scripts' bar: B within 5 % of A.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from ipctop.analysis.stats import paired_difference

Slot = Callable[[], list[float]]
Blocks = list[tuple[list[float], list[float]]]


def run_blocks(n: int, a: Slot, b: Slot, a_name: str, show: Callable[[float], str]) -> Blocks:
    """n blocks of A B B A; one line per block: each side's mean (`show`) and B/A."""
    blocks: Blocks = []
    for i in range(n):
        a1 = a()
        b1 = b()
        b2 = b()
        a2 = a()
        aa, bb = a1 + a2, b1 + b2
        blocks.append((aa, bb))
        ma, mb = statistics.fmean(aa), statistics.fmean(bb)
        ratio = mb / ma if ma > 0 else 0.0
        print(
            f"block {i + 1}: {a_name} {show(ma)} · ipctop {show(mb)} · ipctop/{a_name} {ratio:.3f}",
            flush=True,
        )
    return blocks


def print_verdict(blocks: Blocks, what: str) -> None:
    """B/A with its interval and whether it is shown within 5 %, or why there is none."""
    if len(blocks) < 2:
        print("one block gives no interval; use --blocks 2 or more")
        return
    d = paired_difference(blocks)
    within = d.low >= 0.95 and d.high <= 1.05
    verdict = "yes" if within else ("no" if d.low > 1.05 or d.high < 0.95 else "not shown")
    print(
        f"{what}: {d.ratio:.3f} [{d.low:.3f}, {d.high:.3f}] "
        f"({d.test}, {len(blocks)} blocks); within 5 %: {verdict}"
    )
