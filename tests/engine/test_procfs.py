"""The /proc readers: real copies from this box, hand-made arm64/schedstat shapes, and live reads."""

from __future__ import annotations

import os
import queue
import threading
import time
from pathlib import Path

import pytest

from ipctop.cpus import read_topology
from ipctop.engine import procfs
from ipctop.engine.procfs import CpuSchedStat, CpuTicks, TaskSchedStat, TaskStat

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
X86 = str(FIXTURES / "proc_x86_real")
ARM64 = str(FIXTURES / "proc_arm64_handmade")
SCHEDSTAT = str(FIXTURES / "proc_schedstat_v17_handmade")
MISSING = str(FIXTURES / "proc_missing_fake")
# The real thread copied into the x86 fixture; its comm is "ipc) (x y".
PID, TID = 4785, 4786

ALLOWED = sorted(os.sched_getaffinity(0))
needs_two_cpus = pytest.mark.skipif(len(ALLOWED) < 2, reason="needs 2 allowed CPUs")


class PinnedThread:
    """A real thread pinned to one CPU that runs the callables it is sent."""

    def __init__(self, cpu: int | None) -> None:
        self.cpu = cpu
        self.jobs: queue.Queue = queue.Queue()
        self.done: queue.Queue = queue.Queue()
        self.tid = 0
        ready = threading.Event()

        def run() -> None:
            self.tid = threading.get_native_id()
            if cpu is not None:
                os.sched_setaffinity(0, {cpu})
            ready.set()
            while (job := self.jobs.get()) is not None:
                self.done.put(job())

        self.thread = threading.Thread(target=run, name="procfs-test")
        self.thread.start()
        ready.wait()

    def call(self, job):
        self.jobs.put(job)
        return self.done.get(timeout=60)

    def stop(self) -> None:
        self.jobs.put(None)
        self.thread.join()


@pytest.fixture
def worker_factory():
    made: list[PinnedThread] = []

    def make(cpu: int | None) -> PinnedThread:
        t = PinnedThread(cpu)
        made.append(t)
        return t

    yield make
    for t in made:
        if t.thread.is_alive():
            t.stop()


def _burn_until_ticks_move(cpu: int) -> None:
    """Spin on this thread until /proc/stat credits CPU `cpu` with more busy ticks."""

    def busy() -> int:
        t = procfs.read_cpu_ticks()[cpu]
        return t.user + t.nice + t.system

    start = busy()
    x = 0
    for _ in range(2000):
        for i in range(20_000):
            x += i
        if busy() > start:
            return
    raise AssertionError(f"CPU {cpu} busy ticks never moved")


# --- /proc/stat ----------------------------------------------------------------


def test_ctxt_from_real_copy() -> None:
    assert procfs.read_ctxt(X86) == 3205259
    assert procfs.read_ctxt(ARM64) == 987654


def test_cpu_ticks_from_real_copy() -> None:
    ticks = procfs.read_cpu_ticks(X86)
    assert sorted(ticks) == [0, 1]
    assert ticks[0] == CpuTicks(856, 0, 1234, 52109, 20, 0, 8, 32)
    # The aggregate "cpu " line must not leak in as a CPU.
    assert sorted(procfs.read_cpu_ticks(ARM64)) == [0, 1, 3]


def test_fake_missing_stat_reads_as_nothing() -> None:
    assert procfs.read_ctxt(MISSING) is None
    assert procfs.read_cpu_ticks(MISSING) == {}
    assert procfs.read_stat(MISSING) == ({}, None)


def test_one_read_of_stat_gives_both_the_ticks_and_the_switches() -> None:
    # What the sampler reads once a sample, where it read the file twice.
    for proc in (X86, ARM64):
        assert procfs.read_stat(proc) == (procfs.read_cpu_ticks(proc), procfs.read_ctxt(proc))


