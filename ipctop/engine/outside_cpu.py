"""What other processes used of the box's CPUs while ipctop measured.

A rate per wall-second (ab's default, ops/s) moves with that load; a rate per
CPU-second of the ends (`--metric cpu`) does not. On a box running a test
suite beside it, 3 of 14 A/A `ab` runs judged on ops/s called a change that
was not there (BENCHMARKS.md), so ab names this figure and declines an ops/s
verdict above BUSY_PCT.
"""

from __future__ import annotations

import os
import time

import psutil

from . import procfs

#: other processes' CPU, in % of one CPU on average, above which ops/s is not judged
BUSY_PCT = 25.0


def _own_seconds() -> float:
    """CPU seconds of this process, its reaped children and its live descendants."""
    me = psutil.Process()
    t = me.cpu_times()
    total = t.user + t.system + t.children_user + t.children_system
    for child in me.children(recursive=True):
        try:
            c = child.cpu_times()
        except psutil.Error:
            continue  # gone since it was listed: its parent reaps its time
        total += c.user + c.system
    return float(total)


def _busy_seconds(proc: str) -> float | None:
    """CPU seconds every online CPU spent running anything since boot (steal not included:
    the hypervisor's, not this box's processes)."""
    ticks = procfs.read_cpu_ticks(proc)
    if not ticks:
        return None
    hz = os.sysconf("SC_CLK_TCK")
    return sum(t.user + t.nice + t.system + t.irq + t.softirq for t in ticks.values()) / hz


class OutsideCpu:
    """Others' CPU since this object was made: busy CPU time of the box minus ours."""

    def __init__(self, proc: str = "/proc") -> None:
        self.proc = proc
        self._t0 = time.monotonic()
        self._busy0 = _busy_seconds(proc)
        self._own0 = _own_seconds()

    def pct(self) -> float | None:
        """Others' CPU in % of one CPU, on average since the start; None without /proc/stat."""
        busy = _busy_seconds(self.proc)
        span = time.monotonic() - self._t0
        if busy is None or self._busy0 is None or span <= 0:
            return None
        others = (busy - self._busy0) - (_own_seconds() - self._own0)
        # Tick rounding of /proc/stat against psutil's clock can dip a hair below 0.
        return max(0.0, 100.0 * others / span)
