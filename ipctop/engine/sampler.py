"""The sampler: owns the clock and turns counters and /proc into Samples.

One reading costs a request and a read of each end's slot (native ends
answer with their CPU and switch counts there; end_pass.py: one native pass
over every end, end_figures.py: the same in Python), and one read each of
/proc/stat (the CPU split, steal and context switches), /proc/interrupts and
/proc/pressure/cpu, and of each CPU's clock where cpufreq has one. Only ends
that cannot answer (the Python engine) and the detail view read each thread's
/proc files (stat and status; schedstat and sched too for the detail view),
all of them in one pass per reading (task_reads.TaskFiles: one native call,
files kept open). Readings never overlap; consumers get immutable Samples
through a callback and keep any history.
"""

from __future__ import annotations

import operator
import os
import threading
import time
from collections.abc import Callable

from ..cpus import read_topology
from . import collector, procfs
from .costs import CostTracker
from .counters import request_word
from .end_launch import End
from .end_pass import end_pass as make_end_pass
from .engine import Engine
from .latency import PairLatency, Tracker
from .latency_pace import latency_due
from .opstats import OpStats, op_stats
from .placement import oversubscribed
from .procfs import TaskStat
from .sample import CpuSample, IpiSample, Sample
from .stalls import StallWatch
from .task_reads import TaskFiles

_OPS = operator.attrgetter("ops_per_s")
ASK_LEAD = 0.05  # seconds between asking the ends and reading their answers


