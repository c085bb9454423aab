"""Issue 16, items 8 and 14: a stopped world and a moved thread, for real.

Real SIGSTOP/SIGCONT on real processes and a real sched_setaffinity on a
real end's tid; nothing is timed beyond generous polling.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import threading
import time

import psutil
import pytest
from conftest import two_cpus, wait_for
from ipctop_child import ipctop, read_until
from jsonl_lines import split_jsonl

from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine, resolve_engine
from ipctop.engine.sample import Sample, ThreadSample
from ipctop.engine.sampler import Sampler
from ipctop.engine.stalls import StallSummary
from ipctop.engine.workloads.msgbench import LIFECYCLE_OPS
from ipctop.live.measure import measure_engine
from ipctop.output.records.record_io import read_record

ENGINES = [e for e in ("native", "python") if e == "python" or resolve_engine() == "native"]
native = pytest.mark.skipif(resolve_engine() != "native", reason="needs the native engine")


@two_cpus
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_a_moved_end_is_reported_in_the_next_sample(mode: str, engine: str) -> None:
    with Engine(RunConfig("sysv-sem", "same", mode, (0, 1), engine)) as e:
        e.start(1)  # pair 0: both ends on CPU 0
        sampler = Sampler(e, interval=0.5)
        assert wait_for(lambda: all(t.rounds > 0 for t in sampler.sample().threads))
        due = time.monotonic() + sampler.interval
        before = sampler.sample_at(due)
        victim = e.pairs[0].ends[0]
        os.sched_setaffinity(victim.tid, {1})  # what `taskset -p -c 1 TID` does
        after = sampler.sample_at(due + sampler.interval)
    assert before is not None and after is not None
    was = next(t for t in before.threads if t.tid == victim.tid)
    now = next(t for t in after.threads if t.tid == victim.tid)
    assert was.last_cpu == 0
    # The very next sample says it, with the cause, even when the end's own
    # answer is an interval old (a loaded box): its affinity is read too.
    said = [ev for ev in after.events if f"pair 0 {victim.role} is bound to CPU 0 but" in ev]
    assert len(said) == 1 and "affinity is now [1]" in said[0], after.events
    if "has not run elsewhere yet" not in said[0]:
        assert "ran on CPU 1" in said[0] and now.last_cpu == 1 and now.off_cpu, (said, now)


@two_cpus
@native
def test_a_moved_end_that_cannot_answer_is_still_reported_next() -> None:
    # Stopped, the end answers nothing, so only its affinity can tell: the
    # worst case of an answer an interval old.
    with Engine(RunConfig("sysv-sem", "same", "processes", (0, 1), "native")) as e:
        e.start(1)
        sampler = Sampler(e, interval=0.5)
        assert wait_for(lambda: all(t.rounds > 0 for t in sampler.sample().threads))
        victim = e.pairs[0].ends[1]
        end = psutil.Process(victim.tid)
        end.suspend()
        try:
            due = time.monotonic() + sampler.interval
            sampler.sample_at(due)
            os.sched_setaffinity(victim.tid, {1})
            after = sampler.sample_at(due + sampler.interval)
        finally:
            end.resume()
    assert after is not None
    said = [ev for ev in after.events if "pair 0 B is bound to CPU 0 but" in ev]
    assert len(said) == 1 and "affinity is now [1]" in said[0], after.events


def _ends_of(proc: subprocess.Popen) -> list[psutil.Process]:
    """The forked ends: children running the parent's own command line (not the reaper)."""
    me = psutil.Process(proc.pid)
    return [c for c in me.children() if c.cmdline() == me.cmdline()]


def _first_sample(proc: subprocess.Popen) -> list[str]:
    """Read stdout up to the first sample line: the pairs are running by then."""
    lines = read_until(proc.stdout, lambda line: line.startswith(("t=", "{")), limit=10_000)
    assert lines and lines[-1].startswith(("t=", "{")), f"no sample: {proc.stderr.read()}"
    return lines


