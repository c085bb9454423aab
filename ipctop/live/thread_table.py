"""The threads table as the TUI reads it: counts over every thread, rows built on demand.

At 2,048 threads a redraw that builds a row object per thread costs the pairs
CPU for rows nobody can see; the panel asks for the few rows on screen, and
the counts in its subtitle come from one pass over the sample's threads.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ..engine.sample import ThreadSample

#: a thread this far from the median of all running threads is highlighted
IMBALANCE = 0.20

ThreadKey = tuple[int, str, int]  # (pair, role, tid): a re-added pair starts a new row


def thread_key(t: ThreadSample) -> ThreadKey:
    return (t.pair, t.role, t.tid)


class ThreadRow(NamedTuple):
    """A NamedTuple, not a frozen dataclass: cheap to build for the rows on screen."""

    sample: ThreadSample
    share: float  # of the total, 0..1
    off_median: float | None  # (ops - median) / median, None when no median
    history: Sequence[float]

    @property
    def imbalanced(self) -> bool:
        return self.off_median is not None and abs(self.off_median) > IMBALANCE


class ThreadTable:
    """One sample's threads in (pair, role) order; row(i) builds one row."""

    def __init__(
        self,
        threads: Sequence[ThreadSample],
        median: float,
        total: float,
        histories: Mapping[ThreadKey, deque[float]],
    ) -> None:
        self.threads = threads
        self.median = median
        self.total = total
        self._histories = histories
        self.built = 0  # rows built since this table was made: what a redraw cost

    def __len__(self) -> int:
        return len(self.threads)

    def _off(self, t: ThreadSample) -> float | None:
        if self.median > 0 and t.state == "running":
            return (t.ops_per_s - self.median) / self.median
        return None

    def row(self, index: int) -> ThreadRow:
        self.built += 1
        t = self.threads[index]
        return ThreadRow(
            sample=t,
            share=t.ops_per_s / self.total if self.total > 0 else 0.0,
            off_median=self._off(t),
            # The live deque, not a copy: a sparkline reads only its tail.
            history=self._histories.get(thread_key(t), ()),
        )

    def imbalanced(self) -> int:
        """How many threads are over IMBALANCE off the median (no row built)."""
        if self.median <= 0:
            return 0
        limit = IMBALANCE * self.median
        return sum(
            1
            for t in self.threads
            if t.state == "running" and abs(t.ops_per_s - self.median) > limit
        )

    def off_cpu(self) -> int:
        return sum(1 for t in self.threads if t.off_cpu)
