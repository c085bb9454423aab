"""A record holds typed objects, not dicts: written by a real sweep, read back equal."""

from __future__ import annotations

import json

from conftest import run_cli

from ipctop.engine.config import EngineConfig
from ipctop.engine.costs import Costs
from ipctop.engine.stalls import StallSummary
from ipctop.output.ab_record import run_config
from ipctop.output.costs_table import format_costs
from ipctop.output.record import Record, RunConfig, Step
from ipctop.output.record_io import read_record

QUICK = ("--seconds", "0.5", "--warmup", "0", "--repeat", "1", "--cpus", "0")


def test_a_sweeps_costs_are_costs_and_round_trip(tmp_path) -> None:
    out = tmp_path / "s.json"
    r = run_cli("sweep", "-w", "sysv-sem", "--max-pairs", "1", "--json", str(out), *QUICK)
    assert r.returncode == 0, r.stderr
    record = read_record(out)
    step = record.steps[0]
    assert isinstance(step.costs, Costs), type(step.costs)
    assert step.costs.threads, "a measured step has its ends' costs"
    # What is written is what is read: the typed step serialises to the file's own dict.
    written = json.loads(out.read_text())["steps"][0]["costs"]
    assert json.loads(json.dumps(step.to_dict()))["costs"] == written
    again = Record.from_dict(json.loads(json.dumps(record.to_dict())))
    assert again.steps[0].costs == step.costs
    assert format_costs(record.steps) == format_costs(again.steps)


def test_a_step_built_from_a_plain_dict_holds_costs() -> None:
    d = {"pairs": 1, "total_ops_per_s": 10.0, "costs": {"cpu_us_per_round": 2.5, "flags": ["x"]}}
    step = Step.from_dict(d)
    assert step.costs == Costs(cpu_us_per_round=2.5, flags=("x",))
    assert Step.from_dict({"pairs": 1, "total_ops_per_s": 1.0}).costs is None


def test_stalls_of_two_runs_add_and_read_back_typed() -> None:
    a = StallSummary(2.0, 1.25, 2, 0, (0,), ())
    b = StallSummary(2.0, 0.5, 1, 1, (1,), (1,))
    both = a.plus(b)
    assert both == StallSummary(2.0, 1.75, 3, 1, (0, 1), (1,))
    step = Step(pairs=2, total_ops_per_s=5.0, stalls=both)
    back = Step.from_dict(json.loads(json.dumps(step.to_dict())))
    assert back.stalls == both
    assert "stalls" not in Step(pairs=1, total_ops_per_s=1.0).to_dict()  # absent, not null


def test_one_run_configuration_carries_the_workloads_own_options() -> None:
    """sweep's and ab's records both come from RunConfig.of: the run's fields and options."""
    config = EngineConfig("sysv-sem-multi", cpus=(0,), threads=3, think_ns=5)
    swept = RunConfig.of(config, "native", seconds=1.0, warmup=0.0, repeat=1).to_dict()
    assert swept["threads"] == 3 and swept["sems"] == 128 and swept["think_ns"] == 5
    side = run_config(config, "native", 2).to_dict()
    assert {k: side[k] for k in ("threads", "sems", "think_ns", "pairs")} == {
        "threads": 3,
        "sems": 128,
        "think_ns": 5,
        "pairs": 2,
    }
    assert side["seconds"] is None and side["window_s"] > 0
    pipe = RunConfig.of(EngineConfig("pipe", cpus=(0,)), "native").to_dict()
    assert "threads" not in pipe and pipe["size"] == 1  # a pipe's token, no thread count
