"""Facts about the machine a run happens on, recorded with every result.

A number without its kernel, CPU model, clock and limits cannot be compared
with anything: the threads behind ipctop lost days to a tick change and to
pairs on the wrong CPU. Everything here is read once per run, never per sample.
"""

from __future__ import annotations

import os
import platform
import resource
from dataclasses import dataclass, field

import ipctop
from ipctop.cpus import SYSFS_CPU, format_cpu_list, read_topology
from ipctop.kernel_files import read_kernel_file


@dataclass(frozen=True)
class IpcLimits:
    """Kernel limits that bound how many IPC objects and fds a run may create.

    Each is None when it could not be read (no such sysctl in this kernel or
    container).
    """

    msgmni: int | None = None
    msgmnb: int | None = None
    msgmax: int | None = None
    semmsl: int | None = None
    semmns: int | None = None
    semopm: int | None = None
    semmni: int | None = None
    shmmni: int | None = None
    mq_queues_max: int | None = None
    mq_msg_max: int | None = None
    mq_msgsize_max: int | None = None
    file_max: int | None = None
    nofile_soft: int | None = None
    pipe_max_size: int | None = None


def _read_ints(path: str) -> list[int] | None:
    text = read_kernel_file(path)
    if text is None:
        return None
    try:
        return [int(x) for x in text.split()]
    except ValueError:
        return None


def _read_int(path: str) -> int | None:
    values = _read_ints(path)
    return values[0] if values and len(values) == 1 else None


def _nofile_soft() -> int | None:
    # Linux caps RLIMIT_NOFILE at fs.nr_open, so "unlimited" means a platform
    # where the number says nothing useful; show it as n/a.
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def read_ipc_limits(proc: str = "/proc") -> IpcLimits:
    """Read the SysV, POSIX mq, fd and pipe limits under ``proc``/sys."""
    sysctl = os.path.join(proc, "sys")
    sem = _read_ints(os.path.join(sysctl, "kernel", "sem"))
    semmsl, semmns, semopm, semmni = sem if sem is not None and len(sem) == 4 else (None,) * 4
    return IpcLimits(
        msgmni=_read_int(os.path.join(sysctl, "kernel", "msgmni")),
        msgmnb=_read_int(os.path.join(sysctl, "kernel", "msgmnb")),
        msgmax=_read_int(os.path.join(sysctl, "kernel", "msgmax")),
        semmsl=semmsl,
        semmns=semmns,
        semopm=semopm,
        semmni=semmni,
        shmmni=_read_int(os.path.join(sysctl, "kernel", "shmmni")),
        mq_queues_max=_read_int(os.path.join(sysctl, "fs", "mqueue", "queues_max")),
        mq_msg_max=_read_int(os.path.join(sysctl, "fs", "mqueue", "msg_max")),
        mq_msgsize_max=_read_int(os.path.join(sysctl, "fs", "mqueue", "msgsize_max")),
        file_max=_read_int(os.path.join(sysctl, "fs", "file-max")),
        nofile_soft=_nofile_soft(),
        pipe_max_size=_read_int(os.path.join(sysctl, "fs", "pipe-max-size")),
    )


def _cpu_model(proc: str) -> str:
    """The CPU's name from /proc/cpuinfo, whatever the architecture calls it."""
    text = read_kernel_file(os.path.join(proc, "cpuinfo")) or ""
    found: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key = key.strip().lower()
        if sep and value.strip() and key not in found:
            found[key] = value.strip()
    # x86 "model name"; older arm "Processor"; mips "cpu model"; powerpc "cpu".
    for key in ("model name", "processor", "cpu model", "cpu"):
        name = found.get(key)
        if name and not name.isdigit():
            return name
    # arm64 gives only ids; they still tell two boxes apart.
    if "cpu implementer" in found and "cpu part" in found:
        return (
            f"{platform.machine()} implementer {found['cpu implementer']} part {found['cpu part']}"
        )
    return f"unknown {platform.machine()}"


@dataclass(frozen=True)
class BoxFacts:
    kernel_release: str
    kernel_version: str
    hostname: str
    cpu_model: str
    online: list[int]
    allowed: list[int]
    isolated: list[int]
    smt_siblings: list[list[int]]  # one group per physical core, online CPUs only
    smt: bool
    # Keyword-only with defaults: a record older than them reads; the written order stays.
    limits: IpcLimits = field(default_factory=IpcLimits, kw_only=True)
    governor: str | None = field(default=None, kw_only=True)  # scaling_governor, first allowed CPU
    clocksource: str | None = field(default=None, kw_only=True)
    # kernel.numa_balancing: on a NUMA box it unmaps pages to learn where they are
    # used, and each pass flushes every CPU the process runs on (TLB shootdown IPIs).
    numa_balancing: int | None = field(default=None, kw_only=True)
    python: str
    ipctop_version: str
    sysv_ipc: bool  # /proc/sysvipc/msg exists (kernel built with CONFIG_SYSVIPC)


