"""Every thread's /proc files of one sampler tick, read in one pass.

At 2,048 threads the detail view reads three files per thread per tick; in
Python each open, read and parse is interpreter work holding the GIL the UI
needs, and the open alone (the kernel's walk of /proc/<pid>/task/<tid>) is
half of what the kernel spends. So the native pass (native/task_reads.c) does
every read and parse in one call with the GIL released, and TaskFiles keeps
each thread's files open across ticks (a pread at 0 renders them afresh).
python_read_tasks is the fallback without the extension, and what the native
pass is checked against (tests/engine/test_task_reads.py).
"""

from __future__ import annotations

import os
import resource
import threading
import weakref

from . import objects, procfs  # objects._native: the C extension, or None
from .procfs import TaskSchedStat, TaskStat

KEPT_PER_THREAD = 4  # stat, status, sched, schedstat (native/task_reads.c's order)
# Readings a thread's files stay open unasked. The sampler asks /proc only about the
# ends that did not answer in time, a different few dozen at each reading on an
# oversubscribed box (1,024 pairs on 2 CPUs: 137 files closed and opened again a
# reading when they were closed at once).
KEEP_READS = 8
_LATER, _NONE = -1, -2  # not open yet (keep it once open); never kept


def read_tasks(
    ids: list[tuple[int, int]], proc: str = "/proc", detail: bool = False
) -> list[TaskStat | None]:
    """procfs.read_task for every (pid, tid), and with ``detail`` each one's
    schedstat and migrations too; None for a thread that is gone. Nothing is
    kept open (TaskFiles does that across ticks)."""
    native = objects._native
    if native is None:
        return python_read_tasks(ids, proc, detail)
    return [None if row is None else _task_of(row) for row in native.read_tasks(proc, ids, detail)]


class TaskFiles:
    """read_tasks for one sampler, with each thread's files kept open between
    ticks: reopening them was half the kernel's cost of a read. Files of
    threads not asked about for KEEP_READS reads are closed (a thread that is
    gone reads as None and its files are closed then); close() (or
    the object's collection) closes the rest. At most half the process's
    file limit is kept; threads beyond it are read as read_tasks does."""

    def __init__(self, proc: str = "/proc") -> None:
        self.proc = proc
        self._fds: dict[tuple[int, int], list[int]] = {}
        self._asked: dict[tuple[int, int], int] = {}  # -> the read that last asked
        self._reads = 0
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        limit = soft if soft != resource.RLIM_INFINITY else 1 << 20
        self.budget = max(0, limit // 2 - 64) // KEPT_PER_THREAD  # threads kept open
        # Held across the native call: a close() from another thread must not
        # close (and let the kernel reuse) an fd the pass is reading.
        self._lock = threading.Lock()
        self._closer = weakref.finalize(self, _close_all, self._fds)
        # Closing is Sampler.close()'s, once its ticks have stopped. Not at exit: a
        # daemon reader nobody closed may still be mid-tick there (ValueError
        # tracebacks after the interpreter's last line); the kernel closes them.
        self._closer.atexit = False

    def read(self, ids: list[tuple[int, int]], detail: bool = False) -> list[TaskStat | None]:
        native = objects._native
        if native is None:
            return python_read_tasks(ids, self.proc, detail)
        with self._lock:
            if not self._closer.alive:
                raise ValueError("TaskFiles is closed")
            self._reads += 1
            asked, reads = self._asked, self._reads
            for key in ids:
                asked[key] = reads
            for key in [k for k, at in asked.items() if reads - at >= KEEP_READS]:
                del asked[key]
                kept = self._fds.pop(key, None)
                if kept is not None:
                    _close(kept)
            fds = []
            for key in ids:
                kept = self._fds.get(key)
                if kept is None:
                    if len(self._fds) < self.budget:
                        kept = self._fds[key] = [_LATER] * KEPT_PER_THREAD
                    else:
                        kept = [_NONE] * KEPT_PER_THREAD
                fds.append(kept)
            rows = native.read_tasks(self.proc, ids, detail, fds)
        return [None if row is None else _task_of(row) for row in rows]

    @property
    def open_files(self) -> int:
        """How many files are kept open now (for tests and the curious)."""
        return sum(fd >= 0 for kept in self._fds.values() for fd in kept)

    def close(self) -> None:
        with self._lock:
            self._closer()


def _close(kept: list[int]) -> None:
    for fd in kept:
        if fd >= 0:
            os.close(fd)


def _close_all(fds: dict[tuple[int, int], list[int]]) -> None:
    for kept in fds.values():
        _close(kept)
    fds.clear()


_NativeRow = tuple[int, int, int, int, int, int | None, int | None, int | None, int | None]


def _task_of(row: _NativeRow) -> TaskStat:
    """A TaskStat from the native pass's nine numbers (schedstat's three are all or none)."""
    voluntary, involuntary, last_cpu, utime, stime, run_ns, wait_ns, slices, migrations = row
    sched = (
        None
        if run_ns is None or wait_ns is None or slices is None
        else TaskSchedStat(run_ns, wait_ns, slices)
    )
    return TaskStat(voluntary, involuntary, last_cpu, utime, stime, sched, migrations)


def python_read_tasks(
    ids: list[tuple[int, int]], proc: str = "/proc", detail: bool = False
) -> list[TaskStat | None]:
    """read_tasks in Python: the fallback, and what the native pass is checked against.

    With detail, sched is read anyway (migrations) and holds the same switch
    counts as status (both print the task's nvcsw and nivcsw), so status, the
    costliest file of the four, is opened only on a kernel without sched.
    """
    if not detail:
        return [procfs.read_task(pid, tid, proc) for pid, tid in ids]
    out: list[TaskStat | None] = []
    for pid, tid in ids:
        task = procfs._task_dir(proc, pid, tid)
        stat = procfs._read(os.path.join(task, "stat"))
        sched = procfs._read(os.path.join(task, "sched")) if stat is not None else None
        switches = _sched_switches(sched)
        if stat is not None and switches is None:
            status = procfs._read(os.path.join(task, "status"))
            switches = None if status is None else procfs._status_switches(status, task)
        if stat is None or switches is None:
            out.append(None)
            continue
        line = procfs._line(sched, b"se.nr_migrations")
        migrations = None if line is None else int(line.rsplit(b":", 1)[1])
        out.append(
            TaskStat(
                *switches,
                *procfs._stat_fields(stat),
                sched=procfs.read_schedstat_task(pid, tid, proc),
                migrations=migrations,
            )
        )
    return out


def _sched_switches(sched: bytes | None) -> tuple[int, int] | None:
    """(voluntary, involuntary) from a sched file; None without one or the lines."""
    v = procfs._line(sched, b"nr_voluntary_switches")
    iv = procfs._line(sched, b"nr_involuntary_switches")
    if v is None or iv is None:
        return None
    return int(v.rsplit(b":", 1)[1]), int(iv.rsplit(b":", 1)[1])
