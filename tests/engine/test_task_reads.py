"""One pass over every thread's /proc files per tick: the native reader against
the Python one, on real threads of this process and on the recorded trees."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ipctop.engine import objects, procfs, task_reads
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.engine.sampler import Sampler

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
X86 = str(FIXTURES / "proc_x86_real")
MISSING = str(FIXTURES / "proc_missing_fake")
PID, TID = 4785, 4786  # the real thread copied into the x86 tree; comm "ipc) (x y"

needs_native = pytest.mark.skipif(
    objects._native is None, reason="the native extension is not built"
)
needs_two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 allowed CPUs")


def native_read(ids: list[tuple[int, int]], proc: str = "/proc", detail: bool = False) -> list:
    assert objects._native is not None
    return task_reads.read_tasks(ids, proc, detail)


class Parked:
    """Real threads that ran a little, then block: their counters stand still
    while both readers look, so the two must agree to the number."""

    def __init__(self, n: int) -> None:
        self.release = threading.Event()
        self.tids: list[int] = []
        ready = threading.Barrier(n + 1)
        lock = threading.Lock()

        def run(i: int) -> None:
            tid = threading.get_native_id()
            if i == 0:
                # The name real ends can have: a space and ")" inside comm.
                Path(f"/proc/self/task/{tid}/comm").write_text("ipc) (x y")
            sum(range(20_000 * (i + 1)))  # some CPU time, different per thread
            with lock:
                self.tids.append(tid)
            ready.wait()
            self.release.wait()

        self.threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
        for t in self.threads:
            t.start()
        ready.wait()

    def ids(self) -> list[tuple[int, int]]:
        return [(os.getpid(), tid) for tid in sorted(self.tids)]

    def stop(self) -> None:
        self.release.set()
        for t in self.threads:
            t.join()


@pytest.fixture
def parked():
    made: list[Parked] = []

    def make(n: int) -> Parked:
        made.append(Parked(n))
        return made[-1]

    yield make
    for p in made:
        p.stop()


def _settled(ids: list[tuple[int, int]], detail: bool, read=None) -> tuple[list, list]:
    """`read`'s result (native by default) and Python's, once two Python readings
    around it agree: a parked thread can still be on its way into the wait."""
    read = read or (lambda: native_read(ids, detail=detail))
    for _ in range(50):
        before = task_reads.python_read_tasks(ids, detail=detail)
        got = read()
        after = task_reads.python_read_tasks(ids, detail=detail)
        if before == after:
            return got, after
    raise AssertionError("parked threads kept moving")


@needs_native
@pytest.mark.parametrize("detail", [False, True])
def test_native_and_python_agree_on_real_threads(parked, detail: bool) -> None:
    threads = parked(16)
    gone = max(t for _, t in threads.ids()) + 100_000  # no such thread of ours
    ids = threads.ids() + [(os.getpid(), gone)]
    native, python = _settled(ids, detail)
    assert native == python
    assert native[-1] is None
    assert all(t is not None for t in native[:-1])
    # A field off by one (comm's ")" and space) would not be a CPU of ours.
    assert all(t.last_cpu in os.sched_getaffinity(0) for t in native[:-1])
    if detail and procfs.missing_reason("schedstat_task") is None:
        assert all(t.sched is not None and t.sched.run_ns > 0 for t in native[:-1])
    if not detail:
        assert all(t.sched is None and t.migrations is None for t in native[:-1])


@needs_native
def test_native_reads_the_running_caller_too() -> None:
    # The calling thread is running while it reads itself: counters move, so
    # only what cannot move is compared.
    me = (os.getpid(), threading.get_native_id())
    (native,) = native_read([me], detail=True)
    (python,) = task_reads.python_read_tasks([me], detail=True)
    assert native is not None and python is not None
    assert native.last_cpu in os.sched_getaffinity(0)
    assert (native.sched is None) == (python.sched is None)
    assert (native.migrations is None) == (python.migrations is None)


@needs_native
@pytest.mark.parametrize("detail", [False, True])
def test_native_and_python_agree_on_recorded_trees(detail: bool) -> None:
    ids = [(PID, TID), (PID, TID + 1)]
    native = native_read(ids, X86, detail)
    assert native == task_reads.python_read_tasks(ids, X86, detail)
    assert native[1] is None
    assert native[0] is not None
    assert (native[0].voluntary, native[0].utime_ticks) == (3, 14)  # as test_procfs reads it
    if detail:
        assert native[0].sched == procfs.TaskSchedStat(149865284, 48282, 5)
    assert native_read(ids, MISSING, detail) == [None, None]


@needs_native
def test_fake_missing_detail_files_are_none_not_gone(tmp_path) -> None:
    proc = tmp_path / "proc"
    shutil.copytree(X86, proc, symlinks=True)
    task = proc / str(PID) / "task" / str(TID)
    (task / "schedstat").unlink()  # FAKE: a kernel without CONFIG_SCHED_INFO
    (task / "sched").unlink()  # ... and without CONFIG_SCHED_DEBUG
    (row,) = native_read([(PID, TID)], str(proc), detail=True)
    assert row is not None and row.sched is None and row.migrations is None
    assert [row] == task_reads.python_read_tasks([(PID, TID)], str(proc), detail=True)


@needs_native
def test_fake_status_without_switch_counts_is_an_error_in_both(tmp_path) -> None:
    proc = tmp_path / "proc"
    shutil.copytree(X86, proc, symlinks=True)
    status = proc / str(PID) / "task" / str(TID) / "status"
    kept = [ln for ln in status.read_text().splitlines() if "ctxt_switches" not in ln]
    status.write_text("\n".join(kept) + "\n")  # FAKE: a kernel that dropped the lines
    with pytest.raises(ValueError, match="ctxt_switches"):
        native_read([(PID, TID)], str(proc))
    with pytest.raises(ValueError, match="ctxt_switches"):
        task_reads.python_read_tasks([(PID, TID)], str(proc))


def test_without_the_extension_the_python_pass_answers(monkeypatch) -> None:
    monkeypatch.setattr("ipctop.engine.objects._native", None)  # FAKE: a box without a compiler
    (row,) = task_reads.read_tasks([(PID, TID)], X86, detail=True)
    assert row == task_reads.python_read_tasks([(PID, TID)], X86, detail=True)[0]
    assert row is not None and row.sched == procfs.TaskSchedStat(149865284, 48282, 5)


@needs_native  # the Python pass calls the per-thread readers itself
@needs_two_cpus
def test_a_detail_tick_reads_every_thread_in_one_pass(monkeypatch) -> None:
    calls: list[int] = []
    real = task_reads.TaskFiles.read

    def counted(self, ids, detail=False):
        calls.append(len(ids))
        return real(self, ids, detail)

    def per_thread(*_a, **_k):
        raise AssertionError("a per-thread /proc read inside a tick")

    engine = Engine(RunConfig(workload="sysv-msg", placement="same", cpus=(0, 1)))
    engine.start(2)
    try:
        sampler = Sampler(engine)
        sampler.detail = True
        sampler.sample()
        monkeypatch.setattr(task_reads.TaskFiles, "read", counted)
        for name in ("read_task", "read_schedstat_task", "read_migrations"):
            monkeypatch.setattr(procfs, name, per_thread)
        s = sampler.sample()
    finally:
        engine.stop()
    assert calls == [4]
    assert s.costs is not None and len(s.costs.threads) == 4


@pytest.mark.parametrize("reader", [pytest.param("native", marks=needs_native), "python"])
def test_detail_takes_switch_counts_from_sched_and_status_only_without(tmp_path, reader) -> None:
    read = native_read if reader == "native" else task_reads.python_read_tasks
    proc = tmp_path / "proc"
    shutil.copytree(X86, proc, symlinks=True)
    task = proc / str(PID) / "task" / str(TID)
    want = read([(PID, TID)], str(proc), detail=True)
    # FAKE: status unreadable; sched has the same counts, so detail never opens it.
    status = (task / "status").read_text()
    (task / "status").unlink()
    assert read([(PID, TID)], str(proc), detail=True) == want
    assert read([(PID, TID)], str(proc), detail=False) == [None]
    # FAKE: a sched without the switch lines: status gives them after all.
    (task / "status").write_text(status.replace("ctxt_switches:\t3", "ctxt_switches:\t7"))
    sched = task / "sched"
    sched.write_text(
        "".join(ln for ln in sched.read_text().splitlines(True) if "voluntary_switches" not in ln)
    )
    (got,) = read([(PID, TID)], str(proc), detail=True)
    assert got is not None and (got.voluntary, got.involuntary, got.migrations) == (
        7,
        2,
        want[0].migrations,
    )


def _fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


@needs_native
def test_kept_files_read_the_same_as_fresh_ones_tick_after_tick(parked) -> None:
    threads = parked(8)
    ids = threads.ids()
    files = task_reads.TaskFiles()
    try:
        for _ in range(3):  # the first tick opens, the next ones pread what it kept
            kept, python = _settled(ids, True, lambda: files.read(ids, detail=True))
            assert kept == python
        has_sched = procfs.missing_reason("migrations") is None
        assert files.open_files == len(ids) * (3 if has_sched else 4)
    finally:
        files.close()


@needs_native
def test_a_kept_file_gives_the_numbers_of_now() -> None:
    me = [(os.getpid(), threading.get_native_id())]
    files = task_reads.TaskFiles()
    try:
        (first,) = files.read(me, detail=True)
        ticks = os.times()
        while os.times().user + os.times().system < ticks.user + ticks.system + 0.05:
            pass  # this thread's own CPU time moves on
        (then,) = files.read(me, detail=True)
    finally:
        files.close()
    assert first is not None and then is not None
    assert then.utime_ticks + then.stime_ticks > first.utime_ticks + first.stime_ticks
    if first.sched is not None and then.sched is not None:
        assert then.sched.run_ns > first.sched.run_ns


@needs_native
def test_kept_files_are_closed_when_threads_go_and_on_close(parked) -> None:
    before = _fd_count()
    files = task_reads.TaskFiles()
    threads = parked(6)
    ids = threads.ids()
    files.read(ids, detail=False)
    assert _fd_count() == before + 2 * len(ids)  # stat and status of each
    for _ in range(task_reads.KEEP_READS - 1):
        # Kept a while: the sampler asks about a different few ends at each reading.
        files.read(ids[:2], detail=False)
        assert files.open_files == 2 * len(ids)
    files.read(ids[:2], detail=False)  # four unasked for KEEP_READS reads: theirs are closed
    assert files.open_files == 4
    threads.stop()  # they all exit: their kept files now read as gone
    for _pid, tid in ids[:2]:
        # join() returns before the kernel has quite let the thread go.
        for _ in range(1000):
            if not os.path.exists(f"/proc/self/task/{tid}"):
                break
            threading.Event().wait(0.01)
    assert files.read(ids[:2], detail=False) == [None, None]
    assert files.open_files == 0
    files.read([(os.getpid(), threading.get_native_id())], detail=True)
    files.close()
    assert _fd_count() == before
    with pytest.raises(ValueError, match="closed"):
        files.read(ids)


@needs_native
def test_threads_beyond_the_file_budget_are_read_without_keeping(parked) -> None:
    threads = parked(4)
    ids = threads.ids()
    files = task_reads.TaskFiles()
    files.budget = 1  # FAKE: a process whose file limit leaves room for one thread's files
    try:
        kept, python = _settled(ids, True, lambda: files.read(ids, detail=True))
        assert kept == python
        assert 0 < files.open_files <= task_reads.KEPT_PER_THREAD
    finally:
        files.close()


@needs_native
def test_a_reader_still_running_at_exit_does_not_find_its_files_closed(tmp_path) -> None:
    # A daemon sampler mid-tick when the interpreter exits: closing its files at
    # exit made CI print "ValueError: TaskFiles is closed" after the suite.
    child = tmp_path / "child.py"
    child.write_text(
        "import atexit, time\n"
        # Registered first, so it runs after the finalizers: the readers' window.
        "atexit.register(time.sleep, 0.2)\n"
        "import os, threading\n"
        "from ipctop.engine.task_reads import TaskFiles\n"
        "files = TaskFiles()\n"
        "me = [(os.getpid(), os.getpid())]\n"
        "def spin():\n"
        "    while True:\n"
        "        files.read(me, detail=True)\n"
        "        time.sleep(0.001)\n"
        "for _ in range(2):\n"
        "    threading.Thread(target=spin, daemon=True).start()\n"
        "time.sleep(0.1)\n"
    )
    done = subprocess.run([sys.executable, str(child)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "closed" not in done.stderr, done.stderr