def _finish(proc: subprocess.Popen, head: list[str], timeout: float = 60) -> tuple[str, str]:
    out, err = proc.communicate(timeout=timeout)  # the caller's `with ipctop` reaps it
    return "".join(head) + out, err


@native
def test_an_end_stopped_for_good_is_a_stall_and_exit_1() -> None:
    with ipctop(
        "run", "--mode", "processes", "--pairs", "2", "--cpus", "0", "--seconds", "6"
    ) as proc:
        head = _first_sample(proc)
        assert len(_ends_of(proc)) == 4
        victim = _ends_of(proc)[-1]  # an end of pair 1
        time.sleep(0.5)
        victim.suspend()  # SIGSTOP, for good: the run must notice and say so
        out, err = _finish(proc, head)
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    assert "stall: pair 1 made no round for" in err, err
    assert "pair(s) 1 stalled" in err and "left out of the rates" in err, err
    assert any("stalled=1" in ln for ln in out.splitlines() if ln.startswith("t=")), out


@native
def test_an_end_stopped_and_continued_is_left_out_and_exit_0() -> None:
    with ipctop("run", "--mode", "processes", "--pairs", "1", "--cpus", "0", "--seconds", "8",
                "--jsonl") as proc:  # fmt: skip
        head = _first_sample(proc)
        assert len(_ends_of(proc)) == 2
        victim = _ends_of(proc)[0]
        time.sleep(0.5)
        victim.suspend()
        time.sleep(3.5)  # the stop itself (not an assert): past the 2 s threshold
        victim.resume()
        out, err = _finish(proc, head)
    samples, summary = split_jsonl(out)
    assert summary is not None and summary["stalled_at_end"] == [] and summary["exit"] == 0
    assert all("stalled" not in s or s["stalled"] == [0] for s in samples)
    assert any(s.get("stalled") == [0] for s in samples), (
        err,
        [s["total_ops_per_s"] for s in samples],
    )
    assert proc.returncode == 0, err  # not stalled at the end: a warning, not a failure
    assert "stall: pair 0 resumed after" in err and "left out of the rates" in err, err
    # The total leaves the stalled windows out: averaged in, 3.5 s of zeros in
    # 8 s would pull it well below the total over every window.
    total = float(re.search(r"# total ([\d,]+) ops/s", err).group(1).replace(",", ""))
    seconds = sum(s["dt"] for s in samples)
    averaged = sum(s["total_ops_per_s"] * s["dt"] for s in samples) / seconds
    assert total >= 1.2 * averaged, (total, averaged, err)


@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_ipctop_itself_stopped_is_a_sample_gap(mode: str) -> None:
    with ipctop("run", "--mode", mode, "--pairs", "1", "--cpus", "0", "--seconds", "6") as proc:
        head = _first_sample(proc)
        time.sleep(0.5)
        me = psutil.Process(proc.pid)
        me.suspend()  # the whole monitor: its sampler and, in threads mode, the pairs
        time.sleep(3.0)  # the stop itself (not an assert): longer than the 2 s stated
        me.resume()
        out, err = _finish(proc, head)
    assert proc.returncode == 0, err
    assert "between two readings (period 0.5 s)" in err, err
    assert "left out of the rates" in err, err
    late = [ln for ln in out.splitlines() if ln.startswith("t=") and "late=" in ln]
    assert late, out


