"""The threads table as the TUI reads it: counts over every thread, rows built on demand.

At 2,048 threads a redraw that builds a row object per thread costs the pairs
CPU for rows nobody can see; the panel asks for the few rows on screen, and
the counts in its subtitle come from one pass over the sample's threads.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
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
        histories: Mapping[ThreadKey, Sequence[float]],
        running: Sequence[float] | None = None,
    ) -> None:
        self.threads = threads
        self.median = median
        self.total = total
        self._histories = histories
        # The running threads' ops/s, sorted (the session has them from the median):
        # the imbalance count is then two bisections, not a pass over 2,048 threads.
        self._running = running
        self._off_cpu: int | None = None
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
            # A view of the live history, not a copy: a sparkline reads only its tail.
            history=self._histories.get(thread_key(t), ()),
        )

    def imbalanced(self) -> int:
        """How many threads are over IMBALANCE off the median (no row built)."""
        if self.median <= 0:
            return 0
        m = self.median
        limit = IMBALANCE * m
        if self._running is None:
            return sum(
                1 for t in self.threads if t.state == "running" and abs(t.ops_per_s - m) > limit
            )

        # abs(v - m) > limit, counted on sorted values: v - m is monotonic in v (IEEE
        # subtraction rounds monotonically), so the same comparison, bisected.
        def off(v: float) -> float:
            return v - m

        values = self._running
        below = bisect_left(values, -limit, key=off)
        above = len(values) - bisect_right(values, limit, key=off)
        return below + above

    def off_cpu(self) -> int:
        """How many threads ran off their binding: counted once per table."""
        if self._off_cpu is None:
            # One walk per table (a step: once a second above 64 threads). Kept in
            # Python: the property's walk (75 ns a thread) measured faster than the
            # five map/count passes that would do it at C speed.
            self._off_cpu = sum(1 for t in self.threads if t.off_cpu)
        return self._off_cpu
