"""The sampler: owns the clock and turns counters and /proc into Samples.

One reading costs one read of each end's slot, one open of each thread's
/proc stat and status files, and one read each of /proc/stat and
/proc/interrupts. The thread re-arms only after a reading finished, so
readings never overlap; consumers get immutable Samples through a callback
or the bounded history.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from ..analysis.opstats import op_stats
from ..cpus import parse_cpu_list, read_topology
from . import procfs
from .costs import CostTracker
from .engine import Engine
from .sample import CpuSample, IpiSample, Sample, ThreadSample


@dataclass
class _Seen:
    rounds: int
    errors: int
    vcsw: int | None
    ivcsw: int | None
    ops: tuple[int, ...] = ()


class Sampler:
    def __init__(
        self,
        engine: Engine,
        interval: float = 0.5,
        history: int = 4096,
        proc: str = "/proc",
    ) -> None:
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.engine = engine
        self.interval = interval
        self.proc = proc
        self.history: deque[Sample] = deque(maxlen=history)
        self.monitor_cpu: int | None = None
        self._t0 = time.monotonic()
        self._last_t = self._t0
        self._seen: dict[tuple[int, str, int], _Seen] = {}
        self._cpu_prev = psutil.cpu_times(percpu=True)
        self._ctxt_prev = procfs.read_ctxt(proc)
        self._ipi_prev = procfs.read_ipis(proc)
        self._thread: threading.Thread | None = None
        self._halt = threading.Event()
        self._drift_said: set[tuple[int, str, int]] = set()
        self._costs: CostTracker | None = None

    @property
    def detail(self) -> bool:
        """Also read where the time goes (schedstat, sched, pressure): a few more reads."""
        return self._costs is not None

    @detail.setter
    def detail(self, on: bool) -> None:
        if on and self._costs is None:
            # Siblings first: a sample on the sampler thread may see _costs at once.
            self._siblings = read_topology().siblings
            self._costs = CostTracker(self.proc)
        elif not on:
            self._costs = None

    # -- one reading ----------------------------------------------------------
    def sample(self) -> Sample:
        """Take one reading now, relative to the previous one."""
        events = self.engine.poll()
        now = time.monotonic()
        dt = max(now - self._last_t, 1e-9)
        self._last_t = now
        threads = []
        tasks = {}
        names = self.engine.workload.ops
        op_rates: list[list[float]] = []
        seen: dict[tuple[int, str, int], _Seen] = {}
        pairs = {p.index: p for p in self.engine.pairs}
        ends = self.engine.ends()
        for end in ends:
            r = self.engine.counters.read(end.slot)
            key = (end.pair, end.role, end.tid)
            prev = self._seen.get(key)
            pair = pairs.get(end.pair)
            state = pair.state if pair is not None and not pair.active else r.state
            task = procfs.read_task(end.pid, end.tid, self.proc) if r.tid else None
            tasks[key] = task
            vcsw = task.voluntary if task else None
            ivcsw = task.involuntary if task else None
            if prev is None:
                started = pair.started if pair is not None else now - dt
                span = max(now - started, 1e-9)
                ops = r.rounds / span
                prev = _Seen(0, 0, vcsw, ivcsw, (0,) * len(r.ops))
                op_dt = span
            else:
                ops = (r.rounds - prev.rounds) / dt
                op_dt = dt
            if names:
                op_rates.append([(a - b) / op_dt for a, b in zip(r.ops, prev.ops)])
            if r.errors > prev.errors:
                events.append(
                    f"pair {end.pair} {end.role}: {r.errors - prev.errors} wrong message(s) "
                    f"in the shared queue (got pair id {r.bad_value}); not counted"
                )
            seen[key] = _Seen(r.rounds, r.errors, vcsw, ivcsw, r.ops)
            if task and end.bound_cpu is not None and task.last_cpu != end.bound_cpu:
                drift = self._drift(end, task.last_cpu, key)
                if drift:
                    events.append(drift)
            threads.append(
                ThreadSample(
                    pair=end.pair,
                    role=end.role,
                    tid=end.tid,
                    bound_cpu=end.bound_cpu,
                    last_cpu=task.last_cpu if task else None,
                    rounds=r.rounds,
                    ops_per_s=ops if state == "running" else 0.0,
                    errors=r.errors,
                    state=state,
                    vcsw_per_s=_rate(prev.vcsw, vcsw, dt),
                    ivcsw_per_s=_rate(prev.ivcsw, ivcsw, dt),
                )
            )
        self._seen = seen
        ipis = self._ipis(dt)
        extra: dict = {"oversubscribed": self.engine.oversubscribed}
        if names:
            extra["ops"] = op_stats(names, op_rates)
        if self._costs is not None:
            extra["costs"] = self._costs.update(
                ends, tuple(threads), tasks, ipis, dt,
                self.engine.oversubscribed, self._siblings,
            ).to_dict()  # fmt: skip
        sample = Sample(
            t=now - self._t0,
            dt=dt,
            pairs=self.engine.active_pairs,
            threads=tuple(threads),
            total_ops_per_s=sum(t.ops_per_s for t in threads),
            cpus=self._cpus(),
            ctxt_per_s=self._ctxt(dt),
            ipis=ipis,
            events=tuple(events),
            extra=extra,
        )
        self.history.append(sample)
        return sample

    def _drift(self, end, ran_on: int, key: tuple[int, str, int]) -> str | None:
        """Say once per thread that it ran off its CPU, and why if we can tell.

        When a CPU goes offline the kernel silently widens the affinity of the
        threads bound to it; the real CPU is the only trace left.
        """
        if key in self._drift_said:
            return None
        self._drift_said.add(key)
        try:
            allowed = os.sched_getaffinity(end.tid)
        except OSError:
            allowed = None
        why = ""
        if allowed is not None and allowed != {end.bound_cpu}:
            why = f"; its affinity is now {sorted(allowed)} (CPU {end.bound_cpu} offline?)"
        return f"pair {end.pair} {end.role} is bound to CPU {end.bound_cpu} but ran on CPU {ran_on}{why}"

    def _cpus(self) -> tuple[CpuSample, ...]:
        cur = psutil.cpu_times(percpu=True)
        online = _online_cpus(len(cur))
        out = []
        for cpu, a, b in zip(online, self._cpu_prev, cur):
            d = {f: max(0.0, getattr(b, f, 0.0) - getattr(a, f, 0.0)) for f in b._fields}
            total = sum(d.values()) or 1.0
            user = d.get("user", 0.0) + d.get("nice", 0.0)
            system = d.get("system", 0.0) + d.get("irq", 0.0)
            softirq = d.get("softirq", 0.0)
            idle = d.get("idle", 0.0) + d.get("iowait", 0.0)
            out.append(
                CpuSample(
                    cpu,
                    round(100 * user / total, 1),
                    round(100 * system / total, 1),
                    round(100 * softirq / total, 1),
                    round(100 * idle / total, 1),
                )
            )
        self._cpu_prev = cur
        return tuple(out)

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
    def start(self, callback: Callable[[Sample], None] | None = None) -> None:
        """Sample every interval on a thread of its own until stop()."""
        self._halt.clear()
        self._thread = threading.Thread(
            target=self._loop, args=(callback,), name="ipctop-sampler", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._halt.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(2.0)
        self._thread = None

    def _loop(self, callback: Callable[[Sample], None] | None) -> None:
        if self.monitor_cpu is not None:
            os.sched_setaffinity(0, {self.monitor_cpu})
        due = time.monotonic() + self.interval
        while not self._halt.wait(max(0.0, due - time.monotonic())):
            sample = self.sample()
            if callback is not None:
                callback(sample)
            # Re-arm from the schedule, but never queue up missed ticks.
            due = max(due + self.interval, time.monotonic() + self.interval / 4)


def _rate(prev: int | float | None, cur: int | float | None, dt: float) -> float | None:
    if prev is None or cur is None:
        return None
    return max(0.0, (cur - prev) / dt)


def _online_cpus(n: int) -> list[int]:
    """psutil lists online CPUs in order; name them by number, not position."""
    try:
        with open("/sys/devices/system/cpu/online") as f:
            cpus = parse_cpu_list(f.read())
    except (OSError, ValueError):
        return list(range(n))  # no sysfs (a container): name them by position
    return cpus if len(cpus) == n else list(range(n))
