"""Every mechanism on real kernel objects: runs, counts, cleans up, refuses clearly."""

from __future__ import annotations

import gc
import os
import resource
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import posix_queues, sysv_objects, two_cpus

from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine, resolve_engine
from ipctop.engine.reaper import tag_of
from ipctop.engine.workloads import WORKLOADS
from ipctop.engine.workloads.limits import check_mqueue, check_msg_queues, check_sem_array
from ipctop.errors import ResourceError, UsageError

NEW = (
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
    "sysv-lifecycle",
)
NATIVE = resolve_engine() == "native"
ENGINES = [e for e in ("native", "python") if e == "python" or NATIVE]
PING_PONGS = tuple(n for n in NEW if WORKLOADS[n].ends_per_unit == 2 and n != "sysv-sem-multi")
MQUEUE = Path("/dev/mqueue")


@pytest.fixture(scope="module", autouse=True)
def mqueue_mounted():
    """Mount the mqueue filesystem so that the leak checks can see POSIX queues."""
    if os.path.ismount(MQUEUE):
        yield
        return
    if os.geteuid() != 0:
        yield  # the checks still run; they just cannot see queue names
        return
    MQUEUE.mkdir(exist_ok=True)
    subprocess.run(["mount", "-t", "mqueue", "none", str(MQUEUE)], check=True)
    try:
        yield
    finally:
        subprocess.run(["umount", str(MQUEUE)], check=True)


def shared_mappings() -> int:
    """MAP_SHARED anonymous (shown as /dev/zero) and POSIX shared memory mappings."""
    return sum(1 for line in open("/proc/self/maps") if "/dev/zero" in line or "/dev/shm/" in line)


def ours(names: set[str]) -> set[str]:
    """Names made by this process: other runs on the box may come and go meanwhile."""
    return {n for n in names if f"ipctop-{os.getpid()}-" in n}


def snapshot() -> tuple:
    gc.collect()
    return (
        set(os.listdir("/proc/self/fd")),
        shared_mappings(),
        ours(set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()),
        ours(posix_queues()),
    )


def tagged(tag: int) -> set[tuple[str, str, str]]:
    """SysV objects whose key carries an engine's tag (its reaper's 12 bits)."""
    return {o for o in sysv_objects() if tag_of(int(o[1]) & 0xFFFFFFFF) == tag}


def placement_for(workload: str) -> tuple[str, tuple[int, ...]]:
    if len(os.sched_getaffinity(0)) >= 2:
        return "cross", (0, 1)
    return "same", (0,)


def wait_counting(e: Engine, settle: float = 0.3, patience: float = 10.0) -> list[int]:
    """Rounds of every end once all have counted; a busy box gets `patience` to get there."""
    time.sleep(settle)
    deadline = time.monotonic() + patience
    while True:
        counted = [e.counters.rounds(end.slot) for end in e.ends()]
        if all(n > 0 for n in counted) or time.monotonic() > deadline:
            return counted
        time.sleep(0.05)


def runnable(workload: str, engine: str) -> bool:
    return engine == "native" or WORKLOADS[workload].python_unavailable is None


CASES = [
    pytest.param(w, m, eng, id=f"{w}-{m}-{eng}")
    for w in NEW
    for m in ("threads", "processes")
    for eng in ENGINES
    if runnable(w, eng)
]


@pytest.mark.parametrize("workload, mode, engine", CASES)
def test_runs_counts_and_cleans_up(workload: str, mode: str, engine: str) -> None:
    placement, cpus = placement_for(workload)
    if workload == "spin" and placement == "same":
        pytest.skip("spin needs 2 CPUs (same placement is refused)")
    before = snapshot()
    e = Engine(RunConfig(workload, placement, mode, cpus, engine))
    with e:
        e.start(len(cpus))
        counted = wait_counting(e)
        roles = [end.role for end in e.ends()]
        assert all(n > 0 for n in counted), list(zip(roles, counted))
        if e.workload.ends_per_unit == 2 and workload != "sysv-sem-multi":
            # A ping-pong: the partners of one pair differ by at most one round.
            for a, b in zip(counted[0::2], counted[1::2]):
                assert abs(a - b) <= 2, counted
        assert not [p for p in e.pairs if not p.active]
    assert not [ev for ev in e.events if "did not stop" in ev or "killed" in ev], e.events
    reaper = getattr(e, "reaper", None)
    tag = reaper.tag if reaper is not None else None
    e.counters.close()
    del e
    after = snapshot()
    names = ("fds", "shared mappings", "/dev/shm", "/dev/mqueue")
    for name, b, a in zip(names, before, after):
        assert a == b, f"{name} leaked: {b} -> {a}"
    if tag is not None:
        assert not tagged(tag), "SysV objects with this engine's tag are left"


