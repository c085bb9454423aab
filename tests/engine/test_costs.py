"""Where the time goes: derived costs from recorded /proc files, and one live run."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from conftest import wait_for

from ipctop.engine import procfs
from ipctop.engine.config import RunConfig
from ipctop.engine.costs import Costs, CostTracker, CpuCost, ThreadCost, merge, na
from ipctop.engine.engine import Engine
from ipctop.engine.sample import IpiSample, ThreadSample
from ipctop.engine.sampler import Sampler
from ipctop.live.measure import measure_engine

FIX = Path(__file__).resolve().parents[1] / "fixtures"
PID, TID = 4785, 4786


class FakeEnd:
    """The engine's view of one end, pointing at the recorded task files."""

    pair, role, pid, tid, bound_cpu = 0, "A", PID, TID, 0


def thread(rounds: int, ops: float) -> ThreadSample:
    return ThreadSample(0, "A", TID, 0, 0, rounds, ops)


def task_files(proc: Path, run_ns: int, wait_ns: int, migrations: int, utime: int, stime: int):
    d = proc / str(PID) / "task" / str(TID)
    (d / "schedstat").write_text(f"{run_ns} {wait_ns} 5\n")
    sched = (d / "sched").read_text().splitlines()
    sched = [
        f"se.nr_migrations                             :                    {migrations}"
        if ln.startswith("se.nr_migrations") else ln
        for ln in sched
    ]  # fmt: skip
    (d / "sched").write_text("\n".join(sched) + "\n")
    stat = (d / "stat").read_text().rsplit(") ", 1)  # comm may hold ") "
    fields = stat[1].split()
    fields[11], fields[12] = str(utime), str(stime)
    (d / "stat").write_text(stat[0] + ") " + " ".join(fields) + "\n")


def read_task(proc: Path):
    """What the sampler hands CostTracker: its one pass over the tick's threads."""
    from ipctop.engine.task_reads import read_tasks

    return {(0, "A", TID): read_tasks([(PID, TID)], str(proc), detail=True)[0]}


def test_recorded_proc_gives_exact_costs(tmp_path) -> None:
    # Real-shaped copies (proc_x86_real from a live box; schedstat v17 hand-made).
    proc = tmp_path / "proc"
    shutil.copytree(FIX / "proc_x86_real", proc, symlinks=True)
    shutil.copy(FIX / "proc_schedstat_v17_handmade" / "schedstat", proc / "schedstat")
    task_files(proc, 1_000_000, 500_000, 0, 10, 30)
    tracker = CostTracker(str(proc))
    tracker.update([FakeEnd()], (thread(1000, 0),), read_task(proc), (), 1.0, False, {})
    # One second later: 10,000 more rounds, 40 ms more run time (ticks: 1 user, 3 system).
    task_files(proc, 41_000_000, 2_500_000, 2, 11, 33)
    ipis = (IpiSample(0, 200.0, 20.0),)
    c = tracker.update(
        [FakeEnd()], (thread(11_000, 10_000.0),), read_task(proc), ipis, 1.0, True, {}
    )
    t = c.threads[0]
    assert t.cpu_us_per_round == pytest.approx(4.0)
    assert t.user_us_per_round == pytest.approx(1.0)
    assert t.sys_us_per_round == pytest.approx(3.0)
    assert t.run_delay_us_per_round == pytest.approx(0.2)
    assert t.migrations == 2
    assert c.rtt_us == ((0, pytest.approx(100.0)),)
    assert c.system_share_pct == pytest.approx(75.0)
    assert c.cpus[0].resched_per_round == pytest.approx(0.02)
    assert c.cpus[0].callfunc_per_round == pytest.approx(0.002)
    assert c.cpu_pressure_avg10 == pytest.approx(0.03)
    assert "oversubscribed: more pairs than CPUs" in c.flags


