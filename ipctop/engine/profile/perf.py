"""Can perf profile the pairs' CPUs here? If not, which reason, and the fix.

Each check names one cause the user can act on: no perf binary, a perf that
does not run (Debian's wrapper without the kernel's perf), the syscall
missing or filtered (a container's seccomp), perf_event_paranoid too high for
CPU-wide sampling without root, kernel symbols hidden by kptr_restrict. The
syscall itself is asked directly (one software event, opened and closed), so
the verdict is the kernel's, not a guess from sysctls alone.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

# perf_event_open has no libc wrapper; its number differs per architecture.
_SYSCALL = {"x86_64": 298, "aarch64": 241, "i686": 336, "ppc64le": 319, "s390x": 331}
_PERF_TYPE_SOFTWARE = 1
_PERF_COUNT_SW_CPU_CLOCK = 0
_PERF_FLAG_FD_CLOEXEC = 8
_ATTR_DISABLED = 1  # bit 0 of the flags word
_CAP_SYS_ADMIN = 21
_CAP_PERFMON = 38


class _Attr(ctypes.Structure):
    # PERF_ATTR_SIZE_VER0: the first 64 bytes, which every kernel accepts.
    _fields_ = [
        ("type", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("config", ctypes.c_uint64),
        ("sample_period", ctypes.c_uint64),
        ("sample_type", ctypes.c_uint64),
        ("read_format", ctypes.c_uint64),
        ("flags", ctypes.c_uint64),
        ("wakeup_events", ctypes.c_uint32),
        ("bp_type", ctypes.c_uint32),
        ("config1", ctypes.c_uint64),
    ]


@dataclass(frozen=True)
class PerfStatus:
    """ok, or the one line that says why not and how to fix it."""

    ok: bool
    reason: str | None = None  # short: "perf missing", "not permitted", ...
    line: str | None = None  # the one line for the user, with the fix
    perf: str | None = None  # path of the binary
    version: str | None = None  # "6.1.187"
    event: str = "cpu-clock"
    warnings: tuple[str, ...] = field(default=())  # profiling works, but less (kptr)

    @property
    def why(self) -> str:
        """For "n/a (why)"."""
        return self.reason or "ok"


def _sysctl(name: str, proc: str) -> int | None:
    try:
        return int(Path(proc, "sys/kernel", name).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _has_cap(bit: int, proc: str) -> bool:
    try:
        for line in Path(proc, "self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> bit & 1)
    except (OSError, ValueError, IndexError):
        pass  # no status file: treated as no capability, the syscall probe decides
    return False


def privileged(proc: str = "/proc") -> bool:
    """Root-equivalent for perf: CAP_PERFMON (5.8+) or CAP_SYS_ADMIN."""
    return _has_cap(_CAP_PERFMON, proc) or _has_cap(_CAP_SYS_ADMIN, proc)


def probe_syscall(cpu: int) -> int:
    """0 when a CPU-wide software event opens on `cpu`, else the errno."""
    number = _SYSCALL.get(platform.machine())
    if number is None:
        return 0  # unknown architecture: let perf itself report
    libc = ctypes.CDLL(None, use_errno=True)
    attr = _Attr(
        type=_PERF_TYPE_SOFTWARE,
        size=ctypes.sizeof(_Attr),
        config=_PERF_COUNT_SW_CPU_CLOCK,
        flags=_ATTR_DISABLED,
    )
    fd = libc.syscall(
        ctypes.c_long(number),
        ctypes.byref(attr),
        ctypes.c_int(-1),
        ctypes.c_int(cpu),
        ctypes.c_int(-1),
        ctypes.c_ulong(_PERF_FLAG_FD_CLOEXEC),
    )
    if fd < 0:
        return ctypes.get_errno()
    os.close(fd)
    return 0


def has_hardware_pmu(sys_root: str = "/sys") -> bool:
    """A core PMU is registered: cycles can be sampled, not just the clock."""
    devices = Path(sys_root, "bus/event_source/devices")
    return any((devices / name).exists() for name in ("cpu", "cpu_core", "armv8_pmuv3_0"))


def kernel_symbols_hidden(proc: str = "/proc") -> bool:
    """kptr_restrict shows every /proc/kallsyms address as zero to this user."""
    try:
        with open(Path(proc, "kallsyms")) as f:
            first = f.readline().split()
    except OSError:
        return True
    return not first or int(first[0], 16) == 0


def perf_version(perf: str) -> tuple[str | None, str | None]:
    """(version, None) or (None, perf's own first error line)."""
    try:
        done = subprocess.run(
            [perf, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, str(exc)
    if done.returncode != 0:
        first = (done.stderr or done.stdout).strip().splitlines()
        return None, first[0] if first else f"exit {done.returncode}"
    # "perf version 6.1.187": the last word is the version.
    words = done.stdout.split()
    return (words[-1] if words else "unknown"), None


def perf_status(cpus: list[int], proc: str = "/proc", path: str | None = None) -> PerfStatus:
    """Whether `perf record -C cpus` can run here; every failure is one line."""
    perf = shutil.which("perf", path=path)
    if perf is None:
        return PerfStatus(
            False,
            "perf missing",
            "profile n/a: no perf binary on PATH; install it "
            "(Debian/Ubuntu: apt install linux-perf; Fedora: dnf install perf)",
        )
    version, error = perf_version(perf)
    if version is None:
        return PerfStatus(
            False,
            "perf does not run",
            f"profile n/a: {perf} does not run ({error}); install the perf "
            "that matches this kernel (Debian: apt install linux-perf)",
            perf=perf,
        )
    paranoid = _sysctl("perf_event_paranoid", proc)
    if paranoid is None:
        return PerfStatus(
            False,
            "no perf events",
            "profile n/a: this kernel has no perf events (no "
            "/proc/sys/kernel/perf_event_paranoid); it needs CONFIG_PERF_EVENTS",
            perf=perf,
            version=version,
        )
    err = probe_syscall(cpus[0] if cpus else 0)
    priv = privileged(proc)
    if err == errno.ENOSYS:
        return PerfStatus(
            False,
            "no syscall",
            "profile n/a: perf_event_open is not available (ENOSYS: a container "
            "filters it, or the kernel lacks it); allow it (docker: --cap-add PERFMON "
            "and a seccomp profile that permits perf_event_open)",
            perf=perf,
            version=version,
        )
    if err in (errno.EACCES, errno.EPERM):
        if priv or paranoid <= 0:
            line = (
                "profile n/a: perf_event_open is refused although perf_event_paranoid "
                f"is {paranoid} (a container's seccomp filter?); allow it "
                "(docker: --security-opt seccomp=... permitting perf_event_open)"
            )
            reason = "syscall blocked"
        else:
            line = (
                f"profile n/a: not permitted: kernel.perf_event_paranoid is {paranoid} and "
                "CPU-wide sampling needs 0 or lower without root; run as root or "
                "`sysctl -w kernel.perf_event_paranoid=0`"
            )
            reason = "not permitted"
        return PerfStatus(False, reason, line, perf=perf, version=version)
    if err:
        return PerfStatus(
            False,
            "perf events fail",
            f"profile n/a: perf_event_open failed: {os.strerror(err)}",
            perf=perf,
            version=version,
        )
    warnings = []
    if kernel_symbols_hidden(proc):
        kptr = _sysctl("kptr_restrict", proc)
        warnings.append(
            f"profile: kernel symbols hidden (kernel.kptr_restrict is {kptr}); kernel "
            "samples show as [unknown]; `sysctl -w kernel.kptr_restrict=0` or run as root"
        )
    event = "cycles" if has_hardware_pmu() else "cpu-clock"
    return PerfStatus(True, perf=perf, version=version, event=event, warnings=tuple(warnings))
