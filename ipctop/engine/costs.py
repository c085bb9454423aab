"""Where the time goes: per-round costs, wake-ups, IPIs, migrations, flags.

Turned on by `Sampler.detail` (the TUI's `d` panel, the sweep's record and
table). Every figure is None when its source is missing, and `missing` says
why, so a consumer prints "n/a (why)" and never a zero that looks real.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, TypeVar

from pydantic import with_config

from . import procfs

if TYPE_CHECKING:  # sample.py holds Costs: these are for the annotations only
    from .end_launch import End
    from .sample import IpiSample, ThreadSample

_EndKey = tuple[int, str, int]  # (pair, role, tid)

TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ThreadCost:
    pair: int
    role: str
    cpu_us_per_round: float | None  # user + system, from schedstat run time when present
    user_us_per_round: float | None
    sys_us_per_round: float | None
    run_delay_us_per_round: float | None  # waiting runnable, from schedstat
    migrations: int | None  # during the interval
    vcsw_per_round: float | None
    ivcsw_per_round: float | None


@dataclass(frozen=True)
class CpuCost:
    cpu: int
    resched_per_round: float | None
    callfunc_per_round: float | None
    sched_per_s: float | None  # schedule() calls
    wakeups_per_s: float | None
    remote_wakeups_per_s: float | None  # ttwu_count - ttwu_local


# Read from a record inside a model that keeps a newer writer's keys (record_ab.AbCosts),
# a side's costs would otherwise take that model's rule: extra keys would become stray
# attributes, never written back. Ignored here as they are in a step's costs.
@with_config(extra="ignore")
@dataclass(frozen=True)
class Costs:
    threads: tuple[ThreadCost, ...] = ()
    cpus: tuple[CpuCost, ...] = ()
    rtt_us: tuple[tuple[int, float], ...] = ()  # (pair, round-trip latency = 1/rate)
    system_share_pct: float | None = None
    cpu_us_per_round: float | None = None
    cpu_pressure_avg10: float | None = None
    flags: tuple[str, ...] = ()
    missing: dict[str, str] = field(default_factory=dict)


def na(value: float | None, why: str | None, fmt: str = "{:,.2f}") -> str:
    """A figure, or "n/a (why)" - never a zero standing in for a missing source."""
    if value is None:
        return f"n/a ({why or 'no reading yet'})"
    return fmt.format(value)


@dataclass
class _Prev:
    rounds: int
    utime: int
    stime: int
    vcsw: int
    ivcsw: int
    run_ns: int | None
    wait_ns: int | None
    migrations: int | None
    cpu: int


class CostTracker:
    """Keeps the previous reading of every source and differences them."""

    def __init__(self, proc: str = "/proc", per_unit: bool = False) -> None:
        self.proc = proc
        # A load workload's ends do not all count rounds (hackbench's senders
        # count none): each end's costs are then per message of its unit.
        self.per_unit = per_unit
        self._prev: dict[_EndKey, _Prev] = {}
        self._sched_prev = procfs.read_schedstat_cpus(proc)
        self.missing: dict[str, str] = {}
        for source, name in (
            ("schedstat_task", "run delay"),
            ("migrations", "migrations"),
            ("schedstat_cpus", "wake-ups"),
            ("cpu_pressure", "cpu pressure"),
        ):
            why = procfs.missing_reason(source, proc)
            if why:
                self.missing[name] = why
        if "migrations" in self.missing:
            self.missing["migrations"] += "; counted from CPU changes instead"
        self._governors = _governors()

    def update(
        self,
        ends: list[End],
        threads: tuple[ThreadSample, ...],
        tasks: dict[_EndKey, procfs.TaskStat | None],
        ipis: tuple[IpiSample, ...],
        dt: float,
        oversubscribed: bool,
        topology_siblings: dict[int, tuple[int, ...]],
    ) -> Costs:
        by_key = {(t.pair, t.role, t.tid): t for t in threads}
        out_threads = []
        cur: dict[_EndKey, _Prev] = {}
        cpu_ns = user_t = sys_t = 0.0
        rounds_all = 0
        have_cpu_time = False
        flags: list[str] = []
        unit_rounds = self._unit_rounds(ends, by_key) if self.per_unit else {}
        for end in ends:
            key = (end.pair, end.role, end.tid)
            t, task = by_key.get(key), tasks.get(key)
            if t is None or task is None:
                continue
            # Read with its stat and status in the sampler's one pass (task_reads.TaskFiles).
            sched, migr = task.sched, task.migrations
            now = _Prev(t.rounds, task.utime_ticks, task.stime_ticks, task.voluntary,
                        task.involuntary, sched.run_ns if sched else None,
                        sched.wait_ns if sched else None, migr, task.last_cpu)  # fmt: skip
            cur[key] = now
            prev = self._prev.get(key)
            if prev is None:
                continue
            own = now.rounds - prev.rounds
            rounds = unit_rounds.get(end.pair, 0) if self.per_unit else own

            def per(x: float, rounds: int = rounds) -> float | None:
                return x / rounds if rounds > 0 else None

            du, ds = (now.utime - prev.utime) * TICK_US, (now.stime - prev.stime) * TICK_US
            run_us = None
            if now.run_ns is not None and prev.run_ns is not None:
                run_us = (now.run_ns - prev.run_ns) / 1000
            total_us = run_us if run_us is not None else du + ds
            if migr is not None and prev.migrations is not None:
                migrations = migr - prev.migrations
            else:
                migrations = int(now.cpu != prev.cpu)
            delay = None
            if now.wait_ns is not None and prev.wait_ns is not None:
                delay = per((now.wait_ns - prev.wait_ns) / 1000)
            # Ticks split the precise run time into user and system shares.
            share = ds / (du + ds) if du + ds > 0 else None
            out_threads.append(
                ThreadCost(
                    end.pair, end.role, per(total_us),
                    None if share is None else per(total_us * (1 - share)),
                    None if share is None else per(total_us * share),
                    delay, migrations,
                    per(now.vcsw - prev.vcsw), per(now.ivcsw - prev.ivcsw),
                )
            )  # fmt: skip
            if rounds > 0:
                cpu_ns += total_us
                rounds_all += own if self.per_unit else rounds  # each message once
                have_cpu_time = True
            user_t += du
            sys_t += ds
            if t.off_cpu:
                flags.append(
                    f"placement drift: pair {t.pair} {t.role} bound to CPU {t.bound_cpu} "
                    f"ran on CPU {t.last_cpu}"
                )
        self._prev = cur
        rtt = tuple(
            (t.pair, 1e6 / t.ops_per_s) for t in threads if t.role == "A" and t.ops_per_s > 0
        )
        total_rate = sum(t.ops_per_s for t in threads)
        cpus = self._cpu_costs(ipis, total_rate, dt)
        flags += _placement_flags(ends, topology_siblings, oversubscribed, self._governors)
        pressure = procfs.read_cpu_pressure(self.proc)
        return Costs(
            threads=tuple(out_threads),
            cpus=cpus,
            rtt_us=rtt,
            system_share_pct=100 * sys_t / (user_t + sys_t) if user_t + sys_t > 0 else None,
            cpu_us_per_round=cpu_ns / rounds_all if have_cpu_time and rounds_all else None,
            cpu_pressure_avg10=(pressure or {}).get("some", {}).get("avg10"),
            flags=tuple(flags),
            missing=dict(self.missing),
        )

    def _unit_rounds(self, ends: list[End], by_key: dict[_EndKey, ThreadSample]) -> dict[int, int]:
        """Rounds each unit's ends counted since the previous reading, by unit."""
        out: dict[int, int] = {}
        for end in ends:
            key = (end.pair, end.role, end.tid)
            t, prev = by_key.get(key), self._prev.get(key)
            if t is not None and prev is not None:
                out[end.pair] = out.get(end.pair, 0) + t.rounds - prev.rounds
        return out

    def _cpu_costs(
        self, ipis: tuple[IpiSample, ...], total_rate: float, dt: float
    ) -> tuple[CpuCost, ...]:
        sched = procfs.read_schedstat_cpus(self.proc)
        prev, self._sched_prev = self._sched_prev, sched
        out = []
        ipi_by = {i.cpu: i for i in ipis}
        cpus = sorted(set(ipi_by) | set(sched or {}))
        zero = True
        rate = total_rate or None

        def per_round(v: float | None) -> float | None:
            return None if v is None or rate is None else v / rate

        for cpu in cpus:
            i = ipi_by.get(cpu)

            s_now, s_prev = (sched or {}).get(cpu), (prev or {}).get(cpu)
            sps = wps = rps = None
            if s_now and s_prev and dt > 0:
                sps = (s_now.sched_count - s_prev.sched_count) / dt
                wps = (s_now.ttwu_count - s_prev.ttwu_count) / dt
                rps = wps - (s_now.ttwu_local - s_prev.ttwu_local) / dt
                zero &= sps == 0
            out.append(
                CpuCost(
                    cpu,
                    per_round(i.resched_per_s if i else None),
                    per_round(i.callfunc_per_s if i else None),
                    sps, wps, rps,
                )
            )  # fmt: skip
        if sched and zero and "wake-ups" not in self.missing:
            self.missing["wake-ups"] = "/proc/schedstat reads zero: set kernel.sched_schedstats=1"
            out = [CpuCost(c.cpu, c.resched_per_round, c.callfunc_per_round, None, None, None)
                   for c in out]  # fmt: skip
        return tuple(out)


