"""The limits a load benchmark meets before its first task: checked all at once.

500 hackbench groups of 40 tasks are 20,000 threads and about 20,000
descriptors; finding that out from the 12,000th failed clone() would leave
half a run to unwind. So the whole load is checked first and the first limit
too low is named with what raises it (exit 3, ResourceError).
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

from ...errors import ResourceError
from .limits import PROC, _all_tasks, read_int, user_tasks

# Descriptors a run keeps open besides the load's: the interpreter's own,
# the ready and wake-up pipes, a record file.
FD_SLACK = 16


@dataclass(frozen=True)
class Load:
    """What a run will hold at its peak."""

    tasks: int  # threads or processes it starts
    fds: int  # descriptors open at once in this process
    listen_backlog: int = 0  # connections one listening socket queues (chat)
    what: str = "the load"


def check_load(load: Load, proc: Path = PROC) -> None:
    """Raise ResourceError naming the first limit `load` does not fit under."""
    _check_nofile(load)
    _check_nproc(load, proc)
    total = _all_tasks(proc)
    if total >= 1 << 62:
        total = 0  # unknown: the sysctls below are then checked against the load alone
    for name, path in (
        ("kernel.threads-max", "sys/kernel/threads-max"),
        ("kernel.pid_max", "sys/kernel/pid_max"),
    ):
        limit = read_int(proc / path)
        if limit is not None and total + load.tasks > limit:
            raise ResourceError(
                f"{load.what} needs {load.tasks} tasks, {total} already run and the sysctl "
                f"{name} is {limit}; raise {name} or use fewer groups"
            )
    if load.listen_backlog:
        limit = read_int(proc / "sys/net/core/somaxconn")
        if limit is not None and load.listen_backlog > limit:
            raise ResourceError(
                f"{load.what} queues {load.listen_backlog} connections on one listening "
                f"socket but the sysctl net.core.somaxconn is {limit}; raise net.core.somaxconn"
            )


def _check_nofile(load: Load) -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return
    in_use = len(os.listdir("/proc/self/fd"))
    if in_use + load.fds + FD_SLACK > soft:
        raise ResourceError(
            f"{load.what} needs {load.fds} file descriptors, {in_use} are in use and "
            f"RLIMIT_NOFILE is {soft}; raise it with `ulimit -n {in_use + load.fds + FD_SLACK}`"
        )


def _check_nproc(load: Load, proc: Path) -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    # The kernel exempts root (and CAP_SYS_RESOURCE / CAP_SYS_ADMIN) from the limit.
    if soft == resource.RLIM_INFINITY or os.getuid() == 0:
        return
    used = user_tasks(os.getuid(), proc)
    if used + load.tasks > soft:
        raise ResourceError(
            f"{load.what} needs {load.tasks} tasks, this user runs {used} and RLIMIT_NPROC "
            f"is {soft}; raise it with `ulimit -u {used + load.tasks}`"
        )
