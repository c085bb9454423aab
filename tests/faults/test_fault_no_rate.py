"""A run with no unstalled window has no rate, never a rate of 0: run, sweep, records.

Every stall here is real: SIGSTOP (psutil's suspend) of a forked end, and of
ipctop itself, for longer than STALL_S. measure_engine then keeps no window
and says why (RunResult.no_rate); run and sweep say "no rate" and exit 1, the
sweep's record keeps the step with its reason and no point, and compare and
report skip it and say so. The one hand-made thing is the baseline the stalled
record is compared against: the same record with its step given a rate.
"""

from __future__ import annotations

import csv
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from conftest import wait_for
from ipctop_child import ipctop, read_until
from jsonl_lines import split_jsonl

from ipctop.commands.check_runs import summarise
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine, resolve_engine
from ipctop.engine.stalls import STALL_S
from ipctop.live.measure import RunResult, measure_engine, no_rate_of
from ipctop.output.records.latency_record import FIGURES
from ipctop.output.records.record import Record, record_points, unrated
from ipctop.output.records.record_io import read_record

native = pytest.mark.skipif(resolve_engine() != "native", reason="needs the native engine")
# A stopped end is killed at the engine's stop after 5 s (JOIN_TIMEOUT): with the
# stop and the window, a run or a sweep of one step takes 11 to 15 s.
slow = pytest.mark.slow
CONFIG = RunConfig("sysv-sem", "same", "processes", (0,), resolve_engine())


def _ends(proc: subprocess.Popen[str]) -> list[psutil.Process]:
    """The forked ends: children running the parent's own command line (not the reaper)."""
    me = psutil.Process(proc.pid)
    return [c for c in me.children() if c.cmdline() == me.cmdline()]


def _running(end: psutil.Process) -> bool:
    # A pair's end blocks once a round: its switches show the pair past the start gate.
    return end.num_ctx_switches().voluntary > 100


@pytest.fixture(scope="module")
def stalled() -> RunResult:
    """One pair measured for real while one of its ends is stopped throughout."""
    with Engine(CONFIG) as engine:
        engine.start(1)
        end = psutil.Process(engine.pairs[0].ends[0].pid)
        assert wait_for(lambda: _running(end)), "the pair made no round"
        end.suspend()
        try:
            # On a loaded box the pair can still finish a round in flight after the stop:
            # the window starts once the end is stopped and its pair has had time to settle,
            # and lasts long enough past STALL_S for the stall to be called either way.
            assert wait_for(lambda: end.status() == psutil.STATUS_STOPPED), end.status()
            time.sleep(0.5)
            return measure_engine(engine, STALL_S + 1.0, 0.0, 0.5)
        finally:
            end.resume()  # it stops with the engine, not after a kill


def test_a_window_stalled_throughout_has_no_rate_and_says_why(stalled: RunResult) -> None:
    assert stalled.windows == () and stalled.timeline, stalled.events
    assert stalled.stalls is not None and stalled.stalls.stalled_pairs == (0,)
    assert stalled.rate is None and stalled.total_ops_per_s == 0.0
    assert stalled.no_rate is not None
    assert stalled.no_rate.startswith("every window of its "), stalled.no_rate
    assert " s stalled: " in stalled.no_rate, stalled.no_rate
    assert f"went {STALL_S:g} s or more without CPU" in stalled.no_rate
    assert no_rate_of([stalled, stalled]) == f"all 2 runs: {stalled.no_rate}"


def test_a_window_that_ran_has_a_rate_beside_one_that_did_not(stalled: RunResult) -> None:
    with Engine(CONFIG) as engine:
        engine.start(1)
        ran = measure_engine(engine, 0.6, 0.2, 0.2)
    assert ran.no_rate is None and ran.rate == ran.total_ops_per_s > 0
    assert no_rate_of([stalled, ran]) is None  # one rated run is enough for a figure


