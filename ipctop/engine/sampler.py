"""The sampler: owns the clock and turns counters and /proc into Samples.

One reading costs a request and a read of each end's slot (native ends
answer with their CPU and switch counts there), and one read each of
/proc/stat (the CPU split and steal), /proc/interrupts and /proc/pressure/cpu,
and of each CPU's clock where cpufreq has one. Only ends that cannot answer (the Python
engine) and the detail view read each thread's /proc files (stat and status;
schedstat and sched too for the detail view), all of them in one pass per
reading (task_reads.TaskFiles: one native call, files kept open). Readings never
overlap; consumers get immutable Samples through a callback and keep any history.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from ..cpus import read_topology
from . import procfs
from .costs import CostTracker
from .counters import EndStats, SlotReading
from .end_launch import End
from .engine import Engine
from .latency import Tracker
from .opstats import OpStats, op_stats
from .sample import CpuSample, IpiSample, Sample, ThreadSample
from .stalls import StallWatch
from .task_reads import TaskFiles

ASK_LEAD = 0.05  # seconds between asking the ends and reading their answers


class _Seen(NamedTuple):
    """What one end showed at the last reading; switch counts carry their time.
    A tuple, built positionally: the sampler makes one per end per sample."""

    rounds: int
    errors: int
    vcsw: int | None
    ivcsw: int | None
    ops: tuple[int, ...]
    at: float  # monotonic seconds when vcsw/ivcsw/cpu were true
    ack: int | None  # the answer they came from; None when read from /proc
    cpu: int | None
    vrate: float | None
    ivrate: float | None


class Sampler:
    def __init__(
        self,
        engine: Engine,
        interval: float = 0.5,
        proc: str = "/proc",
    ) -> None:
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.engine = engine
        self.interval = interval
        self.proc = proc
        self.monitor_cpu: int | None = None
        self._t0 = time.monotonic()
        self._last_t = self._t0
        self._seen: dict[tuple[int, str, int], _Seen] = {}
        self._cpu_prev = procfs.read_cpu_ticks(proc)
        self._psi_prev = procfs.cpu_pressure_total_us(proc)
        self._psi_at = self._t0
        # Probed once: a VM without cpufreq costs no reads per interval.
        self.sysfs = "/sys/devices/system/cpu"
        self._freq_cpus = procfs.cpufreq_cpus(self.sysfs)
        self._ctxt_prev = procfs.read_ctxt(proc)
        self._ipi_prev = procfs.read_ipis(proc)
        self._thread: threading.Thread | None = None
        self._halt = threading.Event()
        self._drift_said: set[tuple[int, str, int]] = set()
        self._costs: CostTracker | None = None
        self._ask = 0  # the last stats request posted to the ends
        self._latency = Tracker(engine.counters.latency) if engine.timing else None
        self._stalls = StallWatch(interval)
        self._task_files = TaskFiles(proc)  # each thread's /proc files, open across ticks
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
        counters = self.engine.counters
        cpus, ctxt, ipis = self._cpus(), self._ctxt(dt), self._ipis(dt)
        threads = []
        tasks = {}
        names = self.engine.workload.ops
        op_rates: list[list[float]] = []
        seen: dict[tuple[int, str, int], _Seen] = {}
        pairs = {p.index: p for p in self.engine.pairs}
        progress: dict[int, int] = {}  # running pairs: rounds and calls, for stalls
        gap = self._stalls.gap(dt)
        if gap:
            events.append(gap)
        readings = [counters.read(end.slot) for end in ends]
        answers, read = self._answers(ends, readings)
        # Every end /proc must tell about, read in one pass (native: one call, no GIL).
        procs = iter(self._task_files.read([(e.pid, e.tid) for e, r in zip(ends, read) if r],
                                           detail=self._costs is not None))  # fmt: skip
        for end, r, ans, from_proc in zip(ends, readings, answers, read):
            key = (end.pair, end.role, end.tid)
            prev = self._seen.get(key)
            pair = pairs.get(end.pair)
            state = pair.state if pair is not None and not pair.active else r.state
            task = next(procs) if from_proc else None
            now_seen = self._switches(r, ans, from_proc, task, prev, now)
            tasks[key] = task
            if prev is None:
                started = pair.started if pair is not None else now - dt
                span = max(now - started, 1e-9)
                ops = r.rounds / span
                op_prev: tuple[int, ...] = (0,) * len(r.ops)
                op_dt, errors_before = span, 0
            else:
                ops = (r.rounds - prev.rounds) / dt
                op_prev, op_dt, errors_before = prev.ops, dt, prev.errors
            if names:
                op_rates.append([(a - b) / op_dt for a, b in zip(r.ops, op_prev)])
            if r.errors > errors_before:
                events.append(
                    f"pair {end.pair} {end.role}: {r.errors - errors_before} wrong message(s) "
                    f"in the shared queue (got pair id {r.bad_value}); not counted"
                )
            seen[key] = now_seen
            if state == "running":
                progress[end.pair] = progress.get(end.pair, 0) + r.rounds + sum(r.ops)
            if end.bound_cpu is not None and end.tid and key not in self._drift_said:
                now_seen, drift = self._moved(end, now_seen, key)
                seen[key] = now_seen
                if drift:
                    events.append(drift)
            threads.append(
                ThreadSample(
                    pair=end.pair,
                    role=end.role,
                    tid=end.tid,
                    bound_cpu=end.bound_cpu,
                    last_cpu=now_seen.cpu,
                    rounds=r.rounds,
                    ops_per_s=ops if state == "running" else 0.0,
                    errors=r.errors,
                    state=state,
                    vcsw_per_s=now_seen.vrate,
                    ivcsw_per_s=now_seen.ivrate,
                )
            )
        self._seen = seen
        stalled, said = self._stalls.update(now, progress)
        events.extend(said)
        costs = None
        per_op: OpStats | None = None
        if names and self.engine.workload.phase_mark(self.engine.pairs):
            # msgbench: each phase's own rate over the last repeats, not a blend of five
            per_op = self.engine.workload.phase_stats(self.engine.pairs)
        elif names:
            per_op = op_stats(names, op_rates)
        if self._costs is not None:
            costs = self._costs.update(
                ends, tuple(threads), tasks, ipis, dt,
                self.engine.oversubscribed, self._siblings,
            )  # fmt: skip
        sample = Sample(
            t=now - self._t0,
            dt=dt,
            pairs=self.engine.active_pairs,
            threads=tuple(threads),
            total_ops_per_s=sum(t.ops_per_s for t in threads),
            cpus=cpus,
            ctxt_per_s=ctxt,
            ipis=ipis,
            events=tuple(events),
            oversubscribed=self.engine.oversubscribed,
            ops=per_op,
            latency=self._latency.readings(self.engine.pairs) if self._latency else (),
            costs=costs,
            stalled=stalled,
            gap=gap is not None,
            cpu_pressure_pct=self._pressure(now),
        )
        # Asked now, answered at the ends' next round: the next reading has
        # answers at most an interval old even when nothing asks again.
        self.ask(ends)
        return sample

    def latency_last(self, pair: int) -> tuple[bytearray, bytearray, bytearray] | None:
        """(rtt of A, one-way A to B, B to A) raw histograms of one pair's last interval."""
        return self._latency.last_of(pair) if self._latency is not None else None

    def ask(self, ends: list[End] | None = None) -> None:
        """Ask every native end to publish its CPU and switch counts in its slot."""
        self._ask += 1
        for end in self.engine.ends() if ends is None else ends:
            self.engine.counters.request_stats(end.slot, self._ask)

    def _answers(
        self, ends: list[End], readings: list[SlotReading]
    ) -> tuple[list[EndStats | None], list[bool]]:
        """Each end's own answer, and whether /proc must be read for it instead.

        A native end answers in its counter slot (no file opened); an end that
        never answered (the Python engine, or one not yet past a round) and the
        detail view (which needs its CPU times too) read /proc. An end that
        answered before but not now (mid-answer) keeps what it said.
        """
        answers: list[EndStats | None] = []
        read: list[bool] = []
        detail = self._costs is not None
        for end, r in zip(ends, readings):
            ans = self.engine.counters.stats(end.slot) if r.tid and not detail else None
            answers.append(ans)
            if not r.tid or ans is not None:
                read.append(False)
            elif detail:
                read.append(True)
            else:
                prev = self._seen.get((end.pair, end.role, end.tid))
                read.append(prev is None or prev.ack is None)
        return answers, read

    def _switches(
        self,
        r: SlotReading,
        ans: EndStats | None,
        from_proc: bool,
        task: procfs.TaskStat | None,
        prev: _Seen | None,
        now: float,
    ) -> _Seen:
        """Where the thread runs and how often it switches, from the source
        _answers chose. Counts keep the time they were taken, so rates hold
        whichever source gave them."""
        cpu: int | None
        vcsw: int | None
        ivcsw: int | None
        ack: int | None
        if ans is not None:
            if prev is not None and prev.ack == ans.ack:
                # Not a round since we asked: blocked or waiting for a CPU.
                ran = r.rounds != prev.rounds
                return _Seen(
                    r.rounds, r.errors, prev.vcsw, prev.ivcsw, r.ops, prev.at, prev.ack, prev.cpu,
                    prev.vrate if ran else 0.0, prev.ivrate if ran else 0.0,
                )  # fmt: skip
            at, cpu, vcsw, ivcsw, ack = (
                ans.ns / 1e9,
                ans.cpu,
                ans.voluntary,
                ans.involuntary,
                ans.ack,
            )
        elif r.tid and not from_proc and prev is not None:
            # Answered before but not now (mid-answer): keep what it said.
            return prev._replace(rounds=r.rounds, errors=r.errors, ops=r.ops)
        else:
            at, ack = now, None
            cpu = task.last_cpu if task else None
            vcsw = task.voluntary if task else None
            ivcsw = task.involuntary if task else None
        span = at - prev.at if prev is not None else 0.0
        vrate = _rate(prev.vcsw, vcsw, span) if prev is not None and span > 0 else 0.0
        ivrate = _rate(prev.ivcsw, ivcsw, span) if prev is not None and span > 0 else 0.0
        if vcsw is None:
            vrate = ivrate = None
        return _Seen(r.rounds, r.errors, vcsw, ivcsw, r.ops, at, ack, cpu, vrate, ivrate)

    def _moved(self, end: End, seen: _Seen, key: tuple[int, str, int]) -> tuple[_Seen, str | None]:
        """Say once per thread that it left its CPU, in the sample after it did.

        The end's own answer can be an interval old (it answers at its next
        round), so its affinity is read too: one system call per end until
        it is said. A thread moved (taskset) or widened by the kernel (its CPU
        went offline) then has its real CPU read from /proc at once.
        """
        try:
            allowed: set[int] | None = os.sched_getaffinity(end.tid)
        except OSError:
            allowed = None  # gone, or another user's: the answers still tell
        moved = allowed is not None and allowed != {end.bound_cpu}
        if moved and seen.cpu in (None, end.bound_cpu):
            task = procfs.read_task(end.pid, end.tid, self.proc)
            if task is not None and task.last_cpu is not None:
                seen = seen._replace(cpu=task.last_cpu)
        ran_off = seen.cpu is not None and seen.cpu != end.bound_cpu
        if not moved and not ran_off:
            return seen, None
        self._drift_said.add(key)
        why = ""
        if moved:
            why = (
                f"; its affinity is now {sorted(allowed or ())} (moved with taskset, or CPU "
                f"{end.bound_cpu} went offline)"
            )
        where = f"ran on CPU {seen.cpu}" if ran_off else "has not run elsewhere yet"
        return seen, f"pair {end.pair} {end.role} is bound to CPU {end.bound_cpu} but {where}{why}"

    def _cpus(self) -> tuple[CpuSample, ...]:
        cur = procfs.read_cpu_ticks(self.proc)
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

    def _ctxt(self, dt: float) -> float | None:
        cur = procfs.read_ctxt(self.proc)
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
            # Re-arm from the schedule, but never queue up missed ticks.
            due = max(due + self.interval, time.monotonic() + self.interval / 4)


def _rate(prev: int | float | None, cur: int | float | None, dt: float) -> float | None:
    if prev is None or cur is None:
        return None
    return max(0.0, (cur - prev) / dt)
