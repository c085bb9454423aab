"""The hand-written C reference loop (bench/ref/pingpong.c) builds and runs every workload.

Each run happens, when we are root, inside a fresh IPC namespace with its own mqueue
mount, so that "nothing left behind" is checked on exactly the objects this run made
and not on whatever other tests on the box are doing at the same time.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REF_SRC = Path(__file__).resolve().parents[2] / "bench" / "ref" / "pingpong.c"

WORKLOADS = [
    "sysv-msg",
    "sysv-sem",
    "sysv-msg-shared",
    "pipe",
    "socket",
    "posix-sem",
    "posix-mq",
    "futex",
    "eventfd",
    "signal",
    "spin",
    "spin-yield",
    "sysv-sem-multi",
]

ALLOWED = sorted(os.sched_getaffinity(0))
CPUS = ",".join(str(c) for c in ALLOWED[:2])

# Runs the benchmark in the background so that the test can signal it by pid,
# then lists what is left in this IPC namespace once it has exited.
ISOLATED_SH = r"""
mq="$1"; left="$2"; pidfile="$3"; shift 3
mount -t mqueue none "$mq" || exit 97
"$@" &
echo $! > "$pidfile"
wait $!
rc=$?
{ tail -n +2 /proc/sysvipc/msg; tail -n +2 /proc/sysvipc/sem; tail -n +2 /proc/sysvipc/shm;
  ls -A "$mq"; } > "$left"
umount "$mq"
exit $rc
"""

pytestmark = [
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed"),
    pytest.mark.skipif(len(ALLOWED) < 2, reason="needs at least 2 allowed CPUs"),
]


@functools.cache
def can_isolate() -> bool:
    """Root with a working unshare(1): containers may still refuse new namespaces."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = ["unshare", "--ipc", "--mount", "--propagation", "private", "true"]
    return subprocess.run(probe, capture_output=True).returncode == 0


def sysv_ids() -> set[str]:
    ids = set()
    for kind in ("msg", "sem", "shm"):
        lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        ids.update(f"{kind}:{line.split()[1]}" for line in lines)
    return ids


def procs_running(binary: Path) -> list[int]:
    """Pids whose executable is this test's own build of the benchmark."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            exe = os.readlink(entry / "exe")
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue  # gone, or not ours to read: either way not our build
        if exe == str(binary):
            found.append(int(entry.name))
    return found


def wait_for_handler(pid: int, sig: signal.Signals) -> None:
    """Until the benchmark catches sig (before that, SIGINT is ignored in a background job)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:") and int(line.split()[1], 16) >> (sig - 1) & 1:
                return
        time.sleep(0.01)
    raise AssertionError(f"pid {pid} never installed a handler for {sig.name}")


@dataclass
class Finished:
    rc: int
    stdout: str
    stderr: str
    leftovers: list[str]


class RefRun:
    """One run of the reference binary, isolated in its own IPC namespace if we can."""

    def __init__(self, binary: Path, tmp: Path, args: list[str]) -> None:
        self.binary = binary
        self.isolated = can_isolate()
        self.left = tmp / "leftovers.txt"
        self.pidfile = tmp / "pid"
        cmd = [str(binary), *args]
        if self.isolated:
            mq = tmp / "mqueue"
            mq.mkdir()
            cmd = ["unshare", "--ipc", "--mount", "--propagation", "private"]
            cmd += ["sh", "-c", ISOLATED_SH, "sh", str(mq), str(self.left), str(self.pidfile)]
            cmd += [str(binary), *args]
        else:
            self.before = sysv_ids()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def pid(self) -> int:
        if not self.isolated:
            return self.proc.pid
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            text = self.pidfile.read_text() if self.pidfile.exists() else ""
            if text.endswith("\n"):
                return int(text)
            time.sleep(0.01)
        raise AssertionError("the isolated run never wrote its pid")

    def finish(self) -> Finished:
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode != 97, f"could not mount an mqueue fs: {err}"
        if self.isolated:
            leftovers = self.left.read_text().splitlines()
        else:
            # fallback: new ids only; mqueue names are unlinked before the run starts
            leftovers = sorted(sysv_ids() - self.before)
        return Finished(self.proc.returncode, out, err, leftovers)


