"""hackbench: groups of F senders and F receivers (rt-tests, perf bench sched messaging).

A unit is one group: F receivers, each owning a channel (a unix socketpair,
or a pipe with --transport pipe), and F senders that write D-byte messages
(--size, default 100) to every receiver of the group. The continuous form
(this class) runs the group until stopped and counts messages delivered; the
fixed form (run_fixed) is the seeds' benchmark, the time G groups take for L
loops, run whole in C (native/hackbench_fixed.c).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import mmap
import os
import socket
import struct
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from ...errors import IpctopError, ResourceError, UsageError
from .base import PairResources, Workload
from .hackbench_launch import launcher, run_launched
from .limits import check_pipe_size, check_socket_size, fd_error
from .load_limits import Load, check_load
from .option import Option
from .shared import close_area

if TYPE_CHECKING:
    from ..config import RunConfig

TRANSPORTS = ("socket", "pipe")
DEFAULT_FDS = 20
DEFAULT_LOOPS = 100
DEFAULT_SIZE = 100
AREA_FDS = 8  # loops_hackbench.c: int32 F, int32 D, then the senders' descriptors
MAX_FDS = 1024


def group_load(groups: int, fds: int, mode: str, fixed: bool = False) -> Load:
    """Tasks and descriptors G groups hold at their peak.

    Threads share one table: two descriptors per receiver of every group. In
    process mode the parent of the fixed form closes each group's
    descriptors once its tasks are forked (as hackbench does); the engine's
    continuous form keeps them all for the stop.
    """
    per_group = 2 * fds
    held = per_group if fixed and mode == "processes" else per_group * groups
    what = f"{groups} hackbench group(s) of {per_group} tasks"
    return Load(tasks=per_group * groups, fds=held, what=what)


def check_transport(transport: str | None) -> str:
    name = transport or "socket"
    if name not in TRANSPORTS:
        raise UsageError(f"--transport: hackbench takes {' or '.join(TRANSPORTS)}, not {name!r}")
    return name


def check_message(transport: str, size: int) -> None:
    """A message must fit its channel's buffer (or the stop could block)."""
    (check_pipe_size if transport == "pipe" else check_socket_size)(size)


@contextlib.contextmanager
def on_cpus(cpus: list[int] | None) -> Iterator[None]:
    """The calling thread's affinity is `cpus` for the block: the tasks it makes
    inherit it, so the scheduler places them within the run's CPU set."""
    if not cpus:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, set(cpus))
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


class FixedRun(NamedTuple):
    """A fixed run with its groups: each group's time to its last task's end."""

    seconds: float
    group_seconds: tuple[float, ...]
    group_cpus: tuple[tuple[int, ...], ...]  # the CPUs a group's tasks ended on
    forked_by: str = "launcher"  # process mode: "launcher", or "ipctop" without it; threads: ""

    @property
    def tasks_line(self) -> str:
        return tasks_line(self.forked_by)


def forked_by(mode: str) -> str:
    """Who forks a fixed run's tasks: "launcher", "ipctop" (no launcher built), "" (threads)."""
    return "" if mode != "processes" else "launcher" if launcher() else "ipctop"


def tasks_line(forked: str) -> str:
    """Who made the tasks, for every output that names the engine."""
    if forked == "launcher":
        return "tasks forked by the small launcher"
    if forked == "ipctop":
        return "tasks forked by ipctop itself (launcher not built: exits cost more)"
    return "tasks are threads"


def run_fixed(
    groups: int,
    fds: int = DEFAULT_FDS,
    loops: int = DEFAULT_LOOPS,
    size: int = DEFAULT_SIZE,
    transport: str = "socket",
    mode: str = "processes",
    cpus: list[int] | None = None,
    per_group: bool = False,
) -> FixedRun:
    """The seconds G groups take to pass every message (hackbench's "Time:");
    per_group adds each group's own time and CPUs (what a load record keeps),
    which costs the tasks an end-time note each."""
    forked = forked_by(mode)
    got = _fixed(groups, fds, loops, size, transport, mode, cpus, per_group, forked)
    if not per_group:
        return FixedRun(float(got), (), (), forked)
    seconds, times, task_cpus = got
    per = 2 * fds
    where = tuple(
        tuple(sorted({c for c in task_cpus[g * per : (g + 1) * per] if c >= 0}))
        for g in range(groups)
    )
    return FixedRun(seconds, tuple(times), where, forked)


def _fixed(
    groups: int,
    fds: int,
    loops: int,
    size: int,
    transport: str,
    mode: str,
    cpus: list[int] | None,
    groups_too: bool,
    forked: str,
) -> Any:
    from ..objects import _native

    if _native is None:
        raise UsageError("hackbench runs only on the native engine, which is not built")
    transport = check_transport(transport)
    check_message(transport, size)
    check_load(group_load(groups, fds, mode, fixed=True))
    pipes, processes = transport == "pipe", mode == "processes"
    with on_cpus(cpus):
        try:
            if forked == "launcher":
                seconds, times, task_cpus = run_launched(groups, fds, loops, size, pipes)
                return (seconds, times, task_cpus) if groups_too else seconds
            return _native.hackbench_run(groups, fds, loops, size, pipes, processes, groups_too)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EMFILE, errno.ENFILE, errno.ENOMEM):
                raise ResourceError(
                    f"{groups} hackbench group(s): {os.strerror(exc.errno)} while starting "
                    "tasks; raise `ulimit -u`, `ulimit -n` or kernel.threads-max, or use "
                    "fewer groups"
                ) from None
            why = "a task was killed by a signal" if exc.errno == errno.EINTR else exc.strerror
            raise IpctopError(
                f"{groups} hackbench group(s): {why}; every task was reaped and every "
                "descriptor closed"
            ) from None