def test_check_reads_the_same_signal(stalled: RunResult) -> None:
    reading, lines = summarise(CONFIG, 1, [stalled] * 3, {})
    assert reading.error is not None and reading.error.startswith("no rate: every sample of its 3")
    assert lines == [f"{reading.label}: {reading.error}"]


@slow
@native
def test_run_says_no_rate_and_exits_1() -> None:
    # ipctop is stopped first, then the end, for longer than the window. Wherever the
    # stop fell, no window is left to rate: before the priming reading, the end made no
    # round in the window; inside it, the reading after the stop comes late (a gap)
    # and past the window's end; between the two, the gap is followed by 3 s of
    # readings without a round, marked from the 2 s (STALL_S) after it.
    args = ("--pairs", "1", "--cpus", "0", "--seconds", "4", "--interval", "1", "--jsonl")
    with ipctop("run", "-w", "sysv-sem", "--mode", "processes", *args) as proc:
        head = read_until(proc.stderr, lambda line: line.startswith("# ipctop run:"))
        assert head and head[-1].startswith("# ipctop run:"), head
        me = psutil.Process(proc.pid)
        me.suspend()
        try:
            (end, _) = _ends(proc)
            end.suspend()  # for good: the engine kills it at its stop
            time.sleep(5.0)  # the stop itself (not an assert): past the window and STALL_S
        finally:
            me.resume()
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    samples, summary = split_jsonl(out)  # stdout is JSON only
    assert summary is not None, out
    assert summary["total_ops_per_s"] is None and summary["no_rate"] and summary["exit"] == 1
    assert samples and any(s.get("gap") or s.get("stalled") for s in samples), samples
    assert "# total no rate (every window of its" in err, err
    assert "# total 0 ops/s" not in err and "ipctop: no rate: " in err, err


