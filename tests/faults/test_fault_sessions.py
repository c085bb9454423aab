"""Issue 16, parts 7 and 13: after SIGKILL of engine and reaper, `ipctop clean` removes the
session files and the POSIX queues too, not only SysV objects; and a second ipctop on
the same CPUs says so in its samples and its record.

Real runs killed for real; the autouse fixture checks that nothing outlived the test.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest
from conftest import posix_queues, run_cli
from ipctop_child import ipctop, kill_reaper_then_engine, stop
from jsonl_lines import split_jsonl

from ipctop.engine.reaper import session_dir


def wait_for(predicate, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def session_files() -> set[str]:
    return {p.name for p in session_dir().iterdir() if p.name != "live-session.lock"}


def mqueue_mounted() -> bool:
    with open("/proc/mounts") as f:
        return any(line.split()[1:3] == ["/dev/mqueue", "mqueue"] for line in f)


needs_mqueue = pytest.mark.skipif(
    not mqueue_mounted(), reason="no mqueue file system on /dev/mqueue: queues cannot be listed"
)


@pytest.mark.parametrize(
    "workload", [pytest.param("posix-mq", marks=needs_mqueue), "posix-sem", "futex"]
)
def test_clean_removes_what_a_killed_session_left(workload: str) -> None:
    files_before, queues_before = session_files(), posix_queues()
    with ipctop(
        "run", "-w", workload, "--cpus", "0", "--seconds", "60", stderr=subprocess.DEVNULL
    ) as proc:
        assert proc.stdout.readline().startswith("# ipctop run"), "the run never started"
        mine = {f for f in session_files() - files_before
                if (session_dir() / f).read_text().split()[:1] == [str(proc.pid)]}  # fmt: skip
        assert len(mine) == 1, mine
        kill_reaper_then_engine(proc)
    # What main left forever: the session file, and the queues of a posix-mq pair.
    assert mine <= session_files()
    left_queues = posix_queues() - queues_before
    assert len(left_queues) == (2 if workload == "posix-mq" else 0), left_queues

    r = run_cli("clean")
    assert r.returncode == 0, r.stderr
    assert not (mine & session_files()), r.stdout
    assert f"removed stale session file {session_dir() / next(iter(mine))}" in r.stdout
    assert not (posix_queues() & left_queues), r.stdout
    for q in left_queues:
        assert f"removed posix queue /{q}" in r.stdout
    # Issue 27 #22: the closing count said "0 object(s) removed" after these lines.
    said = [x for x in r.stdout.splitlines() if x.startswith("removed ")]
    assert r.stdout.splitlines()[-1] == f"{len(said)} object(s) removed", r.stdout


@needs_mqueue
def test_clean_keeps_a_live_sessions_file_and_queues() -> None:
    files_before = session_files()
    with ipctop("run", "-w", "posix-mq", "--cpus", "0", "--seconds", "60",
                stderr=subprocess.DEVNULL) as proc:  # fmt: skip
        try:
            assert proc.stdout.readline().startswith("# ipctop run")
            mine = {f for f in session_files() - files_before
                    if (session_dir() / f).read_text().split()[:1] == [str(proc.pid)]}  # fmt: skip
            queues = {q for q in posix_queues() if q.startswith(f"ipctop-{proc.pid}-")}
            r = run_cli("clean")
            assert r.returncode == 0
            assert mine <= session_files()
            assert queues <= posix_queues() and len(queues) == 2
            assert os.path.exists(session_dir() / next(iter(mine)))
        finally:
            stop(proc)  # SIGTERM: it removes its own objects


# --- 13: another ipctop on the same CPUs ----------------------------------------------


def test_second_ipctop_on_the_same_cpu_warns_in_samples_and_record(tmp_path) -> None:
    from ipctop.engine.contention import others_on

    with ipctop("run", "--cpus", "0", "--seconds", "60",
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as first:  # fmt: skip
        try:
            assert wait_for(lambda: first.pid in {pid for pid, _ in others_on([0])})
            r = run_cli("run", "--cpus", "0", "--seconds", "2", "--jsonl")
            assert r.returncode == 0, r.stderr
            events = [e for s in split_jsonl(r.stdout)[0] for e in s["events"]]
            want = f"contention: another ipctop (pid {first.pid}) runs pairs on CPU(s) 0 too"
            assert any(e.startswith(want) for e in events), events
            out = tmp_path / "sweep.json"
            r = run_cli("sweep", "--cpus", "0", "--seconds", "1.5", "--warmup", "0",
                        "--repeat", "1", "--max-pairs", "1", "--json", str(out))  # fmt: skip
            assert r.returncode == 0, r.stderr  # a warning, not a failure
            assert any(e.startswith(want) for e in json.loads(out.read_text())["events"])
        finally:
            stop(first)  # SIGTERM: it removes its own objects
