"""Which CPUs exist, which we may use, and which ones a run should use.

The threads behind the original benchmarks were misread more than once because
pairs were not where the user thought: on an SMT sibling, on a CPU outside the
affinity mask, on an isolated CPU. This module reads the topology from sysfs and
turns a user's ``--cpus`` into a checked, ordered list, so that the rest of
ipctop never has to guess.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ipctop.errors import UsageError
from ipctop.kernel_files import read_kernel_file

SYSFS_CPU = "/sys/devices/system/cpu"

# One element of a Linux cpu list: "3", "0-7" or "0-7:2" (every second CPU).
_ELEMENT = re.compile(r"^(\d+)(?:-(\d+)(?::(\d+))?)?$")


# Linux's NR_CPUS tops out at 8192 today; far above it, an id is a typo or an attack.
# Checked before a range is expanded: `--cpus 0-999999999` must not build a billion ints.
MAX_CPU_ID = 65535


class CpuSpecError(UsageError):
    """A ``--cpus`` value that cannot be used; the message names the allowed set."""


class CpuIdTooLarge(ValueError):
    """A CPU id, or a list's total, beyond any Linux box (see MAX_CPU_ID)."""


def _expand_cpu_list(text: str) -> list[int]:
    """Expand a cpu list in the order written, keeping repeats."""
    text = text.strip()
    if not text:
        return []
    out: list[int] = []
    for element in text.split(","):
        m = _ELEMENT.match(element.strip())
        if m is None:
            raise ValueError(f"malformed CPU list element {element!r} in {text!r}")
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) is not None else first
        stride = int(m.group(3)) if m.group(3) is not None else 1
        if last < first:
            raise ValueError(f"descending range {element!r} in {text!r}")
        if stride < 1:
            raise ValueError(f"stride must be at least 1 in {element!r}")
        if last > MAX_CPU_ID:
            raise CpuIdTooLarge(f"CPU {last} is above the highest id Linux has ({MAX_CPU_ID})")
        ids = range(first, last + 1, stride)
        if len(out) + len(ids) > MAX_CPU_ID + 1:  # repeats: "0-65535,0-65535,..."
            raise CpuIdTooLarge(f"the list names more than {MAX_CPU_ID + 1} CPUs")
        out.extend(ids)
    return out


def parse_cpu_list(text: str) -> list[int]:
    """Parse Linux cpu-list syntax ("0-3,8", "0-7:2"); sorted and unique.

    An empty (or all-blank) string is the empty list, as sysfs writes it for an
    empty set (``isolated`` on most machines). Raises ValueError when malformed.
    """
    return sorted(set(_expand_cpu_list(text)))


def format_cpu_list(cpus: Iterable[int]) -> str:
    """Compact form of a set of CPUs: [0, 1, 2, 3, 8] -> "0-3,8"; empty -> ""."""
    ordered = sorted(set(cpus))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def _describe_set(cpus: Iterable[int]) -> str:
    text = format_cpu_list(cpus)
    return text if text else "none"


@dataclass(frozen=True)
class Topology:
    """CPU facts from sysfs plus this process's affinity mask.

    ``siblings`` maps each online CPU to its SMT thread siblings (itself
    included). ``core_id`` and ``package_id`` hold only what sysfs gave; a CPU
    missing from them had no readable topology (typical inside a container).
    """

    online: tuple[int, ...]
    allowed: tuple[int, ...]
    isolated: tuple[int, ...]
    siblings: dict[int, tuple[int, ...]] = field(default_factory=dict, hash=False)
    core_id: dict[int, int] = field(default_factory=dict, hash=False)
    package_id: dict[int, int] = field(default_factory=dict, hash=False)
    # CPUs the kernel knows about (online or not); lets us tell "offline" from
    # "no such CPU" in messages.
    present: tuple[int, ...] = ()

    def smt_siblings_of(self, cpu: int) -> tuple[int, ...]:
        """The SMT threads sharing cpu's core, cpu included; (cpu,) if unknown."""
        return self.siblings.get(cpu, (cpu,))

    @property
    def has_smt(self) -> bool:
        return any(len(s) > 1 for s in self.siblings.values())


def _read_list(path: str) -> list[int] | None:
    text = read_kernel_file(path)
    return None if text is None else parse_cpu_list(text)


def _read_int(path: str) -> int | None:
    text = read_kernel_file(path)
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        return None


