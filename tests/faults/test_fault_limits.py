"""Issue 16, parts 9 and 10: limits checked before a pair starts, and a pair that cannot
start is one line and exit 1 with everything removed.

Limits are set for real: kernel.msgmax in a private IPC namespace (`unshare -i`),
RLIMIT_NPROC with prlimit on an unprivileged uid (root is exempt from it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a private IPC namespace")


def one_line(r: subprocess.CompletedProcess, code: int) -> str:
    assert r.returncode == code, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.strip().splitlines() if not ln.startswith("ipctop: note:")]
    assert len(lines) == 1, r.stderr
    return lines[0]


@root
@pytest.mark.parametrize("workload", ["sysv-msg", "sysv-msg-shared"])
def test_msgmax_below_the_payload_is_exit_3_naming_msgmax(workload: str) -> None:
    if not shutil.which("unshare"):
        pytest.skip("unshare is not installed")
    script = (
        "echo 4 > /proc/sys/kernel/msgmax && "
        f"exec {sys.executable} -m ipctop run -w {workload} --cpus 0 --seconds 5"
    )
    r = subprocess.run(["unshare", "-i", "sh", "-c", script], capture_output=True, text=True,
                       cwd=ROOT, timeout=60)  # fmt: skip
    line = one_line(r, 3)
    assert "kernel.msgmax (4)" in line and "raise the sysctl kernel.msgmax" in line, line


@root
@pytest.mark.parametrize("mode", ["processes", "threads"])
def test_low_nproc_is_exit_3_naming_rlimit_nproc(mode: str) -> None:
    if not (shutil.which("setpriv") and shutil.which("prlimit")):
        pytest.skip("setpriv and prlimit (util-linux) are needed")
    # nobody, keeping only the right to read the interpreter under /root: the kernel
    # exempts uid 0 and CAP_SYS_RESOURCE from RLIMIT_NPROC.
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
           "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search",
           "prlimit", "--nproc=12", sys.executable, "-m", "ipctop", "run", "--mode", mode,
           "--pairs", "6", "--cpus", "0", "--seconds", "5"]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=60,
                       env={**os.environ, "XDG_RUNTIME_DIR": ""})  # fmt: skip
    line = one_line(r, 3)
    assert "RLIMIT_NPROC" in line and "is 12" in line, line


NEVER_STARTS = """
import os, sys, time
from ipctop.engine import end_launch as launch
def never_starts(self, pair, end, role):
    pid = os.fork()
    if pid:
        return pid
    launch.die_with_parent()
    time.sleep(60)  # never publishes "running"
    os._exit(0)
launch.Launcher.fork_python = never_starts
launch.await_start.__defaults__ = (1.0,)
from ipctop.cli import main
sys.exit(main(["run", "--mode", "processes", "--engine", "python", "--pairs", "2",
               "--cpus", "0", "--seconds", "5"]))
"""


def test_fake_end_that_never_starts_is_one_line_exit_1_and_removed(tmp_path) -> None:
    # FAKE: an end that never starts cannot be made on demand, so the fork is replaced
    # by a child that sleeps; the start timeout is cut to 1 s.
    script = tmp_path / "never.py"
    script.write_text(NEVER_STARTS)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       cwd=ROOT, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    line = one_line(r, 1)
    assert line.startswith("ipctop: pair 0 A: did not start within 1 s"), line
    assert "removed" in line
