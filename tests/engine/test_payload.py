"""--size: every payload-carrying workload's message size, its limits, records and compare."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from test_compare_cli import make

from ipctop.engine.engine import Engine, RunConfig
from ipctop.errors import ResourceError, UsageError

root = pytest.mark.skipif(
    __import__("os").geteuid() != 0, reason="needs root for a private IPC namespace"
)


def _one_line(r: subprocess.CompletedProcess, code: int, *words: str) -> None:
    assert r.returncode == code, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    for w in words:
        assert w in lines[0]


def test_size_zero_is_a_usage_error() -> None:
    _one_line(run_cli("run", "-w", "sysv-msg", "--size", "0", "--seconds", "1"), 2, "--size")


@pytest.mark.parametrize("workload", ["sysv-sem", "futex", "spin-yield", "eventfd"])
def test_size_on_a_workload_without_payload_is_refused(workload: str) -> None:
    r = run_cli("run", "-w", workload, "--size", "64", "--seconds", "1")
    _one_line(r, 2, workload, "no payload")


def test_pmsg_shared_needs_room_for_the_pair_id() -> None:
    with pytest.raises(UsageError, match="at least 8 bytes"):
        Engine(RunConfig("sysv-msg-shared", cpus=(0,), size=7))


@pytest.mark.parametrize(
    "workload, sysctl",
    [("sysv-msg", "kernel.msgmax"), ("sysv-msg-shared", "kernel.msgmax"),
     ("posix-mq", "fs.mqueue.msgsize_max")],
)  # fmt: skip
def test_size_over_the_limit_is_exit_3_naming_the_sysctl_and_creates_nothing(
    workload: str, sysctl: str
) -> None:
    limit = int(Path("/proc/sys/" + sysctl.replace(".", "/")).read_text())
    r = run_cli("run", "-w", workload, "--size", str(limit + 1), "--seconds", "1")
    _one_line(r, 3, sysctl, f"--size {limit + 1}")


@root
def test_refused_size_creates_nothing() -> None:
    # A private IPC namespace: any object in it is ours, whatever else runs on the box.
    if not shutil.which("unshare"):
        pytest.skip("unshare is not installed")
    script = (
        f"{sys.executable} -m ipctop run -w sysv-msg --size 1000000 --seconds 1; echo rc=$?; "
        "cat /proc/sysvipc/msg /proc/sysvipc/sem /proc/sysvipc/shm | grep -vc '^ *key'"
    )
    r = subprocess.run(["unshare", "-i", "sh", "-c", script], capture_output=True, text=True,
                       cwd=ROOT, timeout=60)  # fmt: skip
    assert r.stdout.split() == ["rc=3", "0"], (r.stdout, r.stderr)


@root
@pytest.mark.parametrize(
    "setting, workload, size, sysctl",
    [
        ("echo 64 > /proc/sys/kernel/msgmax", "sysv-msg", 65, "kernel.msgmax"),
        ("echo 100 > /proc/sys/kernel/msgmnb", "sysv-msg-shared", 40, "kernel.msgmnb"),
    ],
)
def test_lowered_limit_in_a_private_namespace_names_the_sysctl(
    setting: str, workload: str, size: int, sysctl: str
) -> None:
    if not shutil.which("unshare"):
        pytest.skip("unshare is not installed")
    script = (
        f"{setting} && exec {sys.executable} -m ipctop run -w {workload} --size {size} "
        "--cpus 0 --seconds 1"
    )
    r = subprocess.run(["unshare", "-i", "sh", "-c", script], capture_output=True, text=True,
                       cwd=ROOT, timeout=60)  # fmt: skip
    _one_line(r, 3, sysctl)


def test_pipe_size_over_pipe_max_size_is_refused() -> None:
    limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
    with pytest.raises(ResourceError, match="fs.pipe-max-size"):
        Engine(RunConfig("pipe", cpus=(0,), size=limit))


@pytest.mark.parametrize("engine", ["native", "python"])
@pytest.mark.parametrize(
    "workload, size",
    [("sysv-msg", 4096), ("sysv-msg-shared", 8), ("posix-mq", 4096), ("pipe", 100_000),
     ("socket", 70_000)],
)  # fmt: skip
def test_large_and_small_payloads_run_and_stop(workload: str, size: int, engine: str) -> None:
    import time

    # pipe at 100,000 bytes needs a grown pipe buffer; socket's message comes in parts
    with Engine(RunConfig(workload, cpus=(0,), engine=engine, size=size)) as e:
        e.add_pair()
        deadline = time.monotonic() + 30  # a loaded box may leave a new pair waiting
        while time.monotonic() < deadline:
            if all(e.counters.rounds(end.slot) > 10 for end in e.pairs[0].ends):
                break
            time.sleep(0.02)
        assert all(e.counters.rounds(end.slot) > 10 for end in e.pairs[0].ends)
        assert f"· {size} B ·" in e.describe()
        assert not e.poll()


@pytest.mark.slow  # the quick loop's slowest (3-19 s); CI runs it
def test_sweep_record_and_compare_know_the_size(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = run_cli("sweep", "-w", "sysv-msg", "--size", "64", "--cpus", "0", "--max-pairs", "1",
                "--seconds", "0.2", "--warmup", "0", "--repeat", "1", "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["config"]["size"] == 64
    a = make(tmp_path / "a.json", "6.1", [1e6], workload="sysv-msg", size=8)
    b = make(tmp_path / "b.json", "6.2", [1e6], workload="sysv-msg", size=64)
    old = make(tmp_path / "old.json", "5.0", [1e6], workload="sysv-msg")  # before "size"
    r = run_cli("compare", str(a), str(b))
    _one_line(r, 2, "8 B", "64 B", "size")
    assert run_cli("compare", str(a), str(b), "--force").returncode == 0
    assert run_cli("compare", str(old), str(a)).returncode == 0  # an unknown size matches