def _cpu_dirs(sysfs: str) -> list[int]:
    try:
        names = os.listdir(sysfs)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []
    return sorted(int(n[3:]) for n in names if n.startswith("cpu") and n[3:].isdigit())


def read_topology(sysfs: str = SYSFS_CPU, allowed: Iterable[int] | None = None) -> Topology:
    """Read the CPU topology under ``sysfs``; ``allowed`` defaults to our affinity.

    Every file may be missing (containers often mask /sys); the fallbacks then
    treat each allowed CPU as online, unisolated, its own core.
    """
    allowed_t = tuple(sorted(set(os.sched_getaffinity(0) if allowed is None else allowed)))
    online = _read_list(os.path.join(sysfs, "online"))
    if online is None:
        online = _cpu_dirs(sysfs) or list(allowed_t)
    present = _read_list(os.path.join(sysfs, "present"))
    if present is None:
        present = sorted(set(_cpu_dirs(sysfs)) | set(online))
    isolated = _read_list(os.path.join(sysfs, "isolated")) or []

    siblings: dict[int, tuple[int, ...]] = {}
    core_id: dict[int, int] = {}
    package_id: dict[int, int] = {}
    for cpu in online:
        topo_dir = os.path.join(sysfs, f"cpu{cpu}", "topology")
        sib = _read_list(os.path.join(topo_dir, "thread_siblings_list"))
        siblings[cpu] = tuple(sib) if sib else (cpu,)
        core = _read_int(os.path.join(topo_dir, "core_id"))
        if core is not None:
            core_id[cpu] = core
        package = _read_int(os.path.join(topo_dir, "physical_package_id"))
        if package is not None:
            package_id[cpu] = package

    return Topology(
        online=tuple(online),
        allowed=allowed_t,
        isolated=tuple(isolated),
        siblings=siblings,
        core_id=core_id,
        package_id=package_id,
        present=tuple(present),
    )


def default_cpus(topo: Topology) -> list[int]:
    """CPUs a run uses when none are named: one thread per physical core first.

    Adding CPUs in this order measures real cores before SMT siblings, so a
    scaling curve does not mix "another core" with "another thread of a busy
    core". Isolated CPUs are left out: they were set aside for something else.
    """
    online = set(topo.online)
    isolated = set(topo.isolated)
    usable = [c for c in topo.allowed if c in online and c not in isolated]
    if not usable:
        return list(topo.allowed)
    usable_set = set(usable)

    def rank(cpu: int) -> tuple[int, int]:
        # The thread index counts only usable siblings: if the core's first
        # thread is outside our mask, the next one is the core's first for us.
        mates = sorted(c for c in topo.smt_siblings_of(cpu) if c in usable_set)
        return (mates.index(cpu), cpu)

    return sorted(usable, key=rank)


def choose_cpus(spec: str | None, topo: Topology) -> list[int]:
    """Turn ``--cpus`` into the list of CPUs to use, in the order given.

    None means the default (see default_cpus). An isolated CPU is accepted when
    named: running on a quiet CPU on purpose is what isolation is for. isolcpus
    also drops such CPUs from the inherited affinity mask, so they are accepted
    even when outside ``allowed``; a cpuset that forbids them still shows up
    when the workers pin.
    """
    if spec is None:
        return default_cpus(topo)
    allowed_text = _describe_set(topo.allowed)
    try:
        wanted = _expand_cpu_list(spec)
    except CpuIdTooLarge as exc:
        raise CpuSpecError(f"--cpus: {exc}; allowed CPUs: {allowed_text}") from None
    except ValueError:
        wanted = []
    if not wanted:
        raise CpuSpecError(
            f"--cpus: malformed list {spec!r} (expected e.g. 0-3,8); allowed CPUs: {allowed_text}"
        )
    online = set(topo.online)
    allowed = set(topo.allowed)
    isolated = set(topo.isolated)
    chosen: list[int] = []
    for cpu in wanted:
        if cpu in chosen:
            continue
        if cpu not in online and cpu in topo.present:
            raise CpuSpecError(f"--cpus: CPU {cpu} is offline; allowed CPUs: {allowed_text}")
        if cpu not in allowed and not (cpu in isolated and cpu in online):
            raise CpuSpecError(f"--cpus: CPU {cpu} is not in the allowed set {allowed_text}")
        chosen.append(cpu)
    return chosen
