"""Let the monitor run when the pairs oversubscribe the CPUs.

At 512 threads on 2 CPUs a monitor at the pairs' nice gets about one
runnable task's share of a CPU, and takes a sample every few seconds at best.
Its threads (UI, input, writer, sampler, control workers) are raised as far
above the pairs as nice goes (RAISE); it still only uses the CPU it needs.
Ends drop back to nice 0 themselves when they start (engine.py, module.c): a
thread inherits its creator's nice, and a monitor thread creates the pairs.

Raising priority needs CAP_SYS_NICE (or RLIMIT_NICE); without it the monitor
stays at normal priority and `note` says so for the footer.
"""

from __future__ import annotations

import errno
import os

from .monitor import own_tids

#: nice levels above the process's own: as far as nice goes (-20 from 0), which
#: starts many pairs fastest (BENCHMARKS.md, "Observer effect"); the monitor
#: still uses only the CPU it needs.
RAISE = 20


class MonitorPriority:
    def __init__(self, raise_by: int = RAISE) -> None:
        self.base = os.getpriority(os.PRIO_PROCESS, 0)
        self.nice = max(-20, self.base - raise_by)
        self.note = ""  # why the monitor is not raised, for the footer
        self.raised = False

    def apply(self, exclude: set[int]) -> int:
        """Raise every thread of ours except `exclude` (the pair ends); returns how many."""
        if self.note:
            return 0
        moved = 0
        for tid in own_tids():
            if tid in exclude:
                continue
            try:
                if os.getpriority(os.PRIO_PROCESS, tid) != self.nice:
                    os.setpriority(os.PRIO_PROCESS, tid, self.nice)
                    moved += 1
            except ProcessLookupError:
                continue  # it ended meanwhile
            except PermissionError as exc:
                why = "not root" if exc.errno in (errno.EACCES, errno.EPERM) else str(exc)
                self.note = f"monitor at normal priority ({why}: no renice)"
                return moved
        self.raised = True
        return moved

    def restore(self, exclude: set[int]) -> None:
        """Every thread of ours except `exclude` back to the process's own nice."""
        if not self.raised:
            return
        for tid in own_tids():
            if tid in exclude:
                continue
            try:
                os.setpriority(os.PRIO_PROCESS, tid, self.base)
            except ProcessLookupError:
                continue  # it ended meanwhile
        self.raised = False


def raise_monitor() -> MonitorPriority:
    """Raise this process before it makes any thread, so every monitor thread
    inherits it (the headless commands); the ends drop back to nice 0."""
    priority = MonitorPriority()
    priority.apply(set())
    return priority