@pytest.fixture(scope="module")
def pingpong(tmp_path_factory: pytest.TempPathFactory) -> Path:
    binary = tmp_path_factory.mktemp("ref-build") / "pingpong"
    build = subprocess.run(
        ["gcc", "-O2", "-pthread", "-o", str(binary), str(REF_SRC)],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    return binary


def run_ref(binary: Path, tmp: Path, args: list[str]) -> Finished:
    done = RefRun(binary, tmp, args).finish()
    assert done.leftovers == [], f"objects left behind: {done.leftovers}"
    assert procs_running(binary) == []
    return done


def run_one_line(binary: Path, tmp: Path, args: list[str]) -> dict:
    tmp.mkdir()
    done = run_ref(binary, tmp, args)
    assert done.rc == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    return json.loads(lines[0])


@pytest.mark.parametrize("mode", ["threads", "processes"])
@pytest.mark.parametrize("workload", WORKLOADS)
def test_each_workload_runs_one_pair_and_cleans_up(
    pingpong: Path, tmp_path: Path, workload: str, mode: str
) -> None:
    # spin refuses same-CPU placement; every other workload uses it
    placement = "cross" if workload == "spin" else "same"
    args = ["--workload", workload, "--pairs", "1", "--cpus", CPUS, "--placement", placement]
    args += ["--mode", mode, "--warmup", "0.05"]
    record = run_one_line(pingpong, tmp_path / "first", [*args, "--seconds", "0.2"])
    if record["total_ops_per_s"] == 0:
        # A pair only moves while its ends get a CPU; beside a job with hundreds
        # of threads on the same CPU (the box is shared) 0.2 s can pass without.
        record = run_one_line(pingpong, tmp_path / "again", [*args, "--seconds", "1"])
        load = os.getloadavg()[0]
        if record["total_ops_per_s"] == 0 and load > 2 * len(ALLOWED):
            pytest.skip(f"{workload} got no CPU time in 1 s; load average {load:.1f}")
    assert (record["workload"], record["mode"], record["pairs"]) == (workload, mode, 1)
    assert record["placement"] == placement
    assert record["total_ops_per_s"] > 0
    ends = record["threads"]
    assert sum(e["ops_per_s"] for e in ends) == pytest.approx(
        record["total_ops_per_s"], rel=1e-3, abs=0.1 * len(ends)
    )
    cpus = [int(c) for c in CPUS.split(",")]
    if workload == "sysv-sem-multi":
        assert [e["role"] for e in ends] == ["T"] * 4 * len(cpus)
        assert [e["cpu"] for e in ends] == [cpus[i % len(cpus)] for i in range(len(ends))]
    else:
        assert [(e["pair"], e["role"]) for e in ends] == [(0, "A"), (0, "B")]
        want = [cpus[0], cpus[1] if placement == "cross" else cpus[0]]
        assert [e["cpu"] for e in ends] == want
        # a ping-pong only moves when both ends do
        assert all(e["rounds"] > 0 for e in ends)
    # each end pinned itself, so it must have ended where it was put
    assert [e["last_cpu"] for e in ends] == [e["cpu"] for e in ends]


def test_spin_refuses_same_cpu_placement(pingpong: Path, tmp_path: Path) -> None:
    args = ["--workload", "spin", "--cpus", CPUS, "--placement", "same", "--seconds", "0.1"]
    done = run_ref(pingpong, tmp_path, args)
    assert done.rc == 2
    assert done.stdout == ""
    assert "spin" in done.stderr and "same" in done.stderr


def test_failed_pinning_exits_nonzero_and_removes_objects(pingpong: Path, tmp_path: Path) -> None:
    not_allowed = next(c for c in range(1024) if c not in ALLOWED)
    args = ["--workload", "sysv-sem", "--pairs", "2", "--cpus", f"{ALLOWED[0]},{not_allowed}"]
    args += ["--seconds", "0.2", "--warmup", "0"]
    done = run_ref(pingpong, tmp_path, args)
    assert done.rc == 1
    assert done.stdout == ""
    assert f"sched_setaffinity(cpu {not_allowed})" in done.stderr


@pytest.mark.parametrize(
    ("workload", "mode", "sig"),
    [
        ("sysv-msg", "processes", signal.SIGINT),
        ("posix-mq", "threads", signal.SIGTERM),
        ("futex", "processes", signal.SIGTERM),
    ],
)
def test_stop_signal_cleans_up(
    pingpong: Path, tmp_path: Path, workload: str, mode: str, sig: signal.Signals
) -> None:
    args = ["--workload", workload, "--pairs", "2", "--cpus", CPUS, "--mode", mode]
    args += ["--seconds", "60", "--warmup", "0"]
    run = RefRun(pingpong, tmp_path, args)
    pid = run.pid()
    wait_for_handler(pid, sig)
    time.sleep(0.3)  # let the ends get going; not a timing assertion
    os.kill(pid, sig)
    done = run.finish()
    assert done.rc == 128 + sig
    assert done.stdout == ""
    assert done.leftovers == [], f"objects left behind: {done.leftovers}"
    assert procs_running(pingpong) == []