def test_missing_sources_say_why_and_never_read_zero(tmp_path) -> None:
    proc = tmp_path / "proc"
    shutil.copytree(FIX / "proc_x86_real", proc, symlinks=True)
    d = proc / str(PID) / "task" / str(TID)
    (d / "schedstat").unlink()  # FAKE: a kernel without CONFIG_SCHED_INFO
    (d / "sched").unlink()  # ... and without CONFIG_SCHED_DEBUG
    shutil.rmtree(proc / "pressure")  # ... and without PSI
    (proc / "thread-self").unlink(missing_ok=True)
    tracker = CostTracker(str(proc))
    tracker.update([FakeEnd()], (thread(0, 0),), read_task(proc), (), 1.0, False, {})
    c = tracker.update([FakeEnd()], (thread(100, 100.0),), read_task(proc), (), 1.0, False, {})
    t = c.threads[0]
    assert t.run_delay_us_per_round is None
    assert c.cpu_pressure_avg10 is None
    assert all(x.sched_per_s is None for x in c.cpus)
    for name in ("run delay", "cpu pressure", "wake-ups", "migrations"):
        assert name in c.missing, c.missing
    assert "counted from CPU changes" in c.missing["migrations"]
    assert na(t.run_delay_us_per_round, c.missing["run delay"]).startswith("n/a (")


def rounds(e: Engine) -> list[int]:
    return [e.counters.rounds(end.slot) for end in e.ends()]


def ticks(e: Engine) -> int:
    """The ends' user and system CPU ticks, which the system share is made of."""
    tasks = [procfs.read_task(end.pid, end.tid) for end in e.ends()]
    return sum(t.utime_ticks + t.stime_ticks for t in tasks if t is not None)


def test_live_costs_of_a_real_pair() -> None:
    with Engine(RunConfig("sysv-sem", "same", "threads", (0,))) as e:
        e.start(1)
        sampler = Sampler(e)
        sampler.detail = True
        sampler.sample()
        at, ticked = rounds(e), ticks(e)
        time.sleep(0.3)
        # A window with rounds and CPU ticks in it: a loaded box can leave the pair
        # none in 0.3 s, and a round-less window has no cost per round, a tick-less
        # one no system share (seen at load 1500: system_share_pct None).
        wait_for(
            lambda: all(n - m >= 100 for n, m in zip(rounds(e), at)) and ticks(e) - ticked >= 2,
            timeout=30,
        )
        c = sampler.sample().costs
    assert c is not None and len(c.threads) == 2
    assert all(t.cpu_us_per_round and t.cpu_us_per_round > 0 for t in c.threads)
    assert c.rtt_us and c.rtt_us[0][1] > 0
    assert c.system_share_pct is not None and 0 <= c.system_share_pct <= 100
    assert all(t.migrations == 0 for t in c.threads)  # pinned, so it must stay put


def test_measure_engine_reads_costs_only_when_a_caller_asks() -> None:
    # check and run (without --jsonl) throw costs away: the default is the cheap path.
    with Engine(RunConfig("sysv-sem", "same", "threads", (0,))) as e:
        e.start(1)
        cheap = measure_engine(e, 0.4, 0.0, 0.2)
        detailed = measure_engine(e, 0.4, 0.0, 0.2, detail=True)
    assert cheap.total_ops_per_s > 0 and detailed.total_ops_per_s > 0
    assert cheap.costs is None and all(s.costs is None for s in cheap.timeline)
    assert detailed.costs is not None and len(detailed.costs.threads) == 2


def test_merge_means_each_figure_sums_migrations_and_keeps_none_as_none() -> None:
    a1 = ThreadCost(0, "A", 1.0, 0.5, 0.5, None, 2, 1.0, None)
    a2 = ThreadCost(0, "A", 3.0, 1.5, 1.5, None, 3, None, None)
    b = ThreadCost(0, "B", 2.0, 1.0, 1.0, 4.0, 0, 0.0, 0.0)
    m = merge([Costs(threads=(a1, b), cpus=(CpuCost(0, 1.0, None, 10, 5, 1),)),
               Costs(threads=(a2,), cpus=(CpuCost(0, 3.0, None, 20, 5, 1),))])  # fmt: skip
    assert m is not None
    assert m.threads == (ThreadCost(0, "A", 2.0, 1.0, 1.0, None, 5, 1.0, None), b)
    assert m.cpus == (CpuCost(0, 2.0, None, 15.0, 5.0, 1.0),)
