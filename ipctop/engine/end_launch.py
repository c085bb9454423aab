"""How one end of a pair comes to run: a thread or a forked child, native or Python.

The engine (engine.py) decides when pairs start and stop; this module is what
an end is and how it is launched, up to the moment it publishes "running" in
its counter slot.
"""

from __future__ import annotations

import operator
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..errors import PairStartError
from .config import RunConfig
from .counters import CounterBlock, SlotWriter
from .event_log import EventLog
from .forker import Forker
from .objects import _native
from .parent_death import die_with
from .workloads import PairResources, Workload


@dataclass
class End:
    pair: int
    role: str
    slot: int
    bound_cpu: int | None
    pid: int  # the process holding it: ours in threads mode, the child's in processes mode
    thread: threading.Thread | None = None
    child: bool = False
    tid: int = 0


@dataclass
class Pair:
    index: int
    ends: tuple[End, ...]  # A and B, or the threads of a unit ("T0", "T1", ...)
    res: PairResources
    state: str = "running"  # or "failed: why"
    started: float = field(default_factory=time.monotonic)

    @property
    def active(self) -> bool:
        return self.state == "running"


_STATE = operator.attrgetter("state")


def active_count(pairs: Iterable[Pair]) -> int:
    """How many pairs are active (Pair.active), at C speed: the sampler asks at every
    reading, over 1,024 pairs."""
    return list(map(_STATE, pairs)).count("running")


#: timed_args' trailing defaults, put back when a gate follows them
_TIMED_DEFAULTS = (None, -1, 1, 0, 0)


@dataclass
class Launcher:
    """Launches ends for one engine; the forker is set once processes mode opened."""

    config: RunConfig
    kind: str  # "native" or "python"
    workload: Workload
    counters: CounterBlock
    events: EventLog
    timing: bool  # the ends time their rounds (see Engine.timing)
    forker: Forker | None = None
    #: the ends whose thread returned, each put here by its thread (Engine.poll's watch)
    returned: deque[End] = field(default_factory=deque)

    def launch(self, pair: Pair, end: End, role: int, gate: int = 0) -> None:
        """Start one end; it runs (or fails) on its own from here. A native end given
        a gate id publishes its start, then waits for the counter block's start gate
        (Engine.add_pairs); Python ends are never held."""
        args = pair.res.args[role]
        timed = self.end_args(pair, role, gate)
        if self.config.mode == "processes":
            assert self.forker is not None
            if self.kind == "native":
                pid = self.forker.call(
                    _native.fork_end,
                    self.counters.buf,
                    end.slot,
                    self.workload.name,
                    role,
                    -1 if end.bound_cpu is None else end.bound_cpu,
                    args,
                    pair.res.shm,
                    *timed,
                )
            else:
                pid = self.forker.call(self.fork_python, pair, end, role)
            end.pid, end.tid, end.child = pid, pid, True
            return
        run = self.run_native if self.kind == "native" else self.run_python
        end.thread = threading.Thread(
            target=self._thread,
            args=(run, pair, end, role, gate),
            name=f"ipctop-pair{pair.index}{end.role}",
            daemon=True,
        )
        end.thread.start()

    def _thread(
        self, run: Callable[[Pair, End, int, int], None], pair: Pair, end: End, role: int, gate: int
    ) -> None:
        """An end's thread: runs the end, then says it returned, so that the next
        Engine.poll looks at its pair (death_watch.py) instead of at every end."""
        try:
            run(pair, end, role, gate)
        finally:
            self.returned.append(end)

    def timed_args(self, pair: Pair, role: int) -> tuple[object, ...]:
        """The latency block, the peer's slot, 1-in-K, the SCHED_FIFO priority and
        the think time (trailing defaults left out)."""
        rt = self.config.rt or 0
        think = (self.config.think_ns,) if self.config.think_ns else ()
        if not self.timing or len(pair.ends) != 2:
            return (None, -1, 1, rt, *think) if rt or think else ()
        peer = pair.ends[1 - role].slot
        return (self.counters.latency.buf, peer, self.config.latency_every, rt, *think)

    def end_args(self, pair: Pair, role: int, gate: int) -> tuple[object, ...]:
        """timed_args, then the gate's offset and the batch's id when gated."""
        timed = self.timed_args(pair, role)
        if not gate:
            return timed
        return (*timed, *_TIMED_DEFAULTS[len(timed) :], self.counters.gate_offset, gate)

    def run_native(self, pair: Pair, end: End, role: int, gate: int = 0) -> None:
        try:
            _native.run_end(
                self.counters.buf,
                end.slot,
                self.workload.name,
                role,
                -1 if end.bound_cpu is None else end.bound_cpu,
                pair.res.args[role],
                pair.res.shm,
                *self.end_args(pair, role, gate),
            )
        except Exception as exc:  # reported by poll(): the slot never reached "running"
            self.events.append(f"pair {pair.index} {end.role}: {exc}")

    def run_python(self, pair: Pair, end: End, role: int, gate: int = 0) -> None:
        writer = SlotWriter(self.counters, end.slot, self.config.think_ns)
        err = 0
        try:
            _normal_priority()
            if end.bound_cpu is not None:
                os.sched_setaffinity(0, {end.bound_cpu})  # before "running" is published
            writer.start(threading.get_native_id())
            err = self.workload.python_loop(pair.res, role, writer)
        except OSError as exc:
            err = exc.errno or 5
        finally:
            writer.finish(err)

    def fork_python(self, pair: Pair, end: End, role: int) -> int:
        pid = os.fork()
        if pid:
            return pid
        code = 1
        try:
            die_with_parent()
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            writer = SlotWriter(self.counters, end.slot, self.config.think_ns)
            _normal_priority()
            if end.bound_cpu is not None:
                os.sched_setaffinity(0, {end.bound_cpu})
            writer.start(os.getpid())
            err = self.workload.python_loop(pair.res, role, writer)
            writer.finish(err)
            code = 0 if err == 0 else 1
        finally:
            os._exit(code)


def await_start(counters: CounterBlock, pair: Pair, timeout: float = 20.0) -> None:
    """Wait until every end of the pair published its tid, or raise PairStartError."""
    # Generous: on a loaded box a new child may wait seconds for its first slice.
    deadline = time.monotonic() + timeout
    for end in pair.ends:
        while True:
            r = counters.read(end.slot)
            if r.tid and r.state != "starting":
                end.tid = r.tid
                break
            if r.state in ("failed", "removed externally") or time.monotonic() > deadline:
                if r.last_errno:
                    why = os.strerror(r.last_errno)
                else:
                    why = f"did not start within {timeout:g} s (is the box overloaded?)"
                raise PairStartError(
                    f"pair {pair.index} {end.role}: {why}; what it had made was removed"
                )
            time.sleep(0.001)


def _normal_priority() -> None:
    """An end runs at nice 0 even when made by a monitor thread that raised its priority."""
    if os.getpriority(os.PRIO_PROCESS, 0) < 0:  # this thread only, on Linux
        os.setpriority(os.PRIO_PROCESS, 0, 0)


def die_with_parent() -> None:
    """In a forked end: die when the engine's process does (or already did)."""
    die_with(os.getppid(), signal.SIGKILL)