@native
def test_a_sweep_says_so_and_its_record_carries_the_stall(tmp_path) -> None:
    out_json = tmp_path / "r.json"
    with ipctop("sweep", "--mode", "processes", "--cpus", "0", "--max-pairs", "1",
                "--seconds", "6", "--warmup", "0.2", "--repeat", "1",
                "--json", str(out_json)) as proc:  # fmt: skip
        assert wait_for(lambda: len(_ends_of(proc)) == 2, 60), "the ends did not start"
        victim = _ends_of(proc)[0]
        time.sleep(0.5)
        victim.suspend()
        time.sleep(3.5)  # the stop itself, past the 2 s threshold
        victim.resume()
        out, err = _finish(proc, [])
    assert proc.returncode == 0, err
    assert "stall: pair 0 made no round for" in out + err, (out, err)
    step = json.loads(out_json.read_text())["steps"][0]
    stalls = step.get("stalls")
    assert stalls is not None, (out, err)
    assert stalls["stalled_pairs"] == [0] and stalls["windows_left_out"] >= 1, stalls
    assert stalls["left_out_s"] > 0 and stalls["threshold_s"] == 2.0
    assert any(e.startswith("stall:") for e in step["events"])
    read = read_record(out_json).steps[0].stalls  # read back typed, the same figures
    assert isinstance(read, StallSummary) and read.stalled_pairs == (0,), read
    assert read.left_out_s == stalls["left_out_s"]


def _end(s: Sample, key: tuple[int, str, int]) -> ThreadSample:
    return next(t for t in s.threads if (t.pair, t.role, t.tid) == key)


@native
def test_a_stalled_ends_calls_are_left_out_as_its_rounds_are() -> None:
    # Two sysv-lifecycle units as processes; one stopped for 3.5 s mid-window with a
    # real SIGSTOP. Each end's calls per operation, rebuilt here from the timeline,
    # leave out the windows its unit stalled in (and any late reading), as its rounds do.
    cfg = RunConfig("sysv-lifecycle", "same", "processes", (0,), "native", queues=256)
    with Engine(cfg) as e:
        e.start(2)
        victim = psutil.Process(e.pairs[1].ends[0].pid)
        assert victim.pid != os.getpid()
        stop = threading.Timer(1.0, victim.suspend)
        go = threading.Timer(4.5, victim.resume)
        stop.start()
        go.start()
        try:
            r = measure_engine(e, 6.5, 0.2, 0.5)
        finally:
            stop.cancel()
            go.cancel()
            victim.resume()  # whatever happened above, the end runs on to its stop
    assert r.stalls is not None and any(r.stalls.pair_windows.get(1, ())), r.events
    assert r.stalls.stalled_at_end == (), r.events
    assert r.start is not None and r.op_calls is not None
    readings = [r.start, *r.timeline]
    rebuilt: dict[int, list[float]] = {}
    for end in r.threads:
        key = (end.at_end.pair, end.at_end.role, end.at_end.tid)
        mine = r.stalls.pair_windows.get(key[0], ())
        kept = [0] * (1 + len(LIFECYCLE_OPS))
        seconds = 0.0
        for i, (a, b) in enumerate(zip(readings, readings[1:])):
            if b.gap or (i < len(mine) and mine[i]):
                continue
            was, now = _end(a, key), _end(b, key)
            counts = zip((was.rounds, *was.ops), (now.rounds, *now.ops), strict=True)
            kept = [k + y - x for k, (x, y) in zip(kept, counts)]
            seconds += b.dt
        rates = [k / seconds for k in kept]
        assert math.isclose(end.ops_per_s, rates[0], rel_tol=1e-9), (key, end, rates)
        rebuilt[key[0]] = rates[1:]
    for k, name in enumerate(LIFECYCLE_OPS):
        rates = [rebuilt[p][k] for p in sorted(rebuilt)]
        got = r.op_calls[name]
        assert math.isclose(got.per_s, sum(rates), rel_tol=1e-9), (name, got, rates)
        assert math.isclose(got.min, min(rates), rel_tol=1e-9)
        assert math.isclose(got.max, max(rates), rel_tol=1e-9)
    # Left out, not averaged in: over every window, the 3.5 s stopped would cut the
    # stopped unit's msgget rate to about half of what it made while it ran.
    stopped = next(t.at_end for t in r.threads if t.at_end.pair == 1)
    key = (stopped.pair, stopped.role, stopped.tid)
    first, last = _end(r.start, key), _end(r.timeline[-1], key)
    averaged = (last.ops[0] - first.ops[0]) / r.seconds
    assert rebuilt[1][0] > 1.3 * averaged, (rebuilt, averaged)