class Hackbench(Workload):
    name = "hackbench"
    original = "hackbench (rt-tests) / perf bench sched messaging"
    summary = (
        "a unit is a group: F senders (default 20, --fds) each write --size bytes (100) to each "
        "of F receivers, over socketpairs (--transport pipe: pipes); messages delivered"
    )
    one_round = (
        "a unit is a group: F receivers (`--fds`, 20) each own a socketpair (`--transport "
        "pipe`: a pipe); F senders write `--size` bytes (100) to every receiver of the group, "
        "one `write` per message per receiver; a receiver's rounds are the messages it got "
        "(senders count theirs in ops, so the total is messages delivered/s)"
    )
    timed = False  # no token passes between two ends: F senders to F receivers
    options = (Option("--fds", 1, MAX_FDS, DEFAULT_FDS, "senders and receivers per group",
                      metavar="F"),)  # fmt: skip
    python_unavailable = "a group's 2F ends are native loops only"
    default_size = DEFAULT_SIZE
    unit = "group"

    def configure(self, config: RunConfig) -> None:
        self.transport = check_transport(config.transport)
        self.fds: int = config.fds
        if not 1 <= self.fds <= MAX_FDS:
            raise UsageError(f"--fds must be 1..{MAX_FDS}, not {self.fds}")
        super().configure(config)

    @property
    def ends_per_unit(self) -> int:  # type: ignore[override]
        return 2 * self.fds

    def check_size(self, size: int) -> None:
        check_message(self.transport, size)

    def record_payload(self) -> dict[str, Any]:
        return {**super().record_payload(), "transport": self.transport}

    def detail_text(self) -> str:
        return f" · {self.fds} fds · {self.size} B · {self.transport}"

    def roles(self, index: int) -> tuple[str, ...]:
        f = self.fds
        return tuple(f"S{i}" for i in range(f)) + tuple(f"R{i}" for i in range(f))

    def place_unit(
        self, placement: str, cpus: list[int], index: int, cpu: int | None = None
    ) -> tuple[int | None, ...]:
        k = 2 * self.fds
        if placement == "free":
            return (None,) * k
        n = len(cpus)
        pos = cpus.index(cpu) if cpu is not None and cpu in cpus else index % n
        if placement == "same":
            return (cpus[pos],) * k  # the whole group on one CPU, groups round-robin
        return tuple(cpus[(pos + j) % n] for j in range(k))  # ends spread over the CPUs

    def check_units(self, n: int) -> None:
        check_load(group_load(n, self.fds, self.mode))

    def create_pair(self, index: int, engine: str) -> PairResources:
        check_load(group_load(1, self.fds, self.mode))
        f, size = self.fds, self.size or DEFAULT_SIZE
        group = _Group(self.transport)
        try:
            for _ in range(f):
                group.add_channel()
        except OSError as exc:
            group.remove()
            raise fd_error(exc, f"hackbench group {index}") from exc
        area = mmap.mmap(-1, max(mmap.PAGESIZE, AREA_FDS + 4 * f))
        struct.pack_into(f"<ii{f}i", area, 0, f, size, *(w for _, w in group.channels))
        senders = tuple((f, size) for _ in range(f))
        receivers = tuple((r, size) for r, _ in group.channels)
        return PairResources(
            args=senders + receivers,
            shm=area,
            py=(None,) * (2 * f),
            objects=[group],
            closers=[partial(close_area, area)],
        )

    def wake(self, res: PairResources, index: int) -> None:
        res.objects[0].wake()


class _Group:
    """One group's channels: (read end, write end) per receiver."""

    def __init__(self, transport: str) -> None:
        self.transport = transport
        self.channels: list[tuple[int, int]] = []
        self.sockets: list[socket.socket] = []

    def add_channel(self) -> None:
        if self.transport == "pipe":
            self.channels.append(os.pipe())
            return
        r, w = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sockets += [r, w]
        self.channels.append((r.fileno(), w.fileno()))

    def wake(self) -> None:
        """Unblock every end once the stop flags are set (see loops_hackbench.c)."""
        if self.transport == "socket":
            for sock in self.sockets:
                with contextlib.suppress(OSError):  # its peer's shutdown may have closed it
                    sock.shutdown(socket.SHUT_RDWR)
            return
        for r, w in self.channels:
            for fd in (r, w):
                flags = fcntl.fcntl(fd, fcntl.F_GETFL)
                fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        # Drain first, so writers blocked on a full pipe go on; then the kick,
        # which a drain after it would take from the reader it is meant to wake.
        for r, _ in self.channels:
            _drain(r)
        for _, w in self.channels:
            with contextlib.suppress(BlockingIOError):  # full again: its reader is not waiting
                os.write(w, b"\0")

    def remove(self) -> None:
        """Close every descriptor; idempotent."""
        for sock in self.sockets:
            sock.close()
        if self.transport == "pipe":
            for r, w in self.channels:
                os.close(r)
                os.close(w)
        self.sockets.clear()
        self.channels.clear()


def _drain(fd: int) -> None:
    """Empty a non-blocking pipe, so writers blocked on it go on (and see the stop)."""
    while True:
        try:
            if not os.read(fd, 65536):
                return
        except BlockingIOError:
            return