def _first_line(path: str) -> str | None:
    text = read_kernel_file(path)
    if text is None:
        return None
    line = text.strip()
    return line or None


def read_box(proc: str = "/proc", sysfs: str = SYSFS_CPU) -> BoxFacts:
    """Gather the facts once, at the start of a run."""
    topo = read_topology(sysfs)
    uname = os.uname()
    groups = sorted({topo.smt_siblings_of(c) for c in topo.online})
    first_allowed = topo.allowed[0] if topo.allowed else 0
    # The clocksource lives next to the cpu directory: /sys/devices/system/clocksource.
    clocksource_file = os.path.join(
        os.path.dirname(os.path.normpath(sysfs)),
        "clocksource",
        "clocksource0",
        "current_clocksource",
    )
    return BoxFacts(
        kernel_release=uname.release,
        kernel_version=uname.version,
        hostname=uname.nodename,
        cpu_model=_cpu_model(proc),
        online=list(topo.online),
        allowed=list(topo.allowed),
        isolated=list(topo.isolated),
        smt_siblings=[list(g) for g in groups],
        smt=topo.has_smt,
        limits=read_ipc_limits(proc),
        governor=_first_line(
            os.path.join(sysfs, f"cpu{first_allowed}", "cpufreq", "scaling_governor")
        ),
        clocksource=_first_line(clocksource_file),
        numa_balancing=_read_int(os.path.join(proc, "sys", "kernel", "numa_balancing")),
        python=platform.python_version(),
        ipctop_version=ipctop.__version__,
        sysv_ipc=os.path.exists(os.path.join(proc, "sysvipc", "msg")),
    )


def _n(value: int | None) -> str:
    return "n/a" if value is None else str(value)


def _balancing(value: int | None) -> str:
    if value is None:
        return "n/a (no kernel.numa_balancing)"
    return f"{'off' if value == 0 else 'on'} (kernel.numa_balancing {value})"


def describe(facts: BoxFacts) -> list[str]:
    """Human lines for ``ipctop check`` and the head of text reports."""
    lim = facts.limits
    isolated = format_cpu_list(facts.isolated) or "none"
    smt = "on" if facts.smt else "off"
    if facts.smt:
        smt += " (" + " ".join(",".join(map(str, g)) for g in facts.smt_siblings if len(g) > 1)
        smt += ")"
    lines = [
        f"kernel {facts.kernel_release} · {facts.cpu_model} · host {facts.hostname}",
        f"CPUs: online {format_cpu_list(facts.online) or 'none'}, "
        f"allowed {format_cpu_list(facts.allowed) or 'none'}, isolated {isolated}, SMT {smt}",
        f"IPC limits: msgmni {_n(lim.msgmni)} msgmnb {_n(lim.msgmnb)} msgmax {_n(lim.msgmax)}"
        f" · sem {_n(lim.semmsl)} {_n(lim.semmns)} {_n(lim.semopm)} {_n(lim.semmni)}"
        " (semmsl semmns semopm semmni)"
        f" · shmmni {_n(lim.shmmni)}",
        f"POSIX mq: queues_max {_n(lim.mq_queues_max)} msg_max {_n(lim.mq_msg_max)}"
        f" msgsize_max {_n(lim.mq_msgsize_max)}"
        f" · file-max {_n(lim.file_max)} · nofile {_n(lim.nofile_soft)}"
        f" · pipe-max-size {_n(lim.pipe_max_size)}",
        "cpufreq governor: " + (facts.governor if facts.governor else "n/a (no cpufreq in sysfs)"),
        "clocksource: " + (facts.clocksource if facts.clocksource else "n/a (not in sysfs)"),
        "NUMA balancing: " + _balancing(facts.numa_balancing),
        "SysV IPC: "
        + ("yes" if facts.sysv_ipc else "n/a (no /proc/sysvipc; kernel without CONFIG_SYSVIPC?)"),
        f"python {facts.python} · ipctop {facts.ipctop_version}",
    ]
    return lines