@pytest.fixture(scope="module")
def stalled_sweep(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A one-step sweep whose end is stopped for good early in its warm-up."""
    folder = tmp_path_factory.mktemp("norate")
    record, table = folder / "stalled.json", folder / "stalled.csv"
    with ipctop("sweep", "-w", "sysv-sem", "--mode", "processes", "--cpus", "0",
                "--max-pairs", "1", "--repeat", "1", "--warmup", "2.5", "--seconds", "3",
                "--json", str(record), "--csv", str(table)) as proc:  # fmt: skip
        assert wait_for(lambda: len(_ends(proc)) == 2, 60), "the ends did not start"
        end = _ends(proc)[0]
        assert wait_for(lambda: _running(end), 30), "the pair made no round"
        # For good, within the 2.5 s of warm-up: the window (3 s) starts after the stop
        # and lasts past the 2 s after it that mark the pair stalled.
        end.suspend()
        out, err = proc.communicate(timeout=90)
    return {"code": proc.returncode, "out": out, "err": err, "record": record, "csv": table}


@slow
@native
def test_sweep_says_no_rate_in_its_step_and_summary(stalled_sweep: dict[str, Any]) -> None:
    out, err = stalled_sweep["out"], stalled_sweep["err"]
    assert stalled_sweep["code"] == 1, err
    assert "Traceback" not in err
    assert "sysv-sem · 1 pair(s) · no rate (every window of its" in out, out
    summary = out[out.index("sysv-sem summary") :]
    row = next(line for line in summary.splitlines() if line.startswith("1 "))
    assert row.split()[:3] == ["1", "no", "rate"], summary
    assert "no rate at 1 pair(s): every window of its" in summary
    assert "ipctop: sysv-sem at 1 pair(s): no rate: " in err, err
    assert " 0 ops/s" not in out


@slow
@native
def test_the_record_keeps_the_step_told_apart_from_0(stalled_sweep: dict[str, Any]) -> None:
    d = json.loads(stalled_sweep["record"].read_text())
    assert d["schema"] == "ipctop.record/3" and d["points"] == []  # no point of the curve
    (step,) = d["steps"]
    assert step["no_rate"].startswith("every window of its")
    assert step["total_ops_per_s"] == 0.0 and step["repeats"] == [] and step["windows"] == []
    assert step["stalls"]["stalled_pairs"] == [0]
    rec = read_record(stalled_sweep["record"])
    assert unrated(rec) == {1: step["no_rate"]} and record_points(rec) == []
    assert rec.steps[0].repeats == []  # not the 0.0 a step without no_rate stands in with
    assert Record.from_dict(rec.to_dict()) == rec  # round trip
    with stalled_sweep["csv"].open() as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["total_ops_per_s"] == "" and r["ops_per_s"] == "" for r in rows)


def _with_rate(d: dict[str, Any]) -> dict[str, Any]:
    """Hand-made: the stalled record as if its step had measured 1000 ops/s."""
    d = json.loads(json.dumps(d))
    step = d["steps"][0]
    del step["no_rate"]
    windows = [990.0, 1000.0, 1010.0]
    step.update(total_ops_per_s=1000.0, repeats=[1000.0], windows=windows)
    d["points"] = [{"pairs": 1, "total_ops_per_s": 1000.0, "windows": windows}]
    return d


@slow
@native
def test_compare_and_report_skip_the_step_and_say_so(
    stalled_sweep: dict[str, Any], tmp_path: Path
) -> None:
    stalled = stalled_sweep["record"]
    base = tmp_path / "base.json"
    base.write_text(json.dumps(_with_rate(json.loads(stalled.read_text()))))
    said = "skipped: stalled.json at 1 pair(s): no rate (every window of its"
    for cmd in (("compare", str(base), str(stalled)), ("report", str(stalled))):
        with ipctop(*cmd) as proc:
            out, err = proc.communicate(timeout=60)
        assert "Traceback" not in err, err
        if cmd[0] == "compare":
            assert proc.returncode == 0, err
            assert said in out, out
            row = next(line for line in out.splitlines() if line.startswith("1 "))
            assert row.split()[:3] == ["1", "1,000", "-"], out  # not a 0, not a -100 %
        else:
            assert f"{stalled}: 1 pair(s): no rate (every window of its" in out, out


@slow
@native
def test_an_older_record_of_a_stalled_step_reads_as_no_rate(
    stalled_sweep: dict[str, Any],
) -> None:
    # Before no_rate was written, such a step kept a 0.0 and the sweep made a point of it.
    d = json.loads(stalled_sweep["record"].read_text())
    del d["steps"][0]["no_rate"]
    d["points"] = [{"pairs": 1, "total_ops_per_s": 0.0}]
    rec = Record.from_dict(d)
    assert record_points(rec) == []
    assert "an older record" in unrated(rec)[1]


@slow
@native
def test_compare_latency_skips_the_step_and_says_so_once(
    stalled_sweep: dict[str, Any], tmp_path: Path
) -> None:
    d = json.loads(stalled_sweep["record"].read_text())
    assert d["steps"][0].get("latency") is not None, d["steps"][0]  # a timed workload
    base = _with_rate(d)
    # Hand-made as its rate is: the baseline's latency windows, 10 µs or so.
    xs = [10_000.0, 10_200.0, 9_800.0]
    base["steps"][0]["latency"]["windows"] = {k: xs for k in FIGURES}
    (tmp_path / "base.json").write_text(json.dumps(base))
    with ipctop("compare", str(tmp_path / "base.json"), str(stalled_sweep["record"])) as proc:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in err, err
    latency = out[out.index("\nLatency (all pairs") :]
    said = "skipped: stalled.json at 1 pair(s): no rate (every window of its"
    assert [line.strip().startswith(said) for line in latency.splitlines()].count(True) == 1
    rows = [line.split() for line in latency.splitlines() if line.startswith("1 ")]
    assert len(rows) == len(FIGURES) and all(r[-2:] == ["-", "-"] for r in rows), latency