class Sampler:
    def __init__(
        self,
        engine: Engine,
        interval: float = 0.5,
        proc: str = "/proc",
        end_pass: str = "auto",
    ) -> None:
        """end_pass: how every end's slot becomes its figures (end_pass.end_pass):
        "auto" is the native pass where the extension has it."""
        if interval <= 0:
            raise ValueError("interval must be positive")
        collector.pace()  # the monitor's process allocates a sample's objects each tick
        self.engine = engine
        self.interval = interval
        self.proc = proc
        self.monitor_cpu: int | None = None
        self._t0 = time.monotonic()
        self._last_t = self._t0
        self._cpu_prev, self._ctxt_prev = procfs.read_stat(proc)
        self._psi_prev = procfs.cpu_pressure_total_us(proc)
        self._psi_at = self._t0
        # Probed once: a VM without cpufreq costs no reads per interval.
        self.sysfs = "/sys/devices/system/cpu"
        self._freq_cpus = procfs.cpufreq_cpus(self.sysfs)
        self._ipi_prev = procfs.read_ipis(proc)
        self._thread: threading.Thread | None = None
        self._halt = threading.Event()
        self._costs: CostTracker | None = None
        self._ask = 0  # the last stats request posted to the ends
        self._latency = Tracker(engine.counters.latency) if engine.timing else None
        self._latency_at: float | None = None  # when latency was last read (latency_pace.py)
        self._stalls = StallWatch(interval)
        self._task_files = TaskFiles(proc)  # each thread's /proc files, open across ticks
        self._ends = make_end_pass(end_pass, self._read_tasks, self._read_task)
        # Held for a whole reading: close() takes it before closing the files, so a
        # tick still reading (stop()'s join gave up on it) is waited out, never cut.
        self._tick = threading.Lock()
        self._closed = False

    @property
    def detail(self) -> bool:
        """Also read where the time goes (schedstat, sched, pressure): a few more reads."""
        return self._costs is not None

    @detail.setter
    def detail(self, on: bool) -> None:
        if on and self._costs is None:
            # Siblings first: a sample on the sampler thread may see _costs at once.
            self._siblings = read_topology().siblings
            self._costs = CostTracker(self.proc, per_unit=self.engine.workload.unit != "pair")
        elif not on:
            self._costs = None

    # -- one reading ----------------------------------------------------------
    def sample(self) -> Sample:
        """Take one reading now, relative to the previous one."""
        with self._tick:
            if self._closed:
                raise RuntimeError("the sampler is closed")
            return self._reading()

    def _reading(self) -> Sample:
        events = self.engine.poll()
        now = time.monotonic()
        dt = max(now - self._last_t, 1e-9)
        self._last_t = now
        ends = self.engine.ends()
        ticks, switches = procfs.read_stat(self.proc)
        cpus, ctxt, ipis = self._cpus(ticks), self._ctxt(switches, dt), self._ipis(dt)
        names = self.engine.workload.ops
        gap = self._stalls.gap(dt)
        if gap:
            events.append(gap)
        detail = self._costs is not None
        step = self._ends.step(
            self.engine.counters.buf, ends, self.engine.pairs, now, dt, detail, len(names)
        )
        events.extend(step.events)
        threads = step.threads
        stalled, said = self._stalls.update(now, step.progress)
        events.extend(said)
        costs = None
        per_op: OpStats | None = None
        if names and self.engine.workload.phase_mark(self.engine.pairs):
            # msgbench: each phase's own rate over the last repeats, not a blend of five
            per_op = self.engine.workload.phase_stats(self.engine.pairs)
        elif names:
            per_op = op_stats(names, step.op_rates)
        active = self.engine.active_pairs  # once: a pass over every pair
        over = oversubscribed(active, self.engine.cpus)
        if self._costs is not None:
            costs = self._costs.update(
                ends, tuple(threads), step.tasks, ipis, dt, over, self._siblings
            )
        latency: tuple[PairLatency, ...] = ()
        if self._latency is not None and latency_due(
            now, self._latency_at, len(ends), self.interval
        ):
            latency = self._latency.readings(self.engine.pairs)
            self._latency_at = now
        sample = Sample(
            t=now - self._t0,
            dt=dt,
            pairs=active,
            threads=tuple(threads),
            total_ops_per_s=sum(map(_OPS, threads)),
            cpus=cpus,
            ctxt_per_s=ctxt,
            ipis=ipis,
            events=tuple(events),
            oversubscribed=over,
            ops=per_op,
            latency=latency,
            costs=costs,
            stalled=stalled,
            gap=gap is not None,
            cpu_pressure_pct=self._pressure(now),
        )
        # Asked now, answered at the ends' next round: the next reading has
        # answers at most an interval old even when nothing asks again.
        self.ask(ends)
        return sample

    def _read_tasks(self, ids: list[tuple[int, int]], detail: bool) -> list[TaskStat | None]:
        return self._task_files.read(ids, detail=detail)

    def _read_task(self, pid: int, tid: int) -> TaskStat | None:
        return procfs.read_task(pid, tid, self.proc)

    def latency_last(self, pair: int) -> tuple[bytearray, bytearray, bytearray] | None:
        """(rtt of A, one-way A to B, B to A) raw histograms of one pair's last reading."""
        return self._latency.last_of(pair) if self._latency is not None else None

    def ask(self, ends: list[End] | None = None) -> None:
        """Ask every native end to publish its CPU and switch counts in its slot."""
        self._ask += 1
        ends = self.engine.ends() if ends is None else ends
        self._ends.ask(self.engine.counters.buf, ends, request_word(self._ask))

    def _cpus(self, cur: dict[int, procfs.CpuTicks]) -> tuple[CpuSample, ...]:
        split = procfs.cpu_percent_split(self._cpu_prev, cur)
        steal = procfs.steal_percent(self._cpu_prev, cur)
        mhz = procfs.read_cpu_mhz(self._freq_cpus, self.sysfs) if self._freq_cpus else {}
        self._cpu_prev = cur
        out = []
        for cpu in sorted(split):
            user, system, softirq, idle = (round(v, 1) for v in split[cpu])
            out.append(
                CpuSample(
                    cpu,
                    user,
                    system,
                    softirq,
                    idle,
                    steal=round(steal[cpu], 1) if cpu in steal else None,
                    mhz=mhz.get(cpu),
                )
            )
        return tuple(out)

    def _pressure(self, now: float) -> float | None:
        """Percent of the interval some task waited for a CPU (PSI), or None."""
        cur = procfs.cpu_pressure_total_us(self.proc)
        prev, at = self._psi_prev, self._psi_at
        self._psi_prev, self._psi_at = cur, now
        if cur is None or prev is None or now <= at:
            return None
        return round(min(100.0, max(0.0, (cur - prev) / 1e4 / (now - at))), 1)

    def _ctxt(self, cur: int | None, dt: float) -> float | None:
        rate = _rate(self._ctxt_prev, cur, dt)
        self._ctxt_prev = cur
        return rate

    def _ipis(self, dt: float) -> tuple[IpiSample, ...]:
        cur = procfs.read_ipis(self.proc)
        prev, self._ipi_prev = self._ipi_prev, cur
        if cur is None or prev is None:
            return ()
        cpus = sorted(set(cur.get("resched", {})) | set(cur.get("callfunc", {})))
        return tuple(
            IpiSample(
                cpu,
                _rate(prev.get("resched", {}).get(cpu), cur.get("resched", {}).get(cpu), dt),
                _rate(prev.get("callfunc", {}).get(cpu), cur.get("callfunc", {}).get(cpu), dt),
            )
            for cpu in cpus
        )

    # -- the clock ------------------------------------------------------------
    def sample_at(self, due: float, halt: threading.Event | None = None) -> Sample | None:
        """Sleep until `due` (monotonic) and take a reading; None if stopped meanwhile.

        The ends are asked shortly before: the CPUs are free for them to answer
        while this thread sleeps, and each answer carries its own time.
        """
        halt = self._halt if halt is None else halt
        lead = min(ASK_LEAD, self.interval / 4)
        if halt.wait(max(0.0, due - lead - time.monotonic())):
            return None
        self.ask()
        if halt.wait(max(0.0, due - time.monotonic())):
            return None
        with self._tick:
            # Looked at again under the lock: a close() that came during the wait wins.
            if self._closed or halt.is_set():
                return None
            return self._reading()

    def start(self, callback: Callable[[Sample], None] | None = None) -> None:
        """Sample every interval on a thread of its own until stop()."""
        if self._closed:
            raise RuntimeError("the sampler is closed")
        # An event per thread: a thread stop() gave up joining keeps its own (set)
        # one, so a start() after it cannot wake it again beside the new one.
        self._halt = threading.Event()
        self._thread = threading.Thread(
            target=self._loop, args=(callback, self._halt), name="ipctop-sampler", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop the ticks and join the thread (for 2 s: a callback may wait on the
        caller's own thread). The files stay open for a start() again."""
        self._halt.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(2.0)
        self._thread = None

    def close(self) -> None:
        """stop(), wait out a reading still in progress, then close the /proc files.

        In that order on every path: closed under a tick, the files made the
        sampler thread die of "ValueError: TaskFiles is closed"."""
        self.stop()
        with self._tick:
            self._closed = True
            self._task_files.close()

    def _loop(self, callback: Callable[[Sample], None] | None, halt: threading.Event) -> None:
        if self.monitor_cpu is not None:
            os.sched_setaffinity(0, {self.monitor_cpu})
        due = time.monotonic() + self.interval
        while (sample := self.sample_at(due, halt)) is not None:
            if callback is not None:
                callback(sample)
            due = self.next_due(due)

    def next_due(self, due: float) -> float:
        """The reading after one due at `due`: on the schedule, but never queued up
        behind a late one, and at least a quarter interval after now (a reading
        taken at once behind a late one is a window of a few ms: its rates rest on
        a handful of rounds)."""
        return max(due + self.interval, time.monotonic() + self.min_gap)

    @property
    def min_gap(self) -> float:
        """The shortest window the schedule makes: a quarter interval."""
        return self.interval / 4


def _rate(prev: int | float | None, cur: int | float | None, dt: float) -> float | None:
    if prev is None or cur is None:
        return None
    return max(0.0, (cur - prev) / dt)