@pytest.mark.skipif(not NATIVE, reason="needs the native engine")
@pytest.mark.parametrize("workload", [w for w in NEW if w != "spin"])
def test_same_placement_counts(workload: str) -> None:
    with Engine(RunConfig(workload, "same", "threads", (0,), "native")) as e:
        e.start(1)
        counted = wait_counting(e)
        assert all(n > 0 for n in counted), counted
        assert {end.bound_cpu for end in e.ends()} == {0}


@pytest.mark.skipif(not NATIVE, reason="needs the native engine")
def test_posix_queues_are_named_private_and_unlinked() -> None:
    if not os.path.ismount(MQUEUE):
        pytest.skip("/dev/mqueue is not mounted and we cannot mount it")
    with Engine(RunConfig("posix-mq", "same", "threads", (0,), "native")) as e:
        e.start(1)
        mine = {n for n in posix_queues() if n.startswith(f"ipctop-{os.getpid()}-")}
        assert len(mine) == 2
        assert {n[-2:] for n in mine} == {"-a", "-b"}
        for n in mine:
            assert (MQUEUE / n).stat().st_mode & 0o777 == 0o600
    assert not {n for n in posix_queues() if n.startswith(f"ipctop-{os.getpid()}-")}


@pytest.mark.skipif(not NATIVE, reason="needs the native engine")
def test_signal_never_reaches_the_main_thread() -> None:
    hits: list[int] = []
    old = signal.signal(signal.SIGURG, lambda sig, frame: hits.append(sig))
    try:
        for mode in ("threads", "processes"):
            with Engine(RunConfig("signal", "same", mode, (0,), "native")) as e:
                e.start(1)
                counted = wait_counting(e)
                assert all(n > 0 for n in counted)
        time.sleep(0.05)  # a stray would be handled at the next bytecode boundary
        assert hits == []
        assert signal.SIGURG not in signal.sigpending()
    finally:
        signal.signal(signal.SIGURG, old)


@pytest.mark.skipif(not NATIVE, reason="needs the native engine")
def test_sem_multi_shares_one_array_and_splits_threads_per_cpu() -> None:
    cpus = (0, 1) if len(os.sched_getaffinity(0)) >= 2 else (0,)
    threads = 2 * len(cpus) + 1
    before = sysv_objects()
    config = RunConfig(
        "sysv-sem-multi", "same", "threads", cpus, "native", threads=threads, sems=17
    )
    with Engine(config) as e:
        e.start(len(cpus))
        new = sysv_objects() - before
        assert [k for k, _, _ in new] == ["sem"]  # ONE array for every unit
        ident = next(i for _, _, i in new)
        line = next(
            ln.split()
            for ln in open("/proc/sysvipc/sem").read().splitlines()[1:]
            if ln.split()[1] == ident
        )
        assert line[3] == "17"
        sizes = [len(p.ends) for p in e.pairs]
        assert sum(sizes) == threads
        assert sizes[0] == threads // len(cpus) + 1  # the remainder goes to the first unit
        for p in e.pairs:
            assert {end.bound_cpu for end in p.ends} == {cpus[p.index]}
            assert [end.role for end in p.ends] == [f"T{i}" for i in range(len(p.ends))]
        counted = wait_counting(e)
        assert all(n > 0 for n in counted), counted
    with Engine(RunConfig("sysv-sem-multi", "free", "threads", cpus, "native")) as e:
        e.start(1)
        assert [end.bound_cpu for end in e.ends()] == [None] * 4


@pytest.mark.skipif(not NATIVE, reason="needs the native engine")
def test_units_added_and_removed_while_others_run() -> None:
    with Engine(RunConfig("sysv-sem-multi", "same", "threads", (0,), "native")) as e:
        first = e.add_pair()
        second = e.add_pair()
        assert e.remove_pair() is second
        n = e.counters.rounds(first.ends[0].slot)
        wait_counting(e, settle=0.1)
        assert e.counters.rounds(first.ends[0].slot) > n


# -- refusals --------------------------------------------------------------


@two_cpus
def test_spin_same_core_is_refused_with_the_reason() -> None:
    with pytest.raises(UsageError) as info:
        Engine(RunConfig("spin", "same", "threads", (0, 1), "native" if NATIVE else "python"))
    text = str(info.value)
    assert "\n" not in text
    assert "one CPU" in text and "--placement cross" in text


@pytest.mark.parametrize("workload", ["futex", "spin", "spin-yield", "sysv-lifecycle"])
def test_python_engine_refuses_what_it_cannot_express(workload: str) -> None:
    with pytest.raises(UsageError, match="unavailable on the Python engine") as info:
        Engine(RunConfig(workload, "free", "threads", (0,), "python"))
    assert "\n" not in str(info.value)