def test_cpu_percent_split() -> None:
    prev = {0: CpuTicks(100, 10, 50, 800, 40, 5, 15, 0), 1: CpuTicks(1, 1, 1, 1, 1, 1, 1, 1)}
    cur = {
        0: CpuTicks(130, 20, 70, 900, 60, 10, 20, 10),  # 200 ticks later
        1: CpuTicks(1, 1, 1, 1, 1, 1, 1, 1),  # no ticks: left out
        2: CpuTicks(5, 0, 0, 5, 0, 0, 0, 0),  # came online: left out
    }
    split = procfs.cpu_percent_split(prev, cur)
    assert list(split) == [0]
    user, system, softirq, idle = split[0]
    assert user == pytest.approx(20.0)  # (30 user + 10 nice) / 200
    assert system == pytest.approx(12.5)  # (20 system + 5 irq) / 200
    assert softirq == pytest.approx(2.5)
    assert idle == pytest.approx(60.0)  # (100 idle + 20 iowait) / 200
    assert 100 - (user + system + softirq + idle) == pytest.approx(5.0)  # steal


def test_cpu_percent_split_clamps_idle_stepping_back() -> None:
    prev = {0: CpuTicks(0, 0, 0, 100, 10, 0, 0, 0)}
    cur = {0: CpuTicks(50, 0, 0, 99, 10, 0, 0, 0)}
    user, _system, _softirq, idle = procfs.cpu_percent_split(prev, cur)[0]
    assert (user, idle) == (100.0, 0.0)


def test_live_ctxt_counts_our_own_switches() -> None:
    before = procfs.read_ctxt()
    assert before is not None and before > 0
    ping: queue.Queue = queue.Queue()
    pong: queue.Queue = queue.Queue()
    t = threading.Thread(target=lambda: [pong.put(ping.get()) for _ in range(50)])
    t.start()
    for i in range(50):
        ping.put(i)
        pong.get()
    t.join()
    after = procfs.read_ctxt()
    assert after is not None and after > before


def test_live_cpu_ticks_follow_a_busy_pinned_thread(worker_factory) -> None:
    topo = read_topology()
    assert set(procfs.read_cpu_ticks()) == set(topo.online)
    cpu = ALLOWED[-1]
    worker = worker_factory(cpu)
    before = procfs.read_cpu_ticks()
    worker.call(lambda: _burn_until_ticks_move(cpu))
    after = procfs.read_cpu_ticks()
    user, system, softirq, idle = procfs.cpu_percent_split(before, after)[cpu]
    assert user + system > 0
    assert 0 <= idle < 100
    assert user + system + softirq + idle <= 100.0 + 1e-9


# --- /proc/interrupts ----------------------------------------------------------------


def test_ipis_from_real_x86_copy() -> None:
    ipis = procfs.read_ipis(X86)
    # RES and CAL rows; TLB shootdowns (also IPIs) are a different row and stay out.
    assert ipis == {"resched": {0: 22282, 1: 19966}, "callfunc": {0: 89418, 1: 82195}}


def test_ipis_from_handmade_arm64_with_an_offline_cpu() -> None:
    ipis = procfs.read_ipis(ARM64)
    assert ipis == {
        "resched": {0: 4137, 1: 2294, 3: 3310},
        "callfunc": {0: 25519, 1: 17443, 3: 20001},
    }


def test_fake_ipis_rows_sum_case_insensitively(tmp_path: Path) -> None:
    (tmp_path / "interrupts").write_text(
        "           CPU0       CPU1       \n"
        "RES:         10         20   Rescheduling interrupts\n"
        "CAL:        100        200   Function call interrupts\n"
        "CSF:          1          2   Single function call interrupts\n"
        "ERR:          0\n"
    )
    assert procfs.read_ipis(str(tmp_path)) == {
        "resched": {0: 10, 1: 20},
        "callfunc": {0: 101, 1: 202},
    }


def test_fake_ipis_without_ipi_rows(tmp_path: Path) -> None:
    (tmp_path / "interrupts").write_text("           CPU0\n  0:         12   IO-APIC  timer\n")
    assert procfs.read_ipis(str(tmp_path)) == {}


