"""Keep the monitor off the measured CPUs, and measure what the monitor costs.

"The monitor" is every thread of this process that is not an end of a pair:
the UI thread, Textual's input thread, the sampler and the control workers.
Linux affinity is per thread, so each one is pinned by its tid.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable

_CLK_TCK = os.sysconf("SC_CLK_TCK")


def choose_monitor_cpu(allowed: Iterable[int], pair_cpus: Iterable[int] | None) -> int | None:
    """A CPU we may use that hosts no pair, or None when every one does.

    pair_cpus is None when some pair is unpinned: it may run anywhere, so no
    CPU is free of it. The highest free CPU is chosen because pairs are added
    from the lowest CPU up, so it stays free longest.
    """
    if pair_cpus is None:
        return None
    free = sorted(set(allowed) - set(pair_cpus))
    return free[-1] if free else None


def own_tids() -> list[int]:
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except FileNotFoundError:  # no procfs: nothing we can name by tid
        return []


def pin_monitor(cpus: set[int], exclude: set[int]) -> int:
    """Set the affinity of every thread of ours except `exclude`; returns how many moved.

    A thread that exits between listing and pinning is skipped.
    """
    moved = 0
    for tid in own_tids():
        if tid in exclude:
            continue
        try:
            os.sched_setaffinity(tid, cpus)
            moved += 1
        except (ProcessLookupError, FileNotFoundError):
            continue  # it ended meanwhile: nothing to pin
    return moved


def _thread_ticks(tid: int) -> int | None:
    try:
        with open(f"/proc/self/task/{tid}/stat", "rb") as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _task_links() -> int:
    """/proc/self/task's link count: 2 plus the threads, read in O(1).

    Listing the directory (and making the set of pair threads to leave out)
    at every reading cost 0.93 ms of CPU a reading at 1,024 pairs, against
    0.23 ms with the listing kept (bench/own_cpu_read.py), and up to 18 ms
    of wall time while the pairs ran.
    """
    try:
        return os.stat("/proc/self/task").st_nlink
    except FileNotFoundError:
        return 0


class MonitorCpuMeter:
    """CPU used by the monitor's threads, in % of one CPU, between two reads.

    psutil's Process.cpu_percent would count the pair threads too in threads
    mode (they live in this process), so the meter sums /proc/self/task/*/stat
    of the other threads only. Like psutil, the first read only primes it.

    The monitor's threads are listed again only when the process's thread
    count changes: a pair added or removed, a worker started or ended. A
    thread that starts as another ends, between two reads, is missed until
    the count next changes; its CPU so far then lands in that reading.
    """

    def __init__(self) -> None:
        self._last: dict[int, int] = {}
        self._t: float | None = None
        self._tids: list[int] = []
        self._links = -1  # _task_links() when _tids were listed

    def read(self, exclude: set[int]) -> float | None:
        """The % since the last read, of every thread of ours not in `exclude`."""
        return self.read_lazy(lambda: exclude)

    def read_lazy(self, pair_tids: Callable[[], set[int]]) -> float | None:
        """read(), with the pair threads asked for only when the threads are listed:
        the set has an entry per end (2,048 at 1,024 pairs)."""
        now = time.monotonic()
        links = _task_links()
        if links != self._links or not links:
            exclude = pair_tids()
            self._tids = [t for t in own_tids() if t not in exclude]
            self._links = links
        ticks: dict[int, int] = {}
        used = 0
        for tid in self._tids:
            cur = _thread_ticks(tid)
            if cur is None:
                continue
            ticks[tid] = cur
            used += cur - self._last.get(tid, cur if self._t is None else 0)
        prev_t, self._t, self._last = self._t, now, ticks
        if prev_t is None or now <= prev_t:
            return None
        return 100.0 * used / _CLK_TCK / (now - prev_t)
