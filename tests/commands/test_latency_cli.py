"""Latency in the headless commands and records: run, sweep, check, compare, --rt."""

from __future__ import annotations

import json
import math
import shutil

import pytest
from conftest import run_cli

from ipctop.engine.config import LATENCY_EVERY
from ipctop.engine.latency import PairLatency
from ipctop.engine.objects import _native
from ipctop.output.records.record_io import read_record
from ipctop.output.text.latency_text import compact
from ipctop.plain import from_plain

native = pytest.mark.skipif(_native is None, reason="the native extension is not built")
QUICK = ("--seconds", "0.6", "--warmup", "0", "--repeat", "2", "--cpus", "0")


@native
def test_run_prints_percentiles_per_interval_and_window():
    r = run_cli("run", "--cpus", "0", "--seconds", "1", "--interval", "0.5", "-w", "sysv-sem")
    assert r.returncode == 0, r.stderr
    assert f"# latency: 1 round in {LATENCY_EVERY} timed" in r.stdout  # the default, said
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("t=")]
    assert lines and all("lat(p50/p99) 0:rtt=" in ln for ln in lines)
    assert "# 0      round trip" in r.stdout and "# 0      one-way" in r.stdout


def test_run_on_the_python_engine_says_why_there_is_no_latency():
    r = run_cli("run", "--cpus", "0", "--seconds", "0.3", "--engine", "python")
    assert r.returncode == 0, r.stderr
    assert "# latency n/a (the Python engine does not time rounds)" in r.stdout
    assert "lat(" not in r.stdout


@native
def test_sweep_records_percentiles_per_step_and_pair_and_compare_shows_them(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for path in (a, b):
        r = run_cli("sweep", "-w", "sysv-msg", *QUICK, "--max-pairs", "2", "--json", str(path))
        assert r.returncode == 0, r.stderr
    assert "round trip" in r.stdout and "all    one-way" in r.stdout
    rec = read_record(a)
    one, two = rec.steps
    assert [p.pair for p in one.latency.pairs] == [0]
    assert [p.pair for p in two.latency.pairs] == [0, 1, -1]
    for p in two.latency.pairs:
        assert 0 < p.oneway.p50 < p.rtt.p50 <= p.rtt.p99
    assert len(one.latency.windows["rtt_p99"]) >= 2
    r = run_cli("compare", str(a), str(b))
    assert r.returncode == 0, r.stderr
    assert "Latency (all pairs" in r.stdout
    assert "round trip p99" in r.stdout and "one-way p50" in r.stdout
    assert "shown, not judged" in r.stdout  # windows of one run are no replicate across sessions
    # compare --json carries them too: estimate, interval, n and unit, never a verdict.
    r = run_cli("compare", str(a), str(b), "--json", "-")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout[r.stdout.index("{") :])
    rows = {(x["pairs"], x["figure"], x["side"]): x for x in doc["latency"]}
    assert "not judged" in doc["latency_note"]
    labels = [x["side"] for x in doc["latency"] if x["pairs"] == 1 and x["figure"] == "rtt_p99"]
    assert len(labels) == 2
    first = rows[(1, "rtt_p99", labels[0])]
    xs = read_record(a).steps[0].latency.windows["rtt_p99"]
    # The estimate is the geometric mean of the windows, computed here, inside its interval.
    geo = math.exp(sum(math.log(x) for x in xs) / len(xs))
    assert first["estimate_ns"] == pytest.approx(geo)
    assert first["low_ns"] <= first["estimate_ns"] <= first["high_ns"]
    assert first["n"] == len(xs) and first["unit"] == "windows" and first["judged"] is False
    second = rows[(1, "rtt_p99", labels[1])]
    assert "verdict" not in second and second["low_pct"] <= second["diff_pct"] <= second["high_pct"]


def _record(path, latency=None):
    from ipctop.output.records.record import Record, Step
    from ipctop.output.records.record_io import write_record

    config = {"workload": "sysv-msg", "placement": "same", "mode": "threads",
              "engine": "native", "cpus": [0], "seconds": 1, "warmup": 0,
              "interval": None, "repeat": 1}  # fmt: skip
    step = Step(pairs=1, total_ops_per_s=1.0, latency=latency)
    write_record(path, Record(kind="sweep", box={}, config=config, steps=[step]))


def test_a_record_without_latency_still_compares(tmp_path):
    _record(tmp_path / "a.json")
    _record(tmp_path / "b.json")
    r = run_cli("compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert r.returncode == 0, r.stderr
    assert "Latency" not in r.stdout


def test_a_hand_edited_latency_object_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "r.json"
    _record(path)
    d = json.loads(path.read_text())
    d["steps"][0]["latency"] = {"pairs": [], "windows": {"rtt_p50": ["fast"]}}
    path.write_text(json.dumps(d))
    r = run_cli("compare", str(path), str(path))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "latency.windows.rtt_p50" in r.stderr


@native
def test_rt_without_the_capability_is_one_line_and_exit_3():
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    r = run_cli("run", "--cpus", "0", "--seconds", "0.2", "--rt", "10")
    if r.returncode != 0:
        pytest.skip(f"SCHED_FIFO is not available even with the capability here: {r.stderr}")
    import subprocess
    import sys

    from conftest import ROOT

    # The real thing, not a mock: the same run with CAP_SYS_NICE dropped.
    cmd = ["setpriv", "--inh-caps=-sys_nice", "--bounding-set=-sys_nice", sys.executable,
           "-m", "ipctop", "run", "--cpus", "0", "--seconds", "0.2", "--rt", "10"]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 3, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("ipctop: note:")]
    assert len(lines) == 1 and "--rt 10" in lines[0] and "CAP_SYS_NICE" in lines[0]


@native
def test_rt_ends_run_sched_fifo():
    import os
    import time

    from ipctop.engine.config import RunConfig
    from ipctop.engine.engine import Engine
    from ipctop.errors import ResourceError

    try:
        engine = Engine(RunConfig(workload="sysv-sem", cpus=(0,), rt=5))
        engine.start(1)
    except ResourceError as exc:
        pytest.skip(f"no SCHED_FIFO here: {exc}")
    with engine:
        time.sleep(0.1)
        for end in engine.ends():
            assert os.sched_getscheduler(end.tid) == os.SCHED_FIFO
            assert os.sched_getparam(end.tid).sched_priority == 5


def test_rt_is_refused_on_the_python_engine():
    r = run_cli("run", "--cpus", "0", "--seconds", "0.2", "--rt", "10", "--engine", "python")
    assert r.returncode == 2 and "--rt needs the native engine" in r.stderr


def test_the_pooled_pair_is_named_all_in_a_run_line():
    # -1 is how the engine marks every pair pooled; a reader must not see it.
    one = {"n": 10, "p50": 7000, "p99": 9000, "p999": 9500, "max": 9900, "mean": 7100}
    pooled = from_plain(PairLatency, {"pair": -1, "rtt": one, "oneway": one})
    pair0 = from_plain(PairLatency, {"pair": 0, "rtt": one, "oneway": one})
    line = compact([pair0, pooled])
    assert line.startswith("lat(p50/p99) 0:rtt=7") and " all:rtt=7" in line and "-1" not in line
