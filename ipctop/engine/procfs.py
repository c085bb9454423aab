"""Readers of /proc that the sampler calls every interval.

Each reader opens one file, reads it whole and parses it; nothing is cached,
nothing is kept open. Every reader takes a ``proc`` root so tests can point it
at a fixture tree. A source this kernel does not provide reads as None; the
caller asks ``missing_reason`` once, at start, what to print instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import NamedTuple

# -- plumbing -----------------------------------------------------------------


def _read(path: str) -> bytes | None:
    """The file's bytes, or None when it (or the task it belongs to) is gone."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, ProcessLookupError, NotADirectoryError):
        return None


# -- /proc/stat -----------------------------------------------------------------


@dataclass(frozen=True)
class CpuTicks:
    """One cpuN line of /proc/stat, in clock ticks since boot."""

    user: int
    nice: int
    system: int
    idle: int
    iowait: int
    irq: int
    softirq: int
    steal: int

    @property
    def total(self) -> int:
        # guest and guest_nice are already inside user and nice.
        return (
            self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
        )


def read_ctxt(proc: str = "/proc") -> int | None:
    """Context switches on all CPUs since boot (the ``ctxt`` line of /proc/stat)."""
    return _ctxt(_read(os.path.join(proc, "stat")))


def _ctxt(data: bytes | None) -> int | None:
    line = _line(data, b"ctxt ")
    return None if line is None else int(line[5:])


def read_stat(proc: str = "/proc") -> tuple[dict[int, CpuTicks], int | None]:
    """read_cpu_ticks and read_ctxt from one read of /proc/stat. A sample read
    the file twice for them, and the kernel sums every interrupt's count over
    every CPU each time it makes the file."""
    data = _read(os.path.join(proc, "stat"))
    return _cpu_ticks(data), _ctxt(data)


def read_cpu_ticks(proc: str = "/proc") -> dict[int, CpuTicks]:
    """Per-CPU tick counters from /proc/stat, keyed by CPU number; {} if missing.

    Offline CPUs have no line, so the keys are the online CPUs.
    """
    return _cpu_ticks(_read(os.path.join(proc, "stat")))


def _cpu_ticks(data: bytes | None) -> dict[int, CpuTicks]:
    if data is None:
        return {}
    out: dict[int, CpuTicks] = {}
    for line in data.split(b"\n"):
        if not line.startswith(b"cpu") or line.startswith(b"cpu "):
            continue
        parts = line.split()
        # Kernels before 2.6.11 lack steal; pad so old boxes still parse.
        values = [int(v) for v in parts[1:9]] + [0] * (8 - len(parts[1:9]))
        out[int(parts[0][3:])] = CpuTicks(*values)
    return out


def cpu_percent_split(
    prev: dict[int, CpuTicks], cur: dict[int, CpuTicks]
) -> dict[int, tuple[float, float, float, float]]:
    """Percent (user, system, softirq, idle) per CPU between two readings.

    user includes nice, system includes hard irq, idle includes iowait (an
    idle CPU waiting on a disk is still free for our pairs). Steal is the rest
    up to 100. CPUs present in only one reading, or with no ticks in between,
    are left out: there is nothing to divide by.
    """
    out: dict[int, tuple[float, float, float, float]] = {}
    for cpu, b in cur.items():
        a = prev.get(cpu)
        if a is None:
            continue
        # idle and iowait can step back on NO_HZ kernels; clamp, never go negative.
        d = CpuTicks(*(max(0, getattr(b, f) - getattr(a, f)) for f in _TICK_FIELDS))
        total = d.total
        if total <= 0:
            continue
        out[cpu] = (
            100.0 * (d.user + d.nice) / total,
            100.0 * (d.system + d.irq) / total,
            100.0 * d.softirq / total,
            100.0 * (d.idle + d.iowait) / total,
        )
    return out


_TICK_FIELDS = tuple(CpuTicks.__dataclass_fields__)


