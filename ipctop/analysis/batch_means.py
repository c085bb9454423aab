"""Batch means of ab's blocks: the spread a slow drift between the two sides leaves.

ABBA cancels a drift of the box within each block, but not a difference between
the two sides that moves slowly over a run (each side keeps its own pairs, kernel
objects and placement for the whole run). Over 38 quiet A/A runs of `ab` at its
defaults (2026-12-06, 41-42 blocks each) neighbouring blocks were independent
(mean lag-1 r -0.05), yet the difference between a run's first and second halves,
in units of its own standard error, had an s.d. of 1.14 and passed ±1.96 in 6
runs (about 2 expected): blocks minutes apart are not. The means of BATCHES
consecutive batches carry such a drift in their spread, so ab's interval is never
narrower than theirs (stats.paired_difference).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

BATCHES = 10
MIN_PER_BATCH = 2  # fewer blocks than BATCHES x this: no batch-means arm


def batch_se(values: Sequence[float], batches: int = BATCHES) -> tuple[float, float] | None:
    """(standard error of the mean, degrees of freedom) from the means of `batches`
    consecutive batches of as equal a size as n allows, or None when there are fewer
    than MIN_PER_BATCH values a batch."""
    n = len(values)
    if batches < 2 or n < batches * MIN_PER_BATCH:
        return None
    cuts = [i * n // batches for i in range(batches + 1)]
    means = [statistics.fmean(values[a:b]) for a, b in zip(cuts, cuts[1:])]
    return statistics.stdev(means) / math.sqrt(batches), float(batches - 1)
