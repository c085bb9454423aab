"""What a workload is: its objects per pair, its loop arguments, how it stops."""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import UsageError
from ..counters import SlotWriter
from ..opstats import OpStats
from ..placement import place
from .option import Option

if TYPE_CHECKING:  # config.py reads the workloads' options: no import at run time
    from ..config import RunConfig
    from ..end_launch import Pair


@dataclass
class PairResources:
    """The kernel objects of one pair and what each end's loop is given."""

    args: tuple[tuple[int, ...], ...]  # native loop arguments of each end (A and B for a pair)
    objects: list[Any] = field(default_factory=list)  # SysvObject and the like
    shm: Any = None  # a shared mapping handed to the native loop, if any
    py: tuple[Any, ...] = (None, None)  # per-end handles for the Python loops
    closers: list[Any] = field(default_factory=list)  # callables run at teardown


Errors = type[Exception] | tuple[type[Exception], ...]


def loop_errno(exc: Exception, removed: Errors) -> int:
    """The errno a Python loop ends with when its IPC library raised `exc`.

    The libraries say "the object is gone" with their own exception, not with
    an errno: that is EIDRM, as a native loop would see it.
    """
    if isinstance(exc, removed):
        return errno.EIDRM
    return getattr(exc, "errno", None) or errno.EIO


def semaphore_loop(
    mine: Any, peer: Any, writer: SlotWriter, interrupted: Errors, failed: Errors, removed: Errors
) -> int:
    """A Python end of a semaphore pair: wait on mine, think, post the peer's.

    The libraries differ only in their exceptions: a signal (`interrupted`,
    waited on again), any failure (`failed`, the loop's errno) and a removed
    object (`removed`, EIDRM).
    """
    n = 0
    try:
        while not writer.stopped():
            try:
                mine.acquire()
            except interrupted:
                continue
            if writer.stopped():
                break
            writer.think()
            peer.release()
            n += 1
            writer.rounds(n)
    except failed as exc:
        return loop_errno(exc, removed)
    return 0


class Workload:
    """A ping-pong mechanism. Subclasses fill in the hooks they need.

    A subclass declares `name`, `original`, `summary`, `one_round`, `timed` and
    `options` (tests/engine/test_workload_registry.py fails until it does).
    """

    name: str = ""
    original: str = ""  # which seed program it reproduces (README's "original")
    summary: str = ""  # one line: the TUI's workload chooser
    #: README's "one round of one end"
    one_round: str = ""
    #: whether its native loop times rounds (lat_post/lat_woken: a token between two ends)
    timed: bool | None = None
    #: its own options (--sems ...): the CLI, RunConfig and the record read them
    options: tuple[Option, ...] = ()
    #: None when the Python engine can run it, else why it cannot
    python_unavailable: str | None = None
    #: printed with every output that used the Python engine, e.g. a semantic difference
    python_note: str | None = None
    #: ends in one unit: a ping-pong pair has two; a unit is what sweeps add per step
    ends_per_unit: int = 2
    #: what a unit is called; a load workload (hackbench's group, chat's room) names
    #: its own, and the monitor then draws rate by load against a flat ideal
    unit: str = "pair"
    #: names of the per-operation counters a loop keeps in its slot (life-cycle; at most
    #: counters.NOPS); every reading carries an end's counts (ThreadSample.ops)
    ops: tuple[str, ...] = ()
    #: bytes a message carries by default (its seed's), None for no payload (--size refused)
    default_size: int | None = None
    #: the smallest --size that still means the same round (pmsg-shared needs the pair id)
    min_size: int = 1
    size: int | None = None  # the run's payload, set by configure()

    def configure(self, config: RunConfig) -> None:
        """Learn the run's mode, CPUs and options before check() and open()."""
        self.config = config
        self.mode = config.mode
        self.cpus = list(config.cpus)
        requested = config.size
        if requested is not None and self.default_size is None:
            raise UsageError(f"--size: {self.name} carries no payload")
        if requested is not None and requested < self.min_size:
            raise UsageError(
                f"--size {requested}: {self.name} needs at least {self.min_size} bytes "
                "(the payload carries the pair id)"
            )
        self.size = self.default_size if requested is None else requested
        if self.size is not None:
            self.check_size(self.size)

    def record_payload(self) -> dict[str, Any]:
        """What a record carries of this run (after configure): the payload's bytes,
        the workload's options; a workload that works out more adds it."""
        out: dict[str, Any] = {} if self.size is None else {"size": self.size}
        out.update((o.field, getattr(self.config, o.field)) for o in self.options)
        return out

    def check_size(self, size: int) -> None:
        """Refuse a payload the kernel's limits cannot carry; raise ResourceError."""

    def phase_mark(self, pairs: list[Pair]) -> dict[int, int]:
        """Where each unit's timed phases stand (msgbench); see phase_stats."""
        return {}

    def phase_stats(self, pairs: list[Pair], since: dict[int, int] | None = None) -> OpStats | None:
        """Per-phase rates of a workload that times its phases itself, else None."""
        return None

    def detail_text(self) -> str:
        """The payload as a description adds it (" · 8 B"); empty without one."""
        return "" if self.size is None else f" · {self.size} B"

    def roles(self, index: int) -> tuple[str, ...]:
        """Names of unit `index`'s ends: A and B, or T0, T1, ... for other units."""
        if self.ends_per_unit == 2:
            return ("A", "B")
        return tuple(f"T{i}" for i in range(self.ends_per_unit))

    def place_unit(
        self, placement: str, cpus: list[int], index: int, cpu: int | None = None
    ) -> tuple[int | None, ...]:
        """Where each end of unit `index` runs (None = unpinned)."""
        return place(placement, cpus, index, cpu)

    def check(self, placement: str, engine: str) -> None:
        """Refuse a combination that cannot mean anything; raise UsageError."""
        if engine == "python" and self.python_unavailable:
            raise UsageError(
                f"{self.name} is unavailable on the Python engine: {self.python_unavailable}"
            )
        if engine == "python" and type(self).python_loop is Workload.python_loop:
            raise UsageError(f"{self.name} has no Python loop")

    def check_units(self, n: int) -> None:
        """Refuse n more units the kernel's limits cannot hold, before the first starts."""

    def open(self, engine: str) -> None:
        """Create objects shared by all pairs (most workloads have none)."""

    def close(self) -> None:
        """Remove the shared objects; idempotent."""

    def create_pair(self, index: int, engine: str) -> PairResources:
        raise NotImplementedError

    def wake(self, res: PairResources, index: int) -> None:
        """Wake ends blocked in the kernel once their stop flags are set.

        The originals removed the objects (IPC_RMID) so blocked ends saw EIDRM.
        """
        self.destroy_pair(res, index)

    def destroy_pair(self, res: PairResources, index: int) -> None:
        for obj in res.objects:
            obj.remove()
        for close in res.closers:
            close()
        res.closers.clear()

    def python_loop(self, res: PairResources, role: int, writer: SlotWriter) -> int:
        """Run one end in Python until stopped; return 0 or the errno that ended it."""
        raise NotImplementedError
