"""Boot one guest with virtme-ng, run a command in it, and always take it down.

The guest sees the host's root file system read-only (so this checkout, its
venv and the native extension are there at the same paths) and one
read-write folder, `out`, where it leaves what the host reads back.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass

from .accel import Accel
from .needs import find_vng
from .topology import LabTopology

STARTED = "guest-started"  # the guest writes it first: the host's boot time ends there


@dataclass(frozen=True)
class GuestRun:
    returncode: int | None  # None: timed out and killed
    boot_seconds: float | None  # launch to the guest's first command; None if it never ran
    total_seconds: float
    log: str  # vng's stdout and stderr
    command: tuple[str, ...]
    boot_hung: bool = False  # killed at boot_timeout before its first command


def vng_command(
    kernel: str,
    topo: LabTopology,
    accel: Accel,
    out: str,
    guest_argv: list[str],
    numa_balancing: bool = False,
) -> list[str]:
    vng = find_vng()
    if vng is None:
        raise RuntimeError("lab: vng not found (pip install virtme-ng)")
    qemu = f"-cpu {accel.cpu_model} -smp {topo.smp()}"
    cmd = [vng, "-r", kernel, "--cpus", str(topo.cpus), "--memory", f"{topo.memory_mb}M"]
    cmd += topo.vng_numa()
    if accel.emulated:
        cmd.append("--disable-kvm")
    # The kernel's console at warning level goes to vng.log: a guest that stops making
    # progress (soft lockup, RCU stall, hung task, OOM) says why there. Twice a
    # 64-CPU guest went silent for 15 min with nothing to read.
    cmd += ["--verbose", "--append", "loglevel=4"]
    # Off unless asked: automatic NUMA balancing unmaps the pages of a process whose
    # threads span nodes, and each pass is a TLB shootdown that waits for every vCPU
    # running it. Under TCG 64 vCPUs share the host's few CPUs: a 64-CPU guest's
    # shootdowns were 262,198 after 395 s of `check` with it on, 8,774 with it off.
    cmd += ["--append", f"numa_balancing={'enable' if numa_balancing else 'disable'}"]
    cmd += ["--rwdir", out, f"--qemu-opts={qemu}", "--"]
    # The guest's shell marks the start, then runs the command.
    started = os.path.join(out, STARTED)
    return cmd + ["sh", "-c", f'date +%s > {started} && exec "$@"', "lab", *guest_argv]


def run(
    kernel: str,
    topo: LabTopology,
    accel: Accel,
    out: str,
    guest_argv: list[str],
    timeout: float,
    boot_timeout: float | None = None,
    numa_balancing: bool = False,
) -> GuestRun:
    os.makedirs(out, exist_ok=True)
    started = os.path.join(out, STARTED)
    if os.path.exists(started):
        os.unlink(started)
    cmd = vng_command(kernel, topo, accel, out, guest_argv, numa_balancing)
    env = dict(os.environ)
    # vng runs virtme-run from PATH; in a venv that is beside vng, not on PATH.
    env["PATH"] = os.path.dirname(cmd[0]) + os.pathsep + env.get("PATH", "")
    log_path = os.path.join(out, "vng.log")
    t0 = time.monotonic()
    boot: float | None = None
    hung = False
    with open(log_path, "wb") as log:
        # Its own session: a kill takes vng, virtme-run and qemu together.
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
            start_new_session=True,
        )  # fmt: skip
        try:
            while proc.poll() is None and time.monotonic() - t0 < timeout:
                if boot is None and os.path.exists(started):
                    boot = time.monotonic() - t0
                if boot is None and boot_timeout is not None:
                    # A TCG boot now and then never reaches its command (1 of 4
                    # quiet 64-CPU boots here): waiting out --timeout wastes the run.
                    if time.monotonic() - t0 > boot_timeout:
                        hung = True
                        break
                time.sleep(0.5)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                rc = None
            else:
                rc = proc.returncode
                _reap_group(proc.pid)
    if boot is None and os.path.exists(started):
        boot = time.monotonic() - t0  # ran, but between two polls: an upper bound
    with open(log_path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return GuestRun(rc, boot, time.monotonic() - t0, text, tuple(cmd), hung and boot is None)


def _reap_group(pgid: int) -> None:
    """qemu exits with vng; anything of the group still there is killed, not left behind."""
    # The usual case is an empty group (ProcessLookupError): nothing was left.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