def steal_percent(prev: dict[int, CpuTicks], cur: dict[int, CpuTicks]) -> dict[int, float]:
    """Percent of each CPU's ticks the hypervisor gave another guest between two
    readings (steal: this vCPU wanted to run and did not). CPUs in only one
    reading, or with no ticks in between, are left out, as in cpu_percent_split."""
    out: dict[int, float] = {}
    for cpu, b in cur.items():
        a = prev.get(cpu)
        if a is None:
            continue
        d = CpuTicks(*(max(0, getattr(b, f) - getattr(a, f)) for f in _TICK_FIELDS))
        if d.total > 0:
            out[cpu] = 100.0 * d.steal / d.total
    return out


def cpu_pressure_total_us(proc: str = "/proc") -> float | None:
    """PSI's cumulative "some" stall of /proc/pressure/cpu, in microseconds; None
    without PSI. Two readings give the share of a window some task waited for a
    CPU, which avg10 (a 10 s decaying mean) cannot say of a 0.5 s window."""
    pressure = read_cpu_pressure(proc)
    return None if pressure is None else pressure.get("some", {}).get("total")


def cpufreq_cpus(sysfs: str = "/sys/devices/system/cpu") -> tuple[int, ...]:
    """The CPUs whose clock cpufreq reports (scaling_cur_freq); () in most VMs."""
    try:
        names = os.listdir(sysfs)
    except OSError:
        return ()
    return tuple(
        sorted(
            int(n[3:])
            for n in names
            if n.startswith("cpu")
            and n[3:].isdigit()
            and os.path.exists(os.path.join(sysfs, n, "cpufreq", "scaling_cur_freq"))
        )
    )


def read_cpu_mhz(cpus: tuple[int, ...], sysfs: str = "/sys/devices/system/cpu") -> dict[int, float]:
    """Each CPU's current clock in MHz (cpufreq's scaling_cur_freq is in kHz);
    a CPU whose file is gone or unreadable is left out."""
    out: dict[int, float] = {}
    for cpu in cpus:
        try:
            data = _read(os.path.join(sysfs, f"cpu{cpu}", "cpufreq", "scaling_cur_freq"))
        except OSError:
            continue  # EBUSY/EIO from a driver that cannot say now: no figure this window
        if data is not None and data.strip().isdigit():
            out[cpu] = int(data) / 1000.0
    return out


# -- /proc/interrupts ------------------------------------------------------------

# Matched on the description, not the label: x86 says "RES"/"CAL", arm64
# "IPI0"/"IPI1", and others differ again, but the words are the same.
_IPI_KINDS = (
    ("resched", b"rescheduling interrupts"),
    ("callfunc", b"function call interrupts"),
)


def read_ipis(proc: str = "/proc") -> dict[str, dict[int, int]] | None:
    """IPIs received per CPU since boot: {"resched": {cpu: n}, "callfunc": {...}}.

    Rows whose description matches (case-insensitively) are summed, so a kernel
    that splits function-call IPIs over two rows still adds up. A kind with no
    row is absent from the result; None when /proc/interrupts is missing.
    """
    data = _read(os.path.join(proc, "interrupts"))
    if data is None:
        return None
    lines = data.split(b"\n")
    # The header names the columns; offline CPUs are skipped, so "CPU0 CPU2" happens.
    cpus = [int(tok[3:]) for tok in lines[0].split() if tok.startswith(b"CPU")]
    out: dict[str, dict[int, int]] = {}
    for line in lines[1:]:
        low = line.lower()
        for kind, words in _IPI_KINDS:
            if words not in low:
                continue
            counts = line.split(b":", 1)[1].split()[: len(cpus)]
            per_cpu = out.setdefault(kind, dict.fromkeys(cpus, 0))
            for cpu, n in zip(cpus, counts):
                per_cpu[cpu] += int(n)
    return out


# -- one task ---------------------------------------------------------------------


class TaskSchedStat(NamedTuple):
    """/proc/<pid>/task/<tid>/schedstat: time on CPU, time waiting to run, slices."""

    run_ns: int
    wait_ns: int
    timeslices: int


