"""The threads panel's rows for a load workload: one per group or room.

A hackbench group is 40 ends and a chat room 80; at 100 groups a row per
thread is 4,000 rows nobody can read. Here each unit is one row: its ends,
the CPUs they last ran on, its messages/s (the sum of its ends' rates: the
receivers count deliveries, the senders count none) with its own history,
and its share of the units' sum (live, the total; a hackbench sweep's
groups each have their own time, so their rates do not add up to the run's
messages over the last group's end). A unit more than IMBALANCE off the median unit
is flagged, as a thread is against the median thread.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Sequence
from itertools import islice
from typing import NamedTuple

from ..cpus import format_cpu_list
from ..engine.sample import Sample, ThreadSample

IMBALANCE = 0.20  # as thread_table.IMBALANCE for threads

UnitKey = tuple[int, int]  # (unit, the lowest tid of its ends): a re-added unit starts anew


class UnitRow(NamedTuple):
    unit: int
    ends: int
    stopped: int  # ends not running (exited, failed, stopping)
    cpus: str  # where its ends last ran, e.g. "0-1"
    ops_per_s: float
    share: float  # of the total, 0..1
    off_median: float | None
    history: Sequence[float]

    @property
    def imbalanced(self) -> bool:
        return self.off_median is not None and abs(self.off_median) > IMBALANCE


def _by_unit(threads: Sequence[ThreadSample]) -> dict[int, list[ThreadSample]]:
    units: dict[int, list[ThreadSample]] = {}
    for t in threads:
        units.setdefault(t.pair, []).append(t)
    return units


def _key(unit: int, ends: list[ThreadSample]) -> UnitKey:
    return (unit, min(t.tid for t in ends))


class UnitHistory:
    """Per-unit rate histories, fed the same samples as the Session."""

    def __init__(self, history: int) -> None:
        self.history = history
        self.units: dict[UnitKey, deque[float]] = {}
        self._latest: Sample | None = None

    def feed(self, sample: Sample) -> None:
        self._latest = sample
        seen = set()
        for unit, ends in _by_unit(sample.threads).items():
            key = _key(unit, ends)
            seen.add(key)
            rate = sum(t.ops_per_s for t in ends)
            self.units.setdefault(key, deque(maxlen=self.history)).append(rate)
        for key in [k for k in self.units if k not in seen]:
            del self.units[key]

    def rows(self) -> list[UnitRow]:
        s = self._latest
        if s is None:
            return []
        units = _by_unit(s.threads)
        rates = {u: sum(t.ops_per_s for t in ends) for u, ends in units.items()}
        median = statistics.median(rates.values()) if rates else 0.0
        total = sum(rates.values())
        rows = []
        for u in sorted(units):
            ends = units[u]
            cpus = {t.last_cpu for t in ends if t.last_cpu is not None}
            rate = rates[u]
            rows.append(
                UnitRow(
                    unit=u,
                    ends=len(ends),
                    stopped=sum(1 for t in ends if t.state != "running"),
                    cpus=format_cpu_list(sorted(cpus)) if cpus else "?",
                    ops_per_s=rate,
                    share=rate / total if total > 0 else 0.0,
                    off_median=(rate - median) / median if median > 0 else None,
                    history=self.units.get(_key(u, ends), ()),
                )
            )
        return rows

    def scale(self, width: int) -> float:
        """One ceiling for every unit's sparkline over its last `width` samples."""
        peak = 0.0
        for h in self.units.values():
            recent = islice(reversed(h), width) if width > 0 else h
            peak = max(peak, max(recent, default=0.0))
        return peak
