"""perf never outlives ipctop: a SIGKILLed `ipctop run --profile` takes its perf along."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from conftest import run_cli, wait_for
from ipctop_child import ipctop

from ipctop.engine.profile import perf_status

CPUS = sorted(os.sched_getaffinity(0))[:2]
STATUS = perf_status(CPUS)
needs_perf = pytest.mark.skipif(not STATUS.ok, reason=f"perf cannot profile here: {STATUS.line}")


def _perf_children(pid: int) -> list[psutil.Process]:
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    return [k for k in kids if "perf" in k.name()]


@needs_perf
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_perf_dies_with_a_killed_run(how: signal.Signals) -> None:
    with ipctop(
        "run", "--profile", "--seconds", "60", "--cpus", "0",
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    ) as proc:  # fmt: skip
        assert wait_for(lambda: _perf_children(proc.pid), 60), "perf never started under the run"
        perf = _perf_children(proc.pid)
        time.sleep(0.5)  # perf is recording, not just forked
        proc.send_signal(how)
        proc.wait(timeout=30)
    _, alive = psutil.wait_procs(perf, timeout=15)
    for p in alive:
        p.kill()  # do not leave it running for the next test
    assert not alive, f"perf outlived the {how.name}ed run: {[p.pid for p in alive]}"
    if how == signal.SIGKILL:
        _clean_takes_the_killed_runs_perf_data(proc.pid)


def _clean_takes_the_killed_runs_perf_data(dead: int) -> None:
    tmp = Path(tempfile.gettempdir())
    left = list(tmp.glob(f"ipctop-perf-{dead}-*"))
    assert left, "a SIGKILLed run leaves its perf folder (what clean is for)"
    live = Path(tempfile.mkdtemp(prefix=f"ipctop-perf-{os.getpid()}-"))  # a live owner: us
    try:
        r = run_cli("clean")
        assert r.returncode == 0, r.stderr
        assert all(f"removed {p}" in r.stdout for p in left), r.stdout
        assert not any(p.exists() for p in left)
        assert live.exists(), "a live ipctop's perf folder was removed"
    finally:
        live.rmdir()
