"""hackbench: real groups, fixed and continuous, and the load sweep's arithmetic.

Sizes are small (a few groups of a few fds, tens of loops) so each test runs
in about a second on the loaded 2-CPU box; no test asserts a time.
"""

from __future__ import annotations

import os
import resource
import sys
import threading

import psutil
import pytest
from conftest import ROOT, run_cli, two_cpus, wait_for

from ipctop.analysis.load_scaling import LoadPoint, find_knee, projection
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.engine.objects import _native
from ipctop.engine.workloads.hackbench_groups import run_fixed
from ipctop.engine.workloads.hackbench_launch import LAUNCHER, launcher
from ipctop.engine.workloads.load_limits import Load, check_load
from ipctop.errors import ResourceError

needs_native = pytest.mark.skipif(_native is None, reason="the native extension is not built")


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


# -- the seeds' projection column ----------------------------------------------


@pytest.mark.parametrize(
    ("groups", "seconds", "bracket"),
    [
        # 2.6.4: "19.4 (388), 39.0 (390), ... 218.8 (547), 262.0 (524)"
        (50, 19.4, 388),
        (100, 39.0, 390),
        (400, 218.8, 547),
        (500, 262.0, 524),
        # 2.6.4-mm1: "15.5 (310) to 181.7 (363)"
        (50, 15.5, 310),
        (500, 181.7, 363),
    ],
)
def test_the_projection_column_is_the_seeds_on_their_own_numbers(
    groups: int, seconds: float, bracket: int
) -> None:
    assert round(projection(seconds, groups)) == bracket


def test_a_knee_is_named_where_the_cost_interval_rises_above_the_cheapest() -> None:
    flat = [LoadPoint(g, (g * 0.39, g * 0.40, g * 0.41), 1) for g in (50, 100, 200)]
    assert find_knee(flat) is None
    steep = [*flat, LoadPoint(400, (400 * 0.54, 400 * 0.55, 400 * 0.56), 1)]
    knee = find_knee(steep)
    assert knee is not None and knee.at.units == 400 and knee.base.units == 50
    assert "knee at 400 groups" in knee.line("group")
    # Overlapping intervals are noise, not a knee, however far the medians are.
    noisy = [LoadPoint(1, (1.0, 1.5, 2.0), 1), LoadPoint(2, (1.9, 3.0, 4.2), 1)]
    assert find_knee(noisy) is None


def test_a_sub_millisecond_time_keeps_its_own_interval() -> None:
    # A small run takes well under 1 ms; the interval must still bracket it.
    p = LoadPoint(1, (0.00030, 0.00035, 0.00040), messages=400)
    t = p.time
    assert t.low is not None and t.high is not None
    assert t.low < 0.00030 and 0.00035 == t.median and 0.00040 < t.high < 0.001
    # the same runs 1000 times slower: the same interval, scaled
    slow = LoadPoint(1, (0.30, 0.35, 0.40), messages=400).time
    assert slow.low == pytest.approx(t.low * 1000) and slow.high == pytest.approx(t.high * 1000)


# -- the fixed form: real tasks, nothing left ----------------------------------


@needs_native
@two_cpus
@pytest.mark.parametrize("transport", ["socket", "pipe"])
@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_a_fixed_run_passes_its_messages_and_leaves_nothing(transport: str, mode: str) -> None:
    fds_before = _fds()
    threads_before = threading.active_count()
    me = psutil.Process()
    native_before = me.num_threads()
    # An earlier test killed by its timeout may have left zombies: only this run's count.
    children_before = {c.pid for c in me.children()}
    seconds = run_fixed(3, fds=4, loops=20, size=100, transport=transport, mode=mode).seconds
    assert seconds > 0
    assert _fds() == fds_before
    assert threading.active_count() == threads_before
    assert wait_for(lambda: me.num_threads() <= native_before), (me.num_threads(), native_before)
    assert not [c for c in me.children() if c.pid not in children_before]  # all reaped