def test_sem_multi_needs_a_thread_per_cpu() -> None:
    with pytest.raises(UsageError, match="--threads"):
        Engine(RunConfig("sysv-sem-multi", "free", "threads", (0, 1), "auto", threads=1))


@pytest.mark.parametrize("pipeline", ["pipe", "socket", "eventfd"])
def test_fd_limit_is_checked_and_named(pipeline: str) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    engine = "native" if NATIVE else "python"
    with Engine(RunConfig(pipeline, "free", "threads", (0,), engine)) as e:
        e.start()  # the engine's own descriptors (reaper pipe) exist before the limit drops
        in_use = len(os.listdir("/proc/self/fd"))
        resource.setrlimit(resource.RLIMIT_NOFILE, (in_use + 1, hard))
        try:
            with pytest.raises(ResourceError, match="RLIMIT_NOFILE"):
                e.add_pair()
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        assert e.pairs == []


def _fake_proc(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_fake_proc_mqueue_limits_name_the_sysctl(tmp_path: Path) -> None:
    proc = _fake_proc(
        tmp_path,
        {
            "sys/fs/mqueue/msg_max": "2\n",
            "sys/fs/mqueue/msgsize_max": "8192\n",
            "sys/fs/mqueue/queues_max": "256\n",
        },
    )
    with pytest.raises(ResourceError, match=r"fs\.mqueue\.msg_max"):
        check_mqueue(4, 16, proc)
    (proc / "sys/fs/mqueue/msg_max").write_text("10\n")
    (proc / "sys/fs/mqueue/queues_max").write_text("1\n")
    with pytest.raises(ResourceError, match=r"fs\.mqueue\.queues_max"):
        check_mqueue(4, 16, proc)
    (proc / "sys/fs/mqueue/queues_max").write_text("256\n")
    check_mqueue(4, 16, proc)


def test_fake_proc_sem_limits_name_kernel_sem(tmp_path: Path) -> None:
    header = "key semid perms nsems uid gid cuid cgid otime ctime\n"
    proc = _fake_proc(
        tmp_path,
        {
            "sys/kernel/sem": "250\t300\t32\t128\n",
            "sysvipc/sem": header + "1 0 600 200 0 0 0 0 0 0\n",
        },
    )
    with pytest.raises(ResourceError, match=r"semmsl 250.*kernel\.sem"):
        check_sem_array(251, proc)
    with pytest.raises(ResourceError, match=r"semmns is 300.*kernel\.sem"):
        check_sem_array(128, proc)
    check_sem_array(100, proc)


def test_fake_proc_msgmni_is_respected(tmp_path: Path) -> None:
    header = "key msqid perms cbytes qnum lspid lrpid uid gid cuid cgid stime rtime ctime\n"
    proc = _fake_proc(
        tmp_path,
        {
            "sys/kernel/msgmni": "2\n",
            "sysvipc/msg": header + "1 0 600 0 0 0 0 0 0 0 0 0 0 0\n" * 2,
        },
    )
    with pytest.raises(ResourceError, match=r"kernel\.msgmni"):
        check_msg_queues(1, proc)


def test_every_workload_has_a_native_loop() -> None:
    native = pytest.importorskip("ipctop._native", reason="needs the native engine")
    assert set(WORKLOADS) <= set(native.workloads())


KILLED_CHILD = """
import sys, time
from ipctop.engine.engine import Engine
from ipctop.engine.config import RunConfig
e = Engine(RunConfig(sys.argv[1], "same", "processes", (0,), "native"))
e.start(1)
reaper = getattr(e, "reaper", None)
print(reaper.tag if reaper else -1, flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not NATIVE, reason="needs the native engine")
@pytest.mark.parametrize("workload", ["posix-mq", "sysv-lifecycle"])
def test_sigkilled_run_leaves_no_queue(workload: str) -> None:
    """SIGKILL gives no teardown at all: the reaper must unlink and remove what was left."""
    import sys

    if workload == "posix-mq" and not os.path.ismount(MQUEUE):
        pytest.skip("/dev/mqueue is not mounted and we cannot mount it")
    probe = Engine(RunConfig(workload, "same", "processes", (0,), "native"))
    probe.counters.close()
    if not hasattr(probe, "reaper"):
        pytest.skip("this engine has no reaper to clean up after a SIGKILL")
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_CHILD, workload], stdout=subprocess.PIPE, text=True
    )
    try:
        tag = int(proc.stdout.readline())
        assert tag >= 0, "the child's engine started no reaper"
        prefix = f"ipctop-{proc.pid}-"
        if workload == "posix-mq":
            assert [n for n in posix_queues() if n.startswith(prefix)]
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    deadline = time.monotonic() + 15
    while True:
        left = tagged(tag) | {("mq", n, "") for n in posix_queues() if n.startswith(prefix)}
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not left