@dataclass(frozen=True)
class TaskStat:
    """Where a thread last ran and how often it gave up the CPU."""

    voluntary: int  # context switches because it blocked (a wait in msgrcv, semop, ...)
    involuntary: int  # preempted while runnable
    last_cpu: int  # CPU it last ran on (field 39 of stat)
    utime_ticks: int
    stime_ticks: int
    # Read only with detail (read_tasks): None when not asked for or the file is missing.
    sched: TaskSchedStat | None = None
    migrations: int | None = None


def _task_dir(proc: str, pid: int, tid: int) -> str:
    return os.path.join(proc, str(pid), "task", str(tid))


def _status_field(status: bytes, name: bytes) -> int | None:
    at = status.find(name)
    if at < 0:
        return None
    start = at + len(name)
    end = status.find(b"\n", start)
    return int(status[start : end if end >= 0 else None])


def read_task(pid: int, tid: int, proc: str = "/proc") -> TaskStat | None:
    """Read one thread's stat and status; None if the thread is gone."""
    task = _task_dir(proc, pid, tid)
    stat = _read(os.path.join(task, "stat"))
    status = _read(os.path.join(task, "status")) if stat is not None else None
    if stat is None or status is None:
        return None
    return TaskStat(*_status_switches(status, task), *_stat_fields(stat))


def _stat_fields(stat: bytes) -> tuple[int, int, int]:
    """(last CPU, utime, stime) from a stat file."""
    # comm may hold spaces and ")" itself; the last ")" ends it.
    fields = stat[stat.rindex(b")") + 2 :].split()
    # fields[0] is field 3 (state) of proc(5), so field n is fields[n - 3].
    return int(fields[36]), int(fields[11]), int(fields[12])


def _status_switches(status: bytes, task: str) -> tuple[int, int]:
    """(voluntary, involuntary) from a status file."""
    # Found by index, not by splitting every line: this runs per thread per sample.
    voluntary = _status_field(status, b"\nvoluntary_ctxt_switches:")
    involuntary = _status_field(status, b"\nnonvoluntary_ctxt_switches:")
    if voluntary is None or involuntary is None:
        raise ValueError(f"{task}/status has no ctxt_switches lines")
    return voluntary, involuntary


def read_schedstat_task(pid: int, tid: int, proc: str = "/proc") -> TaskSchedStat | None:
    """None when the file is absent (kernel without CONFIG_SCHED_INFO) or the task is gone."""
    data = _read(os.path.join(_task_dir(proc, pid, tid), "schedstat"))
    if data is None:
        return None
    run_ns, wait_ns, timeslices = (int(v) for v in data.split()[:3])
    return TaskSchedStat(run_ns, wait_ns, timeslices)


def read_migrations(pid: int, tid: int, proc: str = "/proc") -> int | None:
    """How often the thread moved between CPUs (``se.nr_migrations``).

    None when /proc/<pid>/task/<tid>/sched is absent (no CONFIG_SCHED_DEBUG) or
    the task is gone. For a pinned thread this should stay still.
    """
    line = _line(_read(os.path.join(_task_dir(proc, pid, tid), "sched")), b"se.nr_migrations")
    return None if line is None else int(line.rsplit(b":", 1)[1])


def _line(data: bytes | None, head: bytes) -> bytes | None:
    """The line that starts with `head`, looked for after the file's first line
    (in both files read so a header or another record)."""
    if data is None:
        return None
    start = data.find(b"\n" + head)
    if start < 0:
        return None
    end = data.find(b"\n", start + 1)
    return data[start + 1 : end if end > 0 else None]


# -- scheduler-wide counters --------------------------------------------------------


@dataclass(frozen=True)
class CpuSchedStat:
    """One cpuN line of /proc/schedstat (version 15 and later)."""

    sched_count: int  # schedule() calls
    sched_goidle: int  # ... that switched to idle
    ttwu_count: int  # wake-ups of tasks to this CPU
    ttwu_local: int  # ... issued by this CPU itself (no IPI needed)
    rq_cpu_time_ns: int
    run_delay_ns: int
    pcount: int  # timeslices run


_MIN_SCHEDSTAT_VERSION = 15


