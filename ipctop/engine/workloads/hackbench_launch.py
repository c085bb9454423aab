"""hackbench's fixed run in process mode, through the launcher executable.

A task forked from ipctop's Python process gets a copy of its page tables and
tears them down when it exits, inside the timed span; rt-tests' small binary
never pays that, and the cost grows with ipctop's own size (BENCHMARKS.md).
So process mode runs native/launcher/hackbench_tasks.c, built beside the
extension, which forks the tasks itself. It dies with the thread that started
it and its tasks die with it (parent-death signals), however ipctop ends.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
from pathlib import Path

LAUNCHER = Path(__file__).resolve().parents[2] / "_hackbench_tasks"
_ERROR = re.compile(r"^error (\d+)$", re.M)


def launcher() -> Path | None:
    """The launcher, if the build made it (setup.py builds it with the extension)."""
    return LAUNCHER if os.access(LAUNCHER, os.X_OK) else None


def run_launched(
    groups: int, fds: int, loops: int, size: int, pipes: bool
) -> tuple[float, list[float], list[int]]:
    """Seconds, each group's seconds and each task's CPU; OSError as the
    extension's hackbench_run raises it (EINTR: a task or the launcher was
    killed by a signal)."""
    cmd = [str(LAUNCHER), str(os.getpid()), str(groups), str(fds), str(loops), str(size)]
    cmd.append("1" if pipes else "0")
    # Started from the calling thread, it inherits that thread's CPU set (on_cpus).
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate()
    finally:
        if proc.returncode is None:  # interrupted: its tasks follow it by their death signal
            proc.kill()
            proc.wait()
    if proc.returncode == 0:
        return _parse(out)
    failed = _ERROR.search(out)
    if failed:
        code = int(failed.group(1))
        raise OSError(code, os.strerror(code))
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name
        raise OSError(errno.EINTR, f"the hackbench launcher was killed by {name}")
    raise OSError(errno.EIO, f"the hackbench launcher exited {proc.returncode}: {err.strip()}")


def _parse(out: str) -> tuple[float, list[float], list[int]]:
    lines = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    try:
        seconds = float(lines["seconds"])
        times = [float(x) for x in lines["groups"].split()]
        cpus = [int(x) for x in lines["cpus"].split()]
    except (KeyError, ValueError) as exc:
        raise OSError(errno.EIO, f"the hackbench launcher said {out[:80]!r}") from exc
    return seconds, times, cpus