@needs_native
def test_a_fixed_run_keeps_its_tasks_on_the_cpus_given() -> None:
    cpu = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    assert run_fixed(1, fds=2, loops=5, mode="threads", cpus=[cpu]).seconds > 0
    assert os.sched_getaffinity(0) == before  # the caller's own mask is back


def test_the_hackbench_command_prints_hackbench_s_lines() -> None:
    if _native is None:
        pytest.skip("the native extension is not built")
    r = run_cli("hackbench", "--groups", "2", "--fds", "3", "--loops", "10", "--mode", "thread")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == (
        "Running in threaded mode with 2 groups using 6 file descriptors each (== 12 tasks)"
    )
    assert lines[1] == "Each sender will pass 10 messages of 100 bytes"
    assert lines[2].startswith("Time: ") and float(lines[2].split()[1]) >= 0
    assert "engine native" in lines[3] and "tasks are threads" in lines[3]


@needs_native
def test_the_hackbench_command_names_who_forked_the_processes() -> None:
    r = run_cli("hackbench", "--groups", "1", "--fds", "2", "--loops", "5", "--mode", "process")
    assert r.returncode == 0, r.stderr
    said = "tasks forked by the small launcher" if launcher() else "tasks forked by ipctop itself"
    assert said in r.stdout.splitlines()[3]


