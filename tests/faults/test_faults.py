"""Faults for real: signals, a SIGKILLed parent, ipcrm from outside, full limits."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import psutil
import pytest
from conftest import ROOT, run_cli, sysv_objects, wait_for
from ipctop_child import ipctop, kill_reaper_then_engine, stop

from ipctop.engine.reaper import session_owner, tag_of

root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a private IPC namespace")


def objects_of(tagged_only: bool = True) -> set:
    return {o for o in sysv_objects() if not tagged_only or tag_of(int(o[1])) is not None}


class Run:
    """The SysV objects of one ipctop child, by the session tags it claimed: another
    ipctop on a shared box (a benchmark beside the suite) makes tagged objects too."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.pid = proc.pid
        self.tags: set[int] = set()

    def objects(self) -> set:
        """Its objects now; tags are learned while the child owns them."""
        out = set()
        for o in objects_of():
            tag = tag_of(int(o[1]))
            if tag is not None and (tag in self.tags or session_owner(tag) == self.pid):
                self.tags.add(tag)
                out.add(o)
        return out


def workers_of(proc: subprocess.Popen) -> list[psutil.Process]:
    return [
        c
        for c in psutil.Process(proc.pid).children(recursive=True)
        if "ipctop.engine.reaper" not in " ".join(c.cmdline())
    ]


@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_sigkill_of_the_main_process_leaves_nothing(mode: str) -> None:
    with ipctop("run", "--pairs", "2", "--cpus", "0", "--mode", mode, "--seconds", "60") as proc:
        run = Run(proc)
        assert wait_for(lambda: len(run.objects()) == 2), "pairs never started"
        ends = 4 if mode == "processes" else 0
        assert wait_for(lambda: len(workers_of(proc)) == ends), "ends never started"
        workers = workers_of(proc)
        proc.kill()
        proc.wait(5)
        # No worker and no object of that run remains: the reaper acts on its pipe's
        # EOF at once, but a loaded box may not run it (or a dying end) for seconds;
        # a leak is there for good, so a long wait only costs a failing run.
        assert wait_for(lambda: not run.objects(), timeout=30), run.objects()
        assert wait_for(lambda: not any(w.is_running() and w.status() != "zombie"
                                        for w in workers), timeout=30)  # fmt: skip


@pytest.mark.parametrize(
    "sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)]
)
def test_signal_cleans_up_and_exits_128_plus_n(sig: int, code: int, tmp_path) -> None:
    out = tmp_path / "sweep.json"
    with ipctop("sweep", "--workload", "sysv-sem", "--cpus", "0", "--mode", "processes",
                "--seconds", "30", "--warmup", "0", "--repeat", "1", "--json", str(out)) as proc:  # fmt: skip
        run = Run(proc)
        assert wait_for(lambda: len(run.objects()) == 1), "sweep never started"
        time.sleep(0.3)
        _, err = stop(proc, sig, timeout=10)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert not run.objects()
    record = json.loads(out.read_text())
    assert record["interrupted"] is True


def test_queue_removed_with_ipcrm_under_a_running_pair() -> None:
    if not shutil.which("ipcrm"):
        pytest.skip("ipcrm is not installed")
    with ipctop(
        "run", "--pairs", "2", "--cpus", "0", "--seconds", "3", "--interval", "0.2"
    ) as proc:
        run = Run(proc)
        assert wait_for(lambda: len(run.objects()) == 2)
        victim = max(int(i) for _, _, i in run.objects())
        subprocess.run(["ipcrm", "-q", str(victim)], check=True)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 1  # a pair failed: the run says so in its exit code
    assert "removed externally" in err
    assert "Traceback" not in err
    last = [ln for ln in out.splitlines() if ln.startswith("t=")][-1]
    assert "0A@0=" in last and not last.split("0A@0=")[1].startswith("0 ")  # pair 0 went on
    assert not run.objects()


@root
@pytest.mark.parametrize(
    "setting, workload, sysctl",
    [
        ("echo 2 > /proc/sys/kernel/msgmni", "sysv-msg", "kernel.msgmni"),
        ("echo 4 > /proc/sys/kernel/msgmnb", "sysv-msg", "kernel.msgmnb"),
        ("echo 250 32000 32 2 > /proc/sys/kernel/sem", "sysv-sem", "kernel.sem"),
        ("echo 2 > /proc/sys/kernel/msgmni", "sysv-lifecycle", "kernel.msgmni"),
    ],
)
def test_full_limit_gives_exit_3_and_names_the_sysctl(setting, workload, sysctl) -> None:
    if not shutil.which("unshare"):
        pytest.skip("unshare is not installed")
    # A private IPC namespace: the limit changes nowhere else.
    script = (
        f"{setting} && "
        f"exec {sys.executable} -m ipctop run -w {workload} --pairs 3 --cpus 0 --seconds 5"
    )
    r = subprocess.run(["unshare", "-i", "sh", "-c", script], capture_output=True, text=True,
                       cwd=ROOT, timeout=60)  # fmt: skip
    assert r.returncode == 3, r.stderr
    assert sysctl in r.stderr
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_enosys_maps_to_unsupported() -> None:
    # FAKE: this kernel has SysV IPC, so ENOSYS is handed in as the kernel would give it.
    import errno

    from ipctop.engine.objects import _translate
    from ipctop.errors import EXIT_UNSUPPORTED

    err = _translate("msg", OSError(errno.ENOSYS, os.strerror(errno.ENOSYS)))
    assert err.exit_code == EXIT_UNSUPPORTED
    assert "no SysV IPC" in str(err)


def test_clean_removes_only_dead_sessions_objects() -> None:
    import sysv_ipc

    stranger = sysv_ipc.MessageQueue(None, sysv_ipc.IPC_CREX, mode=0o600)  # not ipctop's
    try:
        with ipctop("run", "--pairs", "1", "--cpus", "0", "--seconds", "60") as proc:
            run = Run(proc)
            assert wait_for(lambda: len(run.objects()) == 1)
            kill_reaper_then_engine(proc)  # the worst case clean exists for
            left = run.objects()
            assert len(left) == 1
            dry = run_cli("clean", "--dry-run")
            assert "would remove" in dry.stdout and run.objects() == left
            r = run_cli("clean")
            assert r.returncode == 0 and "removed msg" in r.stdout, r.stdout
            assert not run.objects()
            stranger.send(b"x")  # it still answers: clean did not touch another's queue
    finally:
        stranger.remove()


@pytest.mark.timeout(300)  # 50 start-stop cycles take minutes beside another load
def test_soak_50_cycles_leaks_nothing() -> None:
    from ipctop.soak.leak_soak import soak

    cpus = sorted(os.sched_getaffinity(0))[:2]
    assert soak(50, cpus) == []


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare"),
    reason="needs root and unshare: the census counts a private IPC namespace's objects",
)
def test_soak_second_monitor_and_killed_serve_leave_nothing() -> None:
    # Real monitors on real ptys, a real `ipctop serve` SIGKILLed with a websocket
    # client connected; the soak's census and its own checks say what went wrong.
    r = subprocess.run(
        ["unshare", "-i", sys.executable, "-m", "ipctop.soak", "--cycles", "0",
         "--second-monitor", "2", "--serve-killed", "2"],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0 and "no leaks" in r.stdout, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
