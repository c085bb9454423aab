"""Latency in an A/B run: each slot's p50 and p99, and B/A from the ABBA blocks.

A slot's figure is the percentile of every round it timed (all pairs in one
histogram). As for throughput, B/A comes from one log ratio per ABBA block
(analysis.stats.paired_difference: a block cancels a linear drift of the box),
so the interval is that of the blocks, not of the rounds: millions of rounds
per slot would make a rounds-based interval far narrower than the box allows.

Latency is a cost, so the reading is the other way round from ops/s: B/A above
1 over the whole interval means B is slower.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from ..engine.latency import PairLatency
from .stats import Difference, TooFewWindows, paired_difference

FIGURES = (
    ("rtt_p50", "round trip p50"),
    ("rtt_p99", "round trip p99"),
    ("oneway_p50", "one-way p50"),
    ("oneway_p99", "one-way p99"),
)
SLOWER = "B slower"
FASTER = "B faster"
NO_DIFFERENCE = "no difference shown"

#: one ABBA block: side ("A"/"B") -> figure -> that side's slots' values in ns
Block = Mapping[str, Mapping[str, Sequence[float]]]


def slot_figures(lat: PairLatency | None) -> dict[str, float]:
    """A slot's figures in ns; a figure nothing was timed for is left out."""
    if lat is None:
        return {}
    values = {
        "rtt_p50": lat.rtt.p50,
        "rtt_p99": lat.rtt.p99,
        "oneway_p50": lat.oneway.p50,
        "oneway_p99": lat.oneway.p99,
    }
    return {k: float(v) for k, v in values.items() if v is not None and v > 0}


def empty_side() -> dict[str, list[float]]:
    return {k: [] for k, _ in FIGURES}


def differences(blocks: Sequence[Block]) -> dict[str, Difference]:
    """B/A per figure; a figure without 2 blocks timed on both sides is left out."""
    out = {}
    for key, _ in FIGURES:
        pairs = [(b["A"].get(key, ()), b["B"].get(key, ())) for b in blocks]
        try:
            out[key] = paired_difference([(a, b) for a, b in pairs if a and b])
        except TooFewWindows:
            continue
    return out


def verdict(d: Difference) -> str:
    if d.low > 1.0:
        return SLOWER
    if d.high < 1.0:
        return FASTER
    return NO_DIFFERENCE


def side_values(blocks: Sequence[Block], side: str, key: str) -> list[float]:
    return [v for b in blocks for v in b[side].get(key, ())]


def median(xs: Sequence[float]) -> float | None:
    return statistics.median(xs) if xs else None