@needs_native
@two_cpus
def test_a_task_killed_mid_run_ends_the_run_with_one_line_and_nothing_left() -> None:
    import signal

    # Loops enough that the run is still going when receiver R0 is killed: the
    # senders' writes to it fail (EPIPE) and they end; R1 must then see EOF
    # (it closed the write ends it inherited) instead of waiting for ever.
    proc = _endless_process_run(1)
    try:
        launcher = _the_launcher(psutil.Process(proc.pid))
        assert wait_for(lambda: len(launcher.children()) == 4, timeout=30), launcher.children()
        tasks = sorted(launcher.children(), key=lambda c: c.pid)  # R0, R1, then S0, S1
        # Under way once a sender has written a message (not only its "ready").
        assert wait_for(lambda: tasks[-1].io_counters().write_chars > 100, timeout=30)
        os.kill(tasks[0].pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "a task was killed by a signal" in lines[0], err
    assert "Time:" not in out
    assert not [t for t in tasks if _alive(t)]


def _endless_process_run(groups: int):
    """`ipctop hackbench` in process mode with loops enough to outlast the test."""
    import subprocess

    return subprocess.Popen(
        [sys.executable, "-m", "ipctop", "hackbench", "--groups", str(groups), "--fds", "2",
         "--loops", "100000000", "--mode", "process"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )  # fmt: skip


def _the_launcher(ipctop: psutil.Process) -> psutil.Process:
    """ipctop's one child in a process-mode fixed run: the launcher, which forks the tasks."""
    assert wait_for(lambda: len(ipctop.children()) == 1, timeout=30), ipctop.children()
    child = ipctop.children()[0]
    assert wait_for(lambda: child.exe() == str(LAUNCHER), timeout=30), child.cmdline()
    return child


@needs_native
@two_cpus
def test_process_mode_tasks_are_the_launchers_and_die_with_a_killed_ipctop() -> None:
    """The tasks are forked by the small launcher, never by ipctop's Python process (whose
    page tables every task would copy and tear down inside the timed span), and a
    SIGKILLed ipctop takes the launcher and every task with it (parent-death signals)."""
    import signal

    if launcher() is None:
        pytest.skip("the launcher executable was not built (setup.py builds it with the extension)")
    proc = _endless_process_run(2)
    try:
        ipctop = psutil.Process(proc.pid)
        child = _the_launcher(ipctop)
        assert wait_for(lambda: len(child.children()) == 8, timeout=30), child.children()
        tasks = child.children()
        assert all(t.ppid() == child.pid for t in tasks)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert wait_for(lambda: not _alive(child) and not [t for t in tasks if _alive(t)], 30), [
        p.pid for p in [child, *tasks] if _alive(p)
    ]


def _alive(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # reaped between the two questions: not alive
        return False


# -- limits before the first task ------------------------------------------------


def _lowered_nofile(limit: int):
    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    return lower


def test_a_lowered_nofile_is_refused_before_any_task_with_exit_3() -> None:
    import subprocess

    r = subprocess.run(
        [sys.executable, "-m", "ipctop", "hackbench", "--groups", "50", "--mode", "thread"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        preexec_fn=_lowered_nofile(256),
    )
    assert r.returncode == 3, r.stdout + r.stderr
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "RLIMIT_NOFILE" in err[0] and "ulimit -n" in err[0], r.stderr
    assert "Time:" not in r.stdout


def test_threads_max_and_pid_max_and_somaxconn_are_named(tmp_path) -> None:
    # A fake /proc (the box's own sysctls cannot be lowered for one test):
    # loadavg says 100 tasks run; the limits are set just below what is asked.
    (tmp_path / "sys/kernel").mkdir(parents=True)
    (tmp_path / "sys/net/core").mkdir(parents=True)
    (tmp_path / "loadavg").write_text("0.00 0.00 0.00 1/100 1\n")
    (tmp_path / "sys/kernel/threads-max").write_text("1000\n")
    (tmp_path / "sys/kernel/pid_max").write_text("100000\n")
    (tmp_path / "sys/net/core/somaxconn").write_text("16\n")
    check_load(Load(tasks=900, fds=0), proc=tmp_path)
    with pytest.raises(ResourceError, match="kernel.threads-max is 1000"):
        check_load(Load(tasks=901, fds=0), proc=tmp_path)
    (tmp_path / "sys/kernel/threads-max").write_text("100000\n")
    (tmp_path / "sys/kernel/pid_max").write_text("500\n")
    with pytest.raises(ResourceError, match="kernel.pid_max is 500"):
        check_load(Load(tasks=401, fds=0), proc=tmp_path)
    (tmp_path / "sys/kernel/pid_max").write_text("100000\n")
    with pytest.raises(ResourceError, match="net.core.somaxconn is 16"):
        check_load(Load(tasks=1, fds=0, listen_backlog=20), proc=tmp_path)


# -- the continuous form ---------------------------------------------------------


@needs_native
@two_cpus
@pytest.mark.parametrize("transport", ["socket", "pipe"])
@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_groups_added_and_removed_live_leave_nothing(transport: str, mode: str) -> None:
    cpus = tuple(sorted(os.sched_getaffinity(0))[:2])
    config = RunConfig(
        workload="hackbench", cpus=cpus, mode=mode, fds=3, transport=transport, placement="cross"
    )
    fds_before = _fds()
    me = psutil.Process()
    native_before = me.num_threads()
    engine = Engine(config)
    try:
        engine.start(2)
        assert [len(p.ends) for p in engine.pairs] == [6, 6]
        assert engine.pairs[0].ends[0].role == "S0" and engine.pairs[0].ends[3].role == "R0"

        def delivered(pair) -> int:
            return sum(engine.counters.rounds(e.slot) for e in pair.ends)

        assert wait_for(lambda: all(delivered(p) > 0 for p in engine.pairs))
        # Senders count their writes in ops[0], receivers their messages as rounds. The
        # receivers' messages may all be S1's and S2's so far (a loaded box): wait for S0's.
        slot = engine.pairs[0].ends[0].slot
        assert wait_for(lambda: engine.counters.read(slot).ops[0] > 0)
        assert engine.counters.read(slot).rounds == 0
        removed = engine.remove_pair()
        assert removed is not None and len(engine.pairs) == 1
        still = delivered(engine.pairs[0])
        assert wait_for(lambda: delivered(engine.pairs[0]) > still)  # the other group goes on
        engine.add_pair()
        assert wait_for(lambda: delivered(engine.pairs[1]) > 0)
        assert not [m for m in engine.poll() if "failed" in m]  # contention notes may come
    finally:
        engine.stop()
    assert not [e for e in engine.events if "did not stop" in e or "killed" in e]
    assert _fds() <= fds_before + 2  # the counter blocks' mappings hold no descriptor
    assert wait_for(lambda: me.num_threads() <= native_before + 1)
    assert not [c for c in me.children() if c.status() != psutil.STATUS_ZOMBIE]


@needs_native
@two_cpus
def test_ipctop_run_streams_hackbench_groups() -> None:
    r = run_cli(
        "run", "-w", "hackbench", "--groups", "2", "--fds", "2", "--seconds", "1",
        "--interval", "0.5",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "hackbench · 2 fds · 100 B · socket" in r.stdout
    assert "2 pair(s)" in r.stdout
    rows = [x for x in r.stdout.splitlines() if x.startswith("t=")]
    assert rows and all("0R0@" in x and "1R1@" in x for x in rows)


# -- the load sweep --------------------------------------------------------------


@needs_native
@two_cpus
def test_the_load_sweep_prints_time_interval_cost_and_projection() -> None:
    r = run_cli(
        "sweep", "-w", "hackbench", "--groups", "2,1", "--fds", "2", "--loops", "10",
        "--repeat", "2",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "groups 1,2 · 2 fresh run(s) per load" in lines[0]
    assert "projection 1000 groups [s]" in lines[1]
    rows = [x.split() for x in lines[2:4]]
    assert [row[0] for row in rows] == ["1", "2"] and [row[1] for row in rows] == ["4", "8"]
    for row in rows:
        assert row[3].startswith("[") and row[5] == "n=2"
        groups, median, cost_ms, proj = int(row[0]), float(row[2]), float(row[7]), float(row[8])
        # ms/group and the projection are the median scaled, as the seeds' bracket
        assert proj == pytest.approx(median * 1000 / groups, rel=0.002)
        assert cost_ms == pytest.approx(median * 1e3 / groups, rel=0.002)
    assert "knee" in lines[4]


def test_a_bad_groups_list_is_one_line_and_exit_2() -> None:
    r = run_cli("sweep", "-w", "hackbench", "--groups", "1,x")
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "--groups" in r.stderr
    r = run_cli("sweep", "-w", "pipe", "--groups", "1,2")
    assert r.returncode == 2 and "-w hackbench" in r.stderr


def test_a_collapse_is_named_on_the_seed_s_volanomark_shape() -> None:
    from ipctop.analysis.load_scaling import RatePoint, find_collapse

    # 2.6.4: 5850 msgs/s at 15 rooms, 2857 at 60, 1024 at 75 (three runs each, planted)
    pts = [
        RatePoint(15, (5800.0, 5850.0, 5900.0)),
        RatePoint(45, (5700.0, 5790.0, 5880.0)),
        RatePoint(60, (2800.0, 2857.0, 2900.0)),
        RatePoint(75, (1000.0, 1024.0, 1050.0)),
    ]
    c = find_collapse(pts)
    assert c is not None and c.at.units == 60 and c.best.units == 15
    assert c.line("room").startswith("collapse at 60 rooms: 2,857 [")
    # mm1 held 5000-6221 up to 135: no collapse in a flat, noisy band
    held = [RatePoint(r, (5000.0, 5600.0, 6221.0)) for r in (15, 60, 135)]
    assert find_collapse(held) is None


def test_the_continuous_form_checks_every_group_before_the_first_starts() -> None:
    import subprocess

    r = subprocess.run(
        [sys.executable, "-m", "ipctop", "run", "-w", "hackbench", "--groups", "10",
         "--seconds", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        preexec_fn=_lowered_nofile(200),
    )  # fmt: skip
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and "10 hackbench group(s)" in r.stderr
    assert "RLIMIT_NOFILE is 200" in r.stderr and "t=" not in r.stdout