def _placement_flags(ends: list[End], siblings: dict[int, tuple[int, ...]], oversubscribed: bool,
                     governors: dict[int, str]) -> list[str]:  # fmt: skip
    flags = []
    cpu_pairs: dict[int, set[int]] = {}
    for e in ends:
        if e.bound_cpu is not None:
            cpu_pairs.setdefault(e.bound_cpu, set()).add(e.pair)
    seen = set()
    for cpu, pairs in cpu_pairs.items():
        for sib in siblings.get(cpu, ()):
            if sib != cpu and sib in cpu_pairs and (sib, cpu) not in seen:
                seen.add((cpu, sib))
                others = cpu_pairs[sib] - pairs
                if others:
                    flags.append(
                        f"SMT siblings: CPUs {cpu} and {sib} share a core and host pairs "
                        f"{sorted(pairs)} and {sorted(others)}"
                    )
    if oversubscribed:
        flags.append("oversubscribed: more pairs than CPUs")
    for cpu in sorted(cpu_pairs):
        gov = governors.get(cpu)
        if gov is not None and gov != "performance":
            flags.append(f"CPU {cpu} frequency governor is {gov}, not performance")
    return flags


def _governors() -> dict[int, str]:
    out: dict[int, str] = {}
    base = "/sys/devices/system/cpu"
    try:
        names = os.listdir(base)
    except OSError:
        return out
    for name in names:
        if name.startswith("cpu") and name[3:].isdigit():
            try:
                with open(f"{base}/{name}/cpufreq/scaling_governor") as f:
                    out[int(name[3:])] = f.read().strip()
            except OSError:
                continue  # no cpufreq for this CPU (a VM): no flag, by design
    return out


