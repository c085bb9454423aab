"""A record holds typed objects, not dicts: written by a real sweep, read back equal."""

from __future__ import annotations

import json
import statistics
from dataclasses import replace

import pytest
from conftest import run_cli

from ipctop.analysis.profile_delta import counter_deltas, counter_values
from ipctop.analysis.stats import Difference
from ipctop.commands.compare import ab_profile_delta
from ipctop.engine.config import RunConfig
from ipctop.engine.costs import Costs
from ipctop.engine.engine import Engine
from ipctop.engine.opstats import OpRate
from ipctop.engine.stalls import StallSummary
from ipctop.errors import RecordError
from ipctop.live.measure import measure_engine
from ipctop.live.source_protocol import RunInfo
from ipctop.output.records.ab_record import NOT_JUDGED, _result, run_config
from ipctop.output.records.record import Record, Step
from ipctop.output.records.record_ab import AbLatency, AbRecord, AbResult
from ipctop.output.records.record_box import Box
from ipctop.output.records.record_io import read_record
from ipctop.output.text.costs_table import format_costs
from ipctop.plain import from_plain, to_plain

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
    step = from_plain(Step, d)
    assert step.costs == Costs(cpu_us_per_round=2.5, flags=("x",))
    assert from_plain(Step, {"pairs": 1, "total_ops_per_s": 1.0}).costs is None


def test_stalls_of_two_runs_add_and_read_back_typed() -> None:
    a = StallSummary(2.0, 1.25, 2, 0, (0,), ())
    b = StallSummary(2.0, 0.5, 1, 1, (1,), (1,))
    both = a.plus(b)
    assert both == StallSummary(2.0, 1.75, 3, 1, (0, 1), (1,))
    step = Step(pairs=2, total_ops_per_s=5.0, stalls=both)
    back = from_plain(Step, json.loads(json.dumps(step.to_dict())))
    assert back.stalls == both
    assert "stalls" not in Step(pairs=1, total_ops_per_s=1.0).to_dict()  # absent, not null


def test_one_run_configuration_carries_the_workloads_own_options() -> None:
    """sweep's and ab's records both come from RunConfig.as_run: the run's fields and options."""
    config = RunConfig("sysv-sem-multi", cpus=(0,), threads=3, think_ns=5)
    swept = config.as_run("native", seconds=1.0, warmup=0.0, repeat=1).said()
    assert swept["threads"] == 3 and swept["sems"] == 128 and swept["think_ns"] == 5
    side = run_config(config, "native", 2).said()
    assert {k: side[k] for k in ("threads", "sems", "think_ns", "pairs")} == {
        "threads": 3,
        "sems": 128,
        "think_ns": 5,
        "pairs": 2,
    }
    assert side["seconds"] is None and side["window_s"] > 0
    pipe = RunConfig("pipe", cpus=(0,)).as_run("native").said()
    assert "threads" not in pipe and pipe["size"] == 1  # a pipe's token, no thread count


def test_a_steps_ops_latency_and_profile_are_typed_and_round_trip() -> None:
    """A step read from its plain dict holds OpRate, StepLatency and a Profile, and
    writes the same dict again (an older record's keys as they were)."""
    rtt = {"n": 9, "mean": 2000.0, "p50": 1900.0, "p99": 4100.0, "p999": 5000.0, "max": 6000.0}
    one = {"n": 9, "mean": 900.0, "p50": 850.0, "p99": 2000.0, "p999": 2500.0, "max": 3000.0}
    symbol = {"name": "do_msgsnd", "dso": "[kernel.kallsyms]", "kernel": True, "self": 40,
              "total": 70, "self_pct": 40.0, "total_pct": 70.0,
              "windows_self_pct": [39.0, 41.0], "windows_total_pct": [69.0, 71.0]}  # fmt: skip
    d = {
        "pairs": 1,
        "total_ops_per_s": 10.0,
        "ops": {
            "msgget": {"per_s": 5.0, "avg": 5.0, "stddev": 0.0, "min": 5.0, "max": 5.0, "n": 3},
            "msgsnd": {"per_s": 8.0, "avg": 4.0, "stddev": 1.0, "min": 3.0, "max": 5.0},
        },
        "latency": {
            "note": "every round timed",
            "pairs": [{"pair": 0, "rtt": rtt, "oneway": one}],
            "windows": {"rtt_p99": [4000.0, 4200.0]},
        },
        "profile": {
            "event": "cpu-clock",
            "perf_version": "6.1",
            "frequency": 999,
            "cpus": [0, 1],
            "na": None,
            "notes": [],
            "samples": 100,
            "cpu_samples": 180,
            "owners": {"pairs": 100, "idle": 80},
            "windows": [{"t0": 1.0, "t1": 2.0, "samples": 100}],
            "cost_pct": 1.5,
            "symbols": [symbol],
        },  # fmt: skip
    }
    step = from_plain(Step, d)
    assert step.ops is not None and step.latency is not None and step.profile is not None
    assert step.ops["msgget"] == OpRate(5.0, 5.0, 0.0, 5.0, 5.0, n=3)
    assert step.ops["msgsnd"].n is None
    assert step.latency.pairs[0].rtt.p99 == 4100.0
    assert step.latency.windows["rtt_p99"] == (4000.0, 4200.0)
    assert step.profile.samples == 100 and step.profile.top(1)[0].name == "do_msgsnd"
    written = json.loads(json.dumps(step.to_dict()))
    assert {k: written[k] for k in ("ops", "latency", "profile")} == {
        k: d[k] for k in ("ops", "latency", "profile")
    }
    # Through a whole record, validated as a file is.
    config = RunConfig("sysv-msg", cpus=(0,)).as_run("native", seconds=1.0)
    rec = Record(kind="sweep", box={}, config=config, steps=[step])
    back = Record.from_dict(json.loads(json.dumps(rec.to_dict())))
    assert back.steps[0].ops == step.ops and back.steps[0].latency == step.latency
    assert back.steps[0].profile is not None and back.steps[0].profile.to_dict() == d["profile"]