def read_schedstat_cpus(proc: str = "/proc") -> dict[int, CpuSchedStat] | None:
    """Per-CPU scheduler counters; None when missing (no CONFIG_SCHEDSTATS) or too old.

    The counters only move while kernel.sched_schedstats is 1; missing_reason
    says so.
    """
    data = _read(os.path.join(proc, "schedstat"))
    if data is None:
        return None
    lines = data.split(b"\n")
    head = lines[0].split()
    if (
        len(head) != 2
        or head[0] != b"version"
        or not head[1].isdigit()
        or int(head[1]) < _MIN_SCHEDSTAT_VERSION
    ):
        return None
    out: dict[int, CpuSchedStat] = {}
    for line in lines[1:]:
        if not line.startswith(b"cpu"):
            continue
        parts = line.split()
        # cpuN yld_count legacy sched_count sched_goidle ttwu_count ttwu_local
        #      rq_cpu_time run_delay pcount
        v = [int(x) for x in parts[1:10]]
        out[int(parts[0][3:])] = CpuSchedStat(v[2], v[3], v[4], v[5], v[6], v[7], v[8])
    return out


def read_cpu_pressure(proc: str = "/proc") -> dict[str, dict[str, float]] | None:
    """/proc/pressure/cpu as {"some": {"avg10": .., "avg60": .., "avg300": .., "total": ..}}.

    avgN are percentages, total is microseconds stalled (as a float, like the
    rest). "full" appears too on kernels that report it. None when PSI is
    missing or disabled (psi=0 makes the read fail with EOPNOTSUPP).
    """
    try:
        data = _read(os.path.join(proc, "pressure", "cpu"))
    except OSError:
        return None
    if data is None:
        return None
    out: dict[str, dict[str, float]] = {}
    for line in data.decode("ascii").splitlines():
        kind, *pairs = line.split()
        out[kind] = {k: float(v) for k, _, v in (p.partition("=") for p in pairs)}
    return out


# -- why something is missing ----------------------------------------------------------

# source -> (path under proc, why it would be absent)
_SOURCES: dict[str, tuple[str, str]] = {
    "stat": ("stat", "procfs without /proc/stat"),
    "interrupts": ("interrupts", "procfs without /proc/interrupts"),
    "task": ("thread-self/stat", "procfs without per-thread directories"),
    "schedstat_task": ("thread-self/schedstat", "kernel without CONFIG_SCHED_INFO"),
    "migrations": ("thread-self/sched", "kernel without CONFIG_SCHED_DEBUG"),
    "schedstat_cpus": ("schedstat", "kernel without CONFIG_SCHEDSTATS"),
    "cpu_pressure": ("pressure/cpu", "kernel without CONFIG_PSI"),
}

SOURCES = tuple(_SOURCES)


def missing_reason(source: str, proc: str = "/proc") -> str | None:
    """Why ``source`` gives no live numbers on this box, or None when it does.

    Per-thread sources are probed on the calling thread (``thread-self``).
    Callers print "n/a (<reason>)". Raises KeyError for an unknown source name.
    """
    rel, why = _SOURCES[source]
    shown = "/proc/" + rel.replace("thread-self", "<pid>/task/<tid>")
    try:
        data = _read(os.path.join(proc, rel))
    except OSError as e:
        if source == "cpu_pressure":
            return f"{shown} unreadable: {e.strerror} (PSI disabled; boot with psi=1)"
        return f"{shown} unreadable: {e.strerror}"
    if data is None:
        return f"no {shown} ({why})"
    if source == "migrations" and b"se.nr_migrations" not in data:
        return f"{shown} has no se.nr_migrations"
    if source == "schedstat_cpus":
        head = data.split(b"\n", 1)[0].split()
        if len(head) != 2 or head[0] != b"version" or not head[1].isdigit():
            return f"{shown} has no version line"
        if int(head[1]) < _MIN_SCHEDSTAT_VERSION:
            return f"{shown} version {int(head[1])} is older than {_MIN_SCHEDSTAT_VERSION}"
        enabled = _read(os.path.join(proc, "sys", "kernel", "sched_schedstats"))
        if enabled is not None and enabled.strip() == b"0":
            return "counters off: kernel.sched_schedstats=0 (sysctl -w kernel.sched_schedstats=1)"
    return None
