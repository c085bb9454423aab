"""engine.parent_death: a child tied to its parent dies with it, however the parent dies.

Real processes: a parent that starts a tied `sleep` and is then SIGKILLed, and a
child whose parent is already gone when it ties itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import psutil
from conftest import wait_for

from ipctop.engine.parent_death import die_with

PARENT = """
import signal, subprocess, sys
from ipctop.engine.parent_death import tied_to_me
child = subprocess.Popen(["sleep", "60"], preexec_fn=tied_to_me(signal.SIGTERM))
print(child.pid, flush=True)
sys.stdin.read()  # until the test kills this process
"""


def test_a_tied_child_dies_with_its_sigkilled_parent() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        child = psutil.Process(int(parent.stdout.readline()))
        assert child.is_running() and child.ppid() == parent.pid
        parent.kill()
        parent.wait()
        # Reparented to init (or a subreaper) and sent SIGTERM: it does not sleep on.
        gone = wait_for(lambda: not child.is_running() or child.status() == "zombie", 30)
    finally:
        parent.kill()
        parent.wait()
    if not gone:
        child.kill()
    assert gone, f"the tied sleep {child.pid} outlived its SIGKILLed parent"


def test_a_child_whose_parent_is_already_gone_exits_127() -> None:
    # The race the ppid check closes: the parent died between the fork and the prctl.
    pid = os.fork()
    if pid == 0:
        die_with(os.getppid() + 1_000_000, signal.SIGTERM)  # not this child's parent
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 127
