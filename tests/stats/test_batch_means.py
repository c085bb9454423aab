"""ab's third interval arm: batch means of the blocks, on planted log ratios.

The ratios are planted (a step between the two halves of a run, as the 38
quiet A/A runs of 2026-12-06 showed in 6 of them); the answers are computed
here with scipy, not through ipctop's helpers.
"""

from __future__ import annotations

import math
import statistics

import pytest
import scipy.stats as sps

from ipctop.analysis import stats
from ipctop.analysis.batch_means import BATCHES, batch_se
from ipctop.analysis.stats import IMPROVEMENT, NO_DIFFERENCE


def _blocks(ratios: list[float]) -> list[tuple[list[float], list[float]]]:
    return [([100.0], [100.0 * math.exp(r)]) for r in ratios]


def _step(n: int = 40) -> list[float]:
    """-0.4 % in the first half, +2.0 % in the second, ±1 % alternating within each."""
    return [(-0.004 if i < n // 2 else 0.020) + (0.01 if i % 2 else -0.01) for i in range(n)]


def test_a_step_between_the_halves_widens_the_interval_to_the_batch_means() -> None:
    ratios = _step()
    blocks_only = sps.ttest_1samp(ratios, 0.0)
    assert blocks_only.pvalue < 0.05  # what the blocks alone would call: +0.8 %
    d = stats.paired_difference(_blocks(ratios))
    means = [statistics.fmean(ratios[i : i + 4]) for i in range(0, 40, 4)]
    half = sps.t.ppf(0.975, 9) * statistics.stdev(means) / math.sqrt(10)
    mean = statistics.fmean(ratios)
    assert (d.low, d.high) == (
        pytest.approx(math.exp(mean - half)),
        pytest.approx(math.exp(mean + half)),
    )
    assert d.df == 9.0 and d.verdict == NO_DIFFERENCE
    assert d.notes == ("wider from batch means: 40 blocks in 10 batches",)


def test_blocks_that_do_not_drift_keep_their_own_interval() -> None:
    # The same ±1 % alternation around +0.8 % with no step: the batches cancel it, so
    # their spread is nil and the blocks' own t stands, its df and p unchanged.
    ratios = [0.008 + (0.01 if i % 2 else -0.01) for i in range(40)]
    d = stats.paired_difference(_blocks(ratios))
    ref = sps.ttest_1samp(ratios, 0.0)
    assert d.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert d.df == 39.0 and d.notes == () and d.verdict == IMPROVEMENT


def test_under_twenty_blocks_there_is_no_batch_arm() -> None:
    assert batch_se(_step(19)) is None
    assert stats.paired_difference(_blocks(_step(19))).notes == ()
    se, df = batch_se(_step(20)) or (0.0, 0.0)
    means = [statistics.fmean(_step(20)[i : i + 2]) for i in range(0, 20, 2)]
    assert (se, df) == (pytest.approx(statistics.stdev(means) / math.sqrt(BATCHES)), 9.0)


def test_batches_of_unequal_size_cover_every_block_once() -> None:
    values = [float(i) for i in range(23)]  # 23 = two batches of 3 and eight of 2
    se, df = batch_se(values) or (0.0, 0.0)
    cuts = [i * 23 // 10 for i in range(11)]
    sizes = [b - a for a, b in zip(cuts, cuts[1:])]
    assert sum(sizes) == 23 and sorted(set(sizes)) == [2, 3]
    means = [statistics.fmean(values[a:b]) for a, b in zip(cuts, cuts[1:])]
    assert se == pytest.approx(statistics.stdev(means) / math.sqrt(10)) and df == 9.0