def _ab_dict() -> dict:
    side = {"options": "--size 64", "cmd": None, "config": None, "windows": [1.0, 2.0]}
    return {
        "schema": "ipctop.record/3",
        "kind": "ab",
        "created": "2026-01-01T00:00:00+00:00",
        "interrupted": False,
        "box": {"kernel_release": "6.1.0", "online": [0, 1], "a newer fact": 1},
        "config": RunConfig("pipe", cpus=(0,)).as_run("native").said(),
        "steps": [],
        "points": [],
        "timeline": [],
        "events": [],
        "ab": {
            "order": "ABBA",
            "metric": "ops",
            "sides": {"A": side, "B": {**side, "options": "--size 4096"}},
            "blocks": [{"A": [1.0, 2.0], "B": [3.0, 4.0]}],
            "result": {"ratio": 1.5},
            "restore_cmd": None,
            "precision_pct": 1.0,  # a key the model does not name: kept
            "latency": {
                "notes": {"A": "t", "B": "t"},
                "blocks": [{"A": {"rtt_p50": [1.0]}, "B": {"rtt_p50": [2.0]}}],
            },
            "profile": {
                "A": {"event": "cpu-clock", "samples": 3, "symbols": []},
                "B": {"event": "cpu-clock", "samples": 4, "symbols": []},
            },
        },  # fmt: skip
    }


def test_a_records_box_and_ab_are_typed_and_write_what_they_read() -> None:
    d = _ab_dict()
    rec = Record.from_dict(json.loads(json.dumps(d)))
    assert isinstance(rec.box, Box) and rec.box.kernel == "6.1.0" and rec.box.online == (0, 1)
    assert rec.box.cpu == "unknown CPU"  # not said: named as unknown, not invented
    assert isinstance(rec.ab, AbRecord)
    assert rec.ab.sides.B.options == "--size 4096" and rec.ab.blocks[0].B == (3.0, 4.0)
    assert rec.ab.profile is not None and rec.ab.profile.B.samples == 4
    assert rec.ab.latency is not None and rec.ab.latency.blocks[0].A["rtt_p50"] == (1.0,)
    assert isinstance(rec.ab.result, AbResult) and rec.ab.result.ratio == 1.5
    written = json.loads(json.dumps(rec.to_dict()))
    assert written["box"] == d["box"]
    assert written["ab"]["result"] == {"ratio": 1.5}  # the keys it read, none invented
    assert written["ab"]["precision_pct"] == 1.0 and written["ab"]["blocks"] == d["ab"]["blocks"]
    assert Record.from_dict(written) == rec
    # A record without box facts (an older or hand-made one) still reads, and says so.
    bare = Record.from_dict({**json.loads(json.dumps(d)), "box": {}})
    assert bare.box.kernel == "unknown kernel" and bare.to_dict()["box"] == {}


def test_an_ab_result_is_typed_and_writes_the_keys_ab_wrote_in_their_order() -> None:
    d = Difference(6, 6, 0.9, 0.85, 0.95, 0.001, unit="blocks", se=0.02, df=5.0)
    written = _result(d, 41.26, "other processes used 41 % of a CPU")
    result = AbResult.model_validate(written)
    assert (result.verdict, result.outside_cpu_pct, result.df) == (NOT_JUDGED, 41.3, 5.0)
    assert result.model_dump(mode="json", exclude_unset=True) == written
    assert list(result.model_dump(exclude_unset=True)) == list(written)
    # Latency: one per figure, each with the latency verdict in place of the Difference's.
    figures = {"rtt_p50": {**d.to_dict(), "verdict": "B slower"}}
    latency = AbLatency.model_validate({"result": figures})
    assert latency.result is not None and latency.result["rtt_p50"].verdict == "B slower"
    assert latency.model_dump(mode="json", exclude_unset=True)["result"] == figures