def test_fake_missing_interrupts_is_none() -> None:
    assert procfs.read_ipis(MISSING) is None


def test_live_ipis_cover_the_online_cpus() -> None:
    first = procfs.read_ipis()
    assert first is not None, procfs.missing_reason("interrupts")
    assert first, "no Rescheduling/Function call rows in /proc/interrupts"
    online = set(read_topology().online)
    for per_cpu in first.values():
        assert set(per_cpu) == online
    second = procfs.read_ipis()
    assert second is not None
    for kind, per_cpu in first.items():
        for cpu, n in per_cpu.items():
            assert second[kind][cpu] >= n


# --- one task ---------------------------------------------------------------------


def test_task_from_real_copy_with_parens_in_comm() -> None:
    assert procfs.read_task(PID, TID, X86) == TaskStat(
        voluntary=3, involuntary=2, last_cpu=1, utime_ticks=14, stime_ticks=0
    )


def test_task_gone_is_none() -> None:
    assert procfs.read_task(PID, TID + 1, X86) is None
    assert procfs.read_task(PID, TID, MISSING) is None


def _burn_thread_cpu(seconds: float) -> float:
    """Spin until this thread has used `seconds` of CPU time (not wall time)."""
    x = 0
    while time.thread_time() < seconds:
        for i in range(10_000):
            x += i
    return time.thread_time()


def test_live_task_reports_where_a_pinned_thread_runs(worker_factory) -> None:
    cpu = ALLOWED[-1]
    worker = worker_factory(cpu)
    # 50 ms of the thread's own CPU time is 5 ticks at 100 Hz, 12 at 250 Hz.
    worker.call(lambda: _burn_thread_cpu(0.05))
    for _ in range(5):  # each round trip blocks the worker in queue.get
        worker.call(lambda: None)
    task = procfs.read_task(os.getpid(), worker.tid)
    assert task is not None
    assert task.last_cpu == cpu
    assert task.utime_ticks + task.stime_ticks > 0
    assert task.voluntary >= 1
    assert task.involuntary >= 0


@needs_two_cpus
def test_live_task_last_cpu_follows_a_move(worker_factory) -> None:
    worker = worker_factory(ALLOWED[0])
    assert procfs.read_task(os.getpid(), worker.tid).last_cpu == ALLOWED[0]
    worker.call(lambda: os.sched_setaffinity(0, {ALLOWED[1]}))
    assert procfs.read_task(os.getpid(), worker.tid).last_cpu == ALLOWED[1]


def test_live_task_that_exited_is_none(worker_factory) -> None:
    worker = worker_factory(None)
    tid = worker.tid
    assert procfs.read_task(os.getpid(), tid) is not None
    worker.stop()
    # join() returns once Python is done with the thread; the kernel may take a
    # moment more to reap it, so poll (a bounded count, not a time limit).
    for _ in range(1000):
        task = procfs.read_task(os.getpid(), tid)
        if task is None:
            break
        time.sleep(0.001)
    assert task is None


# --- where the time goes --------------------------------------------------------------


def test_schedstat_task_from_real_copy() -> None:
    assert procfs.read_schedstat_task(PID, TID, X86) == TaskSchedStat(149865284, 48282, 5)
    assert procfs.read_schedstat_task(PID, TID, MISSING) is None


def test_migrations_from_real_copy() -> None:
    assert procfs.read_migrations(PID, TID, X86) == 0
    assert procfs.read_migrations(PID, TID, MISSING) is None


def test_schedstat_cpus_from_handmade_v17() -> None:
    stats = procfs.read_schedstat_cpus(SCHEDSTAT)
    assert stats is not None and sorted(stats) == [0, 1]
    assert stats[1] == CpuSchedStat(
        sched_count=1498765,
        sched_goidle=598876,
        ttwu_count=830012,
        ttwu_local=391002,
        rq_cpu_time_ns=97654321000,
        run_delay_ns=12222333444,
        pcount=901234,
    )
    assert procfs.missing_reason("schedstat_cpus", SCHEDSTAT) is None


