"""ab's stop rule (analysis.stopping): a pilot fixes the least block count, and
the run ends on the wider of the pilot's interval and all blocks' own, so
looking at the interval after every block cannot raise the A/A rate."""

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


def test_the_pilot_fixes_the_count_and_the_run_ends_on_an_interval_as_narrow_as_asked() -> None:
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
    assert stop.plan is not None and stop.plan.blocks == max(want, PILOT_BLOCKS) <= n
    assert stop.reached

    def halves(m: int) -> tuple[float, float]:
        """Stein's half-width (pilot s.d., 5 df) and all m blocks' own, in log units."""
        full = statistics.stdev(ratios[:m])
        return (
            t.ppf(0.975, PILOT_BLOCKS - 1) * sd / math.sqrt(m),
            t.ppf(0.975, m - 1) * full / math.sqrt(m),
        )

    # It stops at the first count from the plan's on whose wider interval is ±1 %.
    for m in range(stop.plan.blocks, n + 1):
        assert (max(halves(m)) <= math.log(1.01)) == (m == n), m
    d = stop.difference(blocks_of(ratios[:n]))
    stein, own = halves(n)
    if stein >= own:
        assert d.df == PILOT_BLOCKS - 1 and d.se == pytest.approx(sd / math.sqrt(n))
    else:
        assert d.df == n - 1
        assert d.se == pytest.approx(statistics.stdev(ratios[:n]) / math.sqrt(n))
    assert "6 pilot blocks" in stop.describe()


def test_a_calm_pilot_does_not_vouch_for_wild_blocks_after_it() -> None:
    """As a real A/A run of ab on this VM: six calm blocks (s.d. about 1 %), then
    two of -21 % and -19 %. Stein's interval alone called a 5 % regression."""
    ratios = [-0.0100, -0.0115, -0.0020, -0.0018, 0.0003, 0.0191, -0.2105, -0.1935]
    stop = SteinStop(precision_pct=1.0)
    for n in range(1, len(ratios) + 1):
        assert not stop.done(blocks_of(ratios[:n])), n
    assert stop.plan is not None and stop.plan.blocks <= len(ratios) and not stop.reached
    d = stop.difference(blocks_of(ratios))
    assert d.verdict == "no difference shown"
    # The interval is all eight blocks' own t interval, computed here.
    m = statistics.fmean(ratios)
    half = t.ppf(0.975, 7) * statistics.stdev(ratios) / math.sqrt(8)
    assert d.low == pytest.approx(math.exp(m - half)) and d.high == pytest.approx(
        math.exp(m + half)
    )


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


def test_a_block_without_a_ratio_is_no_part_of_the_pilot() -> None:
    # Planted: a block whose A side kept no window (every one stalled) gives no log
    # ratio; the pilot is the first PILOT_BLOCKS blocks that gave one, not the first
    # PILOT_BLOCKS blocks with the empty one counted among them.
    ratios = [0.01, -0.02, 0.03, -0.01, 0.02, 0.0, 0.01]
    blocks = blocks_of(ratios)
    with_gap = [blocks[0], ([], [1000.0]), *blocks[1:]]
    stop = SteinStop(precision_pct=50.0)  # the pilot's count is enough: done at once
    assert not stop.done(with_gap[:PILOT_BLOCKS])  # 5 blocks with a ratio: still the pilot
    assert stop.done(with_gap[: PILOT_BLOCKS + 1]) and stop.plan is not None
    assert stop.plan.pilot == PILOT_BLOCKS
    assert stop.plan.sd == pytest.approx(statistics.stdev(ratios[:PILOT_BLOCKS]))