def test_the_run_info_holds_the_records_run_configuration_as_it_is() -> None:
    config = RunConfig("sysv-sem-multi", cpus=(0,), threads=3, think_ns=5)
    run = config.as_run("native", interval=0.5)
    info = RunInfo(run, kernel="6.1.0", cpu_model="cpu")
    assert info.config is run  # what the session record keeps: one object, no copy
    assert (info.config.workload, info.config.cpus, info.interval, info.source) == (
        "sysv-sem-multi",
        (0,),
        0.5,
        "live",
    )
    kept = info.config.said()
    assert "kernel" not in kept and kept["threads"] == 3 and kept["sems"] == 128
    assert "size" not in kept  # no payload: absent, as a sweep's record has it
    with pytest.raises(ValueError, match="interval"):
        RunInfo(config.as_run("native"), kernel="6.1.0", cpu_model="cpu")


@pytest.fixture(scope="module")
def real_costs() -> Costs:
    """Where a real pair's time went over a short window (detail on)."""
    with Engine(RunConfig("sysv-sem", "same", "threads", (0,))) as engine:
        engine.start(1)
        costs = measure_engine(engine, 0.4, 0.0, 0.2, detail=True).costs
    assert costs is not None and costs.threads, "detail on: the ends' costs were read"
    return costs


def test_an_ab_records_costs_are_costs_and_write_every_key_they_read(real_costs: Costs) -> None:
    d = _ab_dict()
    older = to_plain(real_costs)
    # A writer from before these keys: they read as their defaults and are written then.
    for key in ("cpu_pressure_avg10", "flags"):
        del older[key]
    d["ab"]["costs"] = {"A": to_plain(real_costs), "B": {**older, "newer_figure": 1.0}}
    rec = Record.from_dict(json.loads(json.dumps(d)))
    assert rec.ab is not None and rec.ab.costs is not None
    a, b = rec.ab.costs.A, rec.ab.costs.B
    assert isinstance(a, Costs) and isinstance(b, Costs)
    assert a == real_costs  # JSON keeps every float exactly
    assert b == replace(real_costs, cpu_pressure_avg10=None, flags=())
    written = json.loads(json.dumps(rec.to_dict()))["ab"]["costs"]
    assert written["A"] == json.loads(json.dumps(to_plain(real_costs)))
    assert {k: written["B"][k] for k in older} == json.loads(json.dumps(older))
    # A newer writer's key inside a side's costs is dropped, as from a step's costs,
    # not kept as a stray attribute the writer never writes.
    assert "newer_figure" not in written["B"] and not hasattr(b, "newer_figure")
    assert Record.from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
    # compare's delta of the ab record reads the typed sides' counters.
    text = ab_profile_delta(rec)
    assert text is not None
    vcsw = statistics.mean(
        t.vcsw_per_round for t in real_costs.threads if t.vcsw_per_round is not None
    )
    [row] = [line for line in text.splitlines() if line.endswith(" vol. switches/round")]
    assert row.split()[0] == f"{vcsw:,.3g}" and "+0 %" in row


def test_a_side_without_a_costs_figure_names_why_not_a_zero(real_costs: Costs) -> None:
    why = "/proc/schedstat reads zero: set kernel.sched_schedstats=1"
    b = replace(
        real_costs,
        threads=tuple(replace(t, run_delay_us_per_round=None) for t in real_costs.threads),
        missing={"run delay": why},
    )
    deltas = {c.name: c for c in counter_deltas(real_costs, b)}
    delay = deltas["run delay µs/round"]
    assert delay.b is None and delay.why == why and delay.change_pct is None
    assert counter_values(None)["CPU µs/round"] is None  # no costs at all: every figure n/a
    assert all(c.why == "not recorded" for c in counter_deltas(None, None))
    # Ranked: the ones with a change first, those n/a on either side last.
    ranked = counter_deltas(real_costs, b)
    known = [c.change_pct is not None for c in ranked]
    assert known == sorted(known, reverse=True)


@pytest.mark.parametrize(
    ("costs", "words"),
    [
        ({"A": 1, "B": None}, "ab.costs.A should be an object, not integer"),
        ({"A": {"cpu_us_per_round": "2"}}, "ab.costs.A.cpu_us_per_round should be a number"),
        ({"B": {"threads": [{"pair": 0}]}}, "ab.costs.B.threads[0].role is missing"),
    ],
)
def test_a_hand_edited_ab_costs_side_is_named_in_one_line(costs: dict, words: str) -> None:
    d = _ab_dict()
    d["ab"]["costs"] = costs
    with pytest.raises(RecordError) as e:
        Record.from_dict(json.loads(json.dumps(d)))
    assert str(e.value).startswith(f"record: {words}"), e.value