_Row = TypeVar("_Row", "ThreadCost", "CpuCost")


def merge(intervals: Sequence[Costs | None]) -> Costs | None:
    """One Costs for a whole measurement window: the mean of its intervals.

    A figure stays None only if no interval had it, so a missing source still
    reads "n/a" and a real zero stays a zero.
    """
    readings = [c for c in intervals if c is not None]
    if not readings:
        return None

    def mean(values: Iterable[float | None]) -> float | None:
        vals = [v for v in values if v is not None]
        return sum(vals) / len(vals) if vals else None

    def total(values: Iterable[int | None]) -> int | None:
        vals = [v for v in values if v is not None]
        return sum(vals) if vals else None

    def merged(rows: list[_Row], keys: int, summed: tuple[str, ...] = ()) -> _Row:
        """The rows of one thread (or CPU) as one: its key fields kept, each
        count summed over the intervals, every other figure their mean."""
        names = [f.name for f in fields(rows[0])]
        head = [getattr(rows[0], n) for n in names[:keys]]
        rest = [(total if n in summed else mean)(getattr(r, n) for r in rows) for n in names[keys:]]
        return type(rows[0])(*head, *rest)

    by_thread: dict[tuple[int, str], list[ThreadCost]] = {}
    for t in (t for c in readings for t in c.threads):
        by_thread.setdefault((t.pair, t.role), []).append(t)
    by_cpu: dict[int, list[CpuCost]] = {}
    for u in (u for c in readings for u in c.cpus):
        by_cpu.setdefault(u.cpu, []).append(u)
    threads = [merged(rows, 2, summed=("migrations",)) for rows in by_thread.values()]
    cpus = [merged(rows, 1) for rows in by_cpu.values()]
    rtt: dict[int, float] = {}
    for pair in dict.fromkeys(p for c in readings for p, _ in c.rtt_us):
        us = mean(u for c in readings for p, u in c.rtt_us if p == pair)
        if us is not None:  # never None: the pair is in some reading
            rtt[pair] = us
    return Costs(
        threads=tuple(threads),
        cpus=tuple(cpus),
        rtt_us=tuple(rtt.items()),
        system_share_pct=mean(c.system_share_pct for c in readings),
        cpu_us_per_round=mean(c.cpu_us_per_round for c in readings),
        cpu_pressure_avg10=readings[-1].cpu_pressure_avg10,
        flags=tuple(dict.fromkeys(f for c in readings for f in c.flags)),
        missing=readings[-1].missing,
    )
