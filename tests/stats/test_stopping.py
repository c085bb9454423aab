"""ab's stop rule (analysis.stopping): a pilot fixes the block count, so looking
at the interval after every block cannot raise the A/A rate."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from scipy.stats import t

from ipctop.analysis.stopping import PILOT_BLOCKS, SteinStop


def blocks_of(log_ratios: list[float]) -> list[tuple[list[float], list[float]]]:
    """Blocks whose B/A log ratio is exactly each value given (one window a side)."""
    return [([1000.0], [1000.0 * math.exp(x)]) for x in log_ratios]


def test_the_pilot_fixes_the_count_and_later_blocks_never_change_it() -> None:
    rng = random.Random(7)
    ratios = [rng.gauss(0.0, 0.02) for _ in range(400)]
    stop = SteinStop(precision_pct=1.0)
    for n in range(1, PILOT_BLOCKS):
        assert not stop.done(blocks_of(ratios[:n])) and stop.plan is None
    sd = statistics.stdev(ratios[:PILOT_BLOCKS])
    # Computed here from Stein's formula: N = ceil((t_{0.975, n0-1} sd / ln 1.01)^2).
    want = math.ceil((t.ppf(0.975, PILOT_BLOCKS - 1) * sd / math.log(1.01)) ** 2)
    n = PILOT_BLOCKS
    while not stop.done(blocks_of(ratios[:n])):
        n += 1
    assert n == max(want, PILOT_BLOCKS) and stop.plan.blocks == n
    d = stop.difference(blocks_of(ratios[:n]))
    # The interval uses the pilot's s.d. and its 5 degrees of freedom over all n blocks.
    assert d.df == PILOT_BLOCKS - 1
    assert d.se == pytest.approx(sd / math.sqrt(n))
    assert "6 pilot blocks" in stop.describe()


def test_a_a_rate_stays_near_5_percent_where_peeking_inflated_it() -> None:
    """The old rule (stop once the interval is within ±precision, 3 blocks or more)
    against Stein's, on the same planted A/A series (block s.d. 1.5 %, ±1 %)."""
    from ipctop.analysis.stats import paired_difference

    rng = random.Random(20261204)
    trials, stein_calls, peek_calls = 600, 0, 0
    for _ in range(trials):
        ratios = [rng.gauss(0.0, 0.015) for _ in range(200)]
        stop = SteinStop(precision_pct=1.0)
        n = 1
        while not stop.done(blocks_of(ratios[:n])):
            n += 1
        stein_calls += stop.difference(blocks_of(ratios[:n])).verdict != "no difference shown"
        for m in range(3, 201):
            d = paired_difference(blocks_of(ratios[:m]))
            if d.half_width_pct < 1.0 or m == 200:
                peek_calls += d.verdict != "no difference shown"
                break
    # Binomial 95 % bounds at n 600 around 5 %: 3.4-6.9 %.
    assert stein_calls / trials <= 0.069
    assert peek_calls > stein_calls