def test_fake_schedstat_too_old(tmp_path: Path) -> None:
    (tmp_path / "schedstat").write_text("version 14\ntimestamp 1\ncpu0 0 0 0 0 1 2 3 4 5 6 7 8\n")
    assert procfs.read_schedstat_cpus(str(tmp_path)) is None
    assert "version 14" in procfs.missing_reason("schedstat_cpus", str(tmp_path))


def test_fake_schedstat_counters_switched_off(tmp_path: Path) -> None:
    (tmp_path / "schedstat").write_text((Path(SCHEDSTAT) / "schedstat").read_text())
    (tmp_path / "sys" / "kernel").mkdir(parents=True)
    (tmp_path / "sys" / "kernel" / "sched_schedstats").write_text("0\n")
    assert "kernel.sched_schedstats=0" in procfs.missing_reason("schedstat_cpus", str(tmp_path))


def test_cpu_pressure_from_real_copy() -> None:
    assert procfs.read_cpu_pressure(X86) == {
        "some": {"avg10": 0.03, "avg60": 2.85, "avg300": 1.69, "total": 9002708.0},
        "full": {"avg10": 0.0, "avg60": 0.0, "avg300": 0.0, "total": 0.0},
    }


def test_fake_missing_sources_are_none_with_a_reason() -> None:
    assert procfs.read_schedstat_cpus(MISSING) is None
    assert procfs.read_cpu_pressure(MISSING) is None
    reasons = {s: procfs.missing_reason(s, MISSING) for s in procfs.SOURCES}
    assert all(reasons.values()), reasons
    assert "CONFIG_SCHED_DEBUG" in reasons["migrations"]
    assert "CONFIG_SCHEDSTATS" in reasons["schedstat_cpus"]
    assert "CONFIG_PSI" in reasons["cpu_pressure"]
    assert "CONFIG_SCHED_INFO" in reasons["schedstat_task"]


def test_real_copy_sources_are_present() -> None:
    for source in procfs.SOURCES:
        expected_missing = source == "schedstat_cpus"  # this box has no CONFIG_SCHEDSTATS
        assert (procfs.missing_reason(source, X86) is not None) == expected_missing, source


def test_live_schedstat_task_counts_our_run_time() -> None:
    reason = procfs.missing_reason("schedstat_task")
    got = procfs.read_schedstat_task(os.getpid(), threading.get_native_id())
    assert (got is None) == (reason is not None)
    if got is None:
        pytest.skip(f"n/a ({reason})")
    assert got.run_ns > 0 and got.timeslices > 0


@needs_two_cpus
def test_live_migrations_count_a_move(worker_factory) -> None:
    reason = procfs.missing_reason("migrations")
    worker = worker_factory(ALLOWED[0])
    before = procfs.read_migrations(os.getpid(), worker.tid)
    assert (before is None) == (reason is not None)
    if before is None:
        pytest.skip(f"n/a ({reason})")
    worker.call(lambda: os.sched_setaffinity(0, {ALLOWED[1]}))
    after = procfs.read_migrations(os.getpid(), worker.tid)
    assert after is not None and after > before


def test_live_schedstat_cpus_matches_its_reason() -> None:
    got = procfs.read_schedstat_cpus()
    file_there = os.path.exists("/proc/schedstat")
    assert (got is not None) == file_there
    if got is not None:
        assert set(got) == set(read_topology().online)


def test_live_cpu_pressure() -> None:
    got = procfs.read_cpu_pressure()
    reason = procfs.missing_reason("cpu_pressure")
    assert (got is None) == (reason is not None)
    if got is None:
        pytest.skip(f"n/a ({reason})")
    assert 0.0 <= got["some"]["avg10"] <= 100.0
    assert got["some"]["total"] >= 0
