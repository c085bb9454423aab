"""The engine: pairs started, added, removed and stopped while others run."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable

from ..errors import UsageError
from ..signals import deferred
from . import objects
from .config import RunConfig
from .contention import ContentionWatch, session_line
from .counters import ENDED, CounterBlock, check_slots
from .death_watch import DeathWatch
from .end_launch import End, Launcher, Pair, active_count, await_start
from .event_log import EventLog
from .forker import Forker
from .objects import _native
from .placement import MODES, check_placement, oversubscribed
from .realtime import check_rt
from .reaper import ReaperClient
from .workloads import WORKLOADS, Workload, make_workload
from .workloads.limits import check_tasks, task_error

ENGINES = ("auto", "native", "python")
JOIN_TIMEOUT = 5.0  # a loaded box can take seconds to run a woken end
PROGRESS_EVERY = 64  # pairs between two progress calls of a bulk start


def resolve_engine(requested: str = "auto") -> str:
    """'native' when the C extension is importable, else 'python'."""
    requested = os.environ.get("IPCTOP_ENGINE", requested) if requested == "auto" else requested
    if requested not in ENGINES:
        raise UsageError(f"--engine must be one of {', '.join(ENGINES)}, not {requested!r}")
    if requested == "auto":
        return "native" if _native is not None else "python"
    if requested == "native" and _native is None:
        raise UsageError("the native engine was not built on this install; use --engine python")
    return requested


class Engine:
    """Owns the workers, their objects and the counter block.

    Threads mode runs each end in a Python thread that enters the native loop
    with the GIL released; processes mode forks a C-only child per end.
    """

    def __init__(self, config: RunConfig) -> None:
        if config.workload not in WORKLOADS:
            raise UsageError(
                f"unknown workload {config.workload!r}; choose from {', '.join(WORKLOADS)}"
            )
        if config.mode not in MODES:
            raise UsageError(f"--mode must be one of {', '.join(MODES)}, not {config.mode!r}")
        if not config.cpus:
            raise UsageError("no CPUs to run on")
        check_placement(config.placement, list(config.cpus))
        self.config = config
        self.kind = resolve_engine(config.engine)
        self.workload: Workload = make_workload(config.workload)
        self.workload.configure(config)
        self.workload.check(config.placement, self.kind)
        self.cpus = list(config.cpus)
        if config.latency_every < 1:
            raise UsageError("--latency-every must be at least 1")
        if config.rt is not None and self.kind != "native":
            raise UsageError("--rt needs the native engine (Python ends cannot run SCHED_FIFO)")
        self.counters = CounterBlock()
        self.pairs: list[Pair] = []
        self.events = EventLog()  # warnings; consumers read what is new with since()
        self._launcher = Launcher(
            config, self.kind, self.workload, self.counters, self.events, self.timing
        )
        self._deaths = DeathWatch(self.counters.buf, _native, self._launcher.returned)
        self.reaper: ReaperClient | None = None
        self._lock = threading.RLock()
        self._opened = False
        self._closed = False
        self.contention = ContentionWatch(self.cpus)
        #: start(n)'s progress(launched, running, n), as add_pairs takes it: a command
        #: sets it to draw a bulk start; the engine itself never writes to the terminal
        self.start_progress: Callable[[int, int, int], None] | None = None

    # -- lifecycle -------------------------------------------------------------
    def start(self, pairs: int = 0) -> None:
        with self._lock:
            if not self._opened:
                if self.config.rt is not None:
                    check_rt(self.config.rt)
                with deferred():
                    self._opened = True
                    self.reaper = ReaperClient(session_line(os.getpid(), self.cpus))
                    self.events.extend(self.reaper.warnings)
                    if self.config.mode == "processes":
                        self._launcher.forker = Forker()
                    with objects.tracking(self.reaper):
                        self.workload.open(self.kind)
            if pairs:
                self.add_pairs(pairs, self.start_progress)

    def stop(self) -> None:
        """Stop every pair, remove every object; safe to call twice."""
        with self._lock, deferred():
            if self._closed:
                return
            self._closed = True
            try:
                self._stop_pairs(self.pairs)
                self.pairs.clear()
                self.workload.close()
            finally:
                self.counters.open_gate()  # stop() inside a bulk start's progress callback
                if self._launcher.forker is not None:
                    self._launcher.forker.close()
                if self.reaper is not None:
                    self.reaper.close()
                    self.events.extend(self.reaper.warnings)

    def __enter__(self) -> Engine:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- live control ----------------------------------------------------------
    def add_pair(self, cpu: int | None = None) -> Pair:
        if not self._opened:
            self.start()
        with self._lock:
            self.check_slots(1)
            pair = self._launch_pair(cpu)
            try:
                await_start(self.counters, pair)
            except BaseException:
                self._drop([pair])
                raise
            return pair

    def add_pairs(
        self, n: int, progress: Callable[[int, int, int], None] | None = None
    ) -> list[Pair]:
        """Start n pairs in bulk: launch every end first, then wait for them all.

        Waiting for each new end's first time slice before launching the next
        costs a slice per pair, seconds each on a loaded box (BENCHMARKS.md,
        "Bulk start"). And native ends would start their rounds as soon as each
        is launched, taking the CPU from this thread while it launches the rest:
        they wait behind the counter block's start gate, closed for the batch
        and opened once every end has published its start, or whatever ends it.
        progress(launched, running, n) is called as they come up, the gate still
        closed. If any pair cannot start, every pair of the batch is stopped and
        removed before the error is raised.
        """
        if not self._opened:
            self.start()
        batch: list[Pair] = []
        self.workload.check_units(n)
        with self._lock:
            self.check_slots(n)
            gate = self.counters.close_gate() if self.kind == "native" else 0
            try:
                for _ in range(n):
                    # Each pair is whole (deferred) before a signal may unwind us.
                    batch.append(self._launch_pair(None, gate))
                    if progress is not None and len(batch) % PROGRESS_EVERY == 0:
                        progress(len(batch), 0, n)
                for k, pair in enumerate(batch, start=1):
                    self._check_open()  # a progress callback may have stopped the engine
                    await_start(self.counters, pair)
                    if progress is not None and (k % PROGRESS_EVERY == 0 or k == n):
                        progress(n, k, n)
                self._check_open()
            except BaseException:
                if not self._closed:  # stop() already stopped and released them
                    self._drop(batch)
                raise
            finally:
                self.counters.open_gate()
        return batch

    def check_slots(self, n: int) -> None:
        """Refuse n more units whose ends the counter block has no slots for."""
        w = self.workload
        check_slots(n, w.ends_per_unit, w.unit, w.name, self.counters.free)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("engine stopped")

    def _launch_pair(self, cpu: int | None, gate: int = 0) -> Pair:
        """Create one pair's objects and launch its ends, held by the start gate
        `gate` if not 0; it is in self.pairs on return."""
        with deferred(), objects.tracking(self.reaper):
            self._check_open()
            if cpu is not None and cpu not in self.cpus:
                raise UsageError(f"CPU {cpu} is not one of this run's CPUs {self.cpus}")
            index = len(self.pairs)
            bounds = self.workload.place_unit(self.config.placement, self.cpus, index, cpu)
            check_tasks(len(bounds))
            res = self.workload.create_pair(index, self.kind)
            ends: list[End] = []
            try:
                for role, bound in zip(self.workload.roles(index), bounds):
                    end = End(index, role, self.counters.allocate(), bound, os.getpid())
                    ends.append(end)
                pair = Pair(index, tuple(ends), res)
                for r, end in enumerate(ends):
                    try:
                        self._launcher.launch(pair, end, r, gate)
                    except (OSError, RuntimeError) as exc:
                        raise task_error(exc, f"pair {index} {end.role}") from None
            except BaseException:
                # Roll back a pair that failed halfway: nothing of it may survive.
                half = Pair(index, tuple(ends), res)
                self._stop_pairs([half])
                raise
            self.pairs.append(pair)
            return pair

    def _drop(self, pairs: list[Pair]) -> None:
        """Stop and remove pairs that did not all start (they are the last ones added)."""
        with deferred():
            gone = {id(p) for p in pairs}
            self.pairs = [p for p in self.pairs if id(p) not in gone]
            self._stop_pairs(pairs)

    def remove_all_pairs(self) -> None:
        """Stop and remove every pair in one pass (one wake-up and join round for all)."""
        with self._lock:
            self._drop(list(self.pairs))

    def remove_pair(self) -> Pair | None:
        """Stop and remove the last pair; the others keep running."""
        with self._lock, deferred():
            if not self.pairs:
                return None
            pair = self.pairs.pop()
            self._stop_pairs([pair])
            return pair

    # -- views -----------------------------------------------------------------
    @property
    def active_pairs(self) -> int:
        return active_count(self.pairs)

    @property
    def oversubscribed(self) -> bool:
        return oversubscribed(self.active_pairs, self.cpus)

    def ends(self) -> list[End]:
        with self._lock:
            return [e for p in self.pairs for e in p.ends]

    def describe(self) -> str:
        c = self.config
        size = self.workload.detail_text()
        text = f"{c.workload}{size} · {c.placement} · {c.mode} · engine {self.kind}"
        if self.kind == "python" and self.workload.python_note:
            text += f" ({self.workload.python_note})"
        return text

    @property
    def timing(self) -> bool:
        """True when the ends time their rounds."""
        return self.kind == "native" and self.config.latency and bool(self.workload.timed)

    def pause_timing(self, paused: bool) -> None:
        """Stop or resume timing in every end while the loops run (for measuring its cost)."""
        for end in self.ends():
            self.counters.latency.pause(end.slot, paused)

    @property
    def latency_note(self) -> str:
        """How rounds are timed, or why not: printed with every latency figure."""
        c = self.config
        if self.kind != "native":
            return "latency n/a (the Python engine does not time rounds)"
        if not self.workload.timed:
            return f"latency n/a ({c.workload} has no two-end token to time)"
        if not c.latency:
            return "latency off (--no-latency)"
        if c.latency_every > 1:
            return f"latency: 1 round in {c.latency_every} timed (CLOCK_MONOTONIC)"
        return "latency: every round timed (CLOCK_MONOTONIC)"

    def poll(self, every: bool = False) -> list[str]:
        """Reap finished ends; a pair whose end died is failed, the others go on.

        Only the pairs the death watch names are looked at (death_watch.py);
        every=True looks at every running pair, as before it: the reference
        the tests and bench/sampler_scale.py hold the watch to."""
        new: list[str] = []
        if self._opened and not self._closed:
            said = self.contention.check()
            new.extend(said)
            self.events.extend(said)
        with self._lock:
            if every:
                looked = [pair for pair in self.pairs if pair.active]
            else:
                looked = self._deaths.suspects(self.pairs)
            for pair in looked:
                why = self._death(pair)
                if why:
                    pair.state = f"failed: {why}"
                    self._stop_pairs([pair], release=False)
                    msg = f"pair {pair.index} failed: {why}; the other pairs go on"
                    new.append(msg)
                    self.events.append(msg)
        return new

    # -- internals -------------------------------------------------------------
    def _death(self, pair: Pair) -> str | None:
        for end in pair.ends:
            # Runs per end per sample: the whole slot is read only for an end that ended.
            if self.counters.state_code(end.slot) in ENDED:
                r = self.counters.read(end.slot)
                why = os.strerror(r.last_errno)
                if r.state == "removed externally":
                    return f"{end.role}: its object was removed externally ({why})"
                return f"{end.role}: {why}"
            if end.child:
                try:
                    done, status = os.waitpid(end.pid, os.WNOHANG)
                except ChildProcessError:
                    done, status = end.pid, 0
                if done:
                    end.child = False  # reaped
                    return f"{end.role} (pid {end.pid}) died: {_status_text(status)}"
            elif end.thread is not None and not end.thread.is_alive():
                return f"{end.role} thread ended"
        return None

    def _stop_pairs(self, pairs: list[Pair], release: bool = True) -> None:
        """The originals' way: stop flag, then IPC_RMID so blocked ends see EIDRM."""
        if len(pairs) > 8:
            with objects.keys_snapshot():
                self._stop_each(pairs, release)
        else:
            self._stop_each(pairs, release)

    def _stop_each(self, pairs: list[Pair], release: bool) -> None:
        for pair in pairs:
            for end in pair.ends:
                self.counters.request_stop(end.slot)
        if self.counters.gate_closed:
            self.counters.wake_gate()  # its ends see their stop now, not at the next poll
        for pair in pairs:
            try:
                self.workload.wake(pair.res, pair.index)
            except Exception as exc:  # the join below bounds the wait; say why it may be slow
                self.events.append(f"pair {pair.index}: wake-up failed: {exc}")
        deadline = time.monotonic() + JOIN_TIMEOUT
        for pair in pairs:
            for end in pair.ends:
                self._join(end, deadline)
        for pair in pairs:
            try:
                self.workload.destroy_pair(pair.res, pair.index)
            finally:
                if release:
                    for end in pair.ends:
                        self.counters.release(end.slot)

    def _join(self, end: End, deadline: float) -> None:
        if end.thread is not None:
            end.thread.join(max(0.0, deadline - time.monotonic()))
            if end.thread.is_alive():
                self.events.append(f"pair {end.pair} {end.role}: thread did not stop in time")
            return
        if not end.child:
            return
        while time.monotonic() < deadline:
            try:
                done, _ = os.waitpid(end.pid, os.WNOHANG)
            except ChildProcessError:
                done = end.pid
            if done:
                end.child = False
                return
            time.sleep(0.002)
        end.child = False
        try:
            os.kill(end.pid, signal.SIGKILL)
            os.waitpid(end.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            return  # it exited between the last poll and the kill: nothing to report
        self.events.append(f"pair {end.pair} {end.role}: killed after {JOIN_TIMEOUT:.0f} s")


def _status_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"
