"""ipctop.plain: every record class converted to it goes to JSON and back unchanged,
an older record's missing optional keys read as their defaults, and a value of
the wrong type is refused naming the field."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

import pytest

from ipctop.analysis.check_curve import aa_noise_floor
from ipctop.analysis.noise import StepNoise
from ipctop.analysis.readings import RunLatency, RunReading, ThreadReading
from ipctop.analysis.sessions import session_spread
from ipctop.analysis.verdicts import Verdict
from ipctop.box import BoxFacts, read_box
from ipctop.engine.config import RunConfig
from ipctop.engine.costs import Costs, CpuCost, ThreadCost
from ipctop.engine.engine import Engine
from ipctop.engine.latency import NOTHING_TIMED, LatencySummary, PairLatency
from ipctop.engine.matrix_runs import Cell
from ipctop.engine.opstats import OpRate
from ipctop.engine.sample import Sample
from ipctop.engine.sampler import Sampler
from ipctop.engine.stalls import StallSummary
from ipctop.output.records.latency_record import StepLatency
from ipctop.output.records.record import StepThread, StepUnit
from ipctop.plain import PlainError, from_plain, to_plain


def _json(d: dict[str, Any]) -> Any:
    return json.loads(json.dumps(d))


@pytest.fixture(scope="module")
def real_samples() -> list[Sample]:
    # One timed pair on one CPU, detail on: threads, CPUs, IPIs, costs and latency.
    with Engine(RunConfig("sysv-msg", "same", "threads", (0,))) as engine:
        engine.start(1)
        sampler = Sampler(engine, interval=0.1)
        sampler.detail = True
        out = []
        for _ in range(3):
            time.sleep(0.15)
            out.append(sampler.sample())
    return out


LAT = LatencySummary(12, 7123.456, 7000.0, 9000.0, 9500.0, 9900.0)
PAIR = PairLatency(0, LAT, LAT.rounded())
COSTS = Costs(
    threads=(ThreadCost(0, "A", 1.5, 0.5, 1.0, None, 3, 0.25, None),),
    cpus=(CpuCost(0, 0.1, None, 12.0, 3.0, 1.0),),
    rtt_us=((0, 12.5), (1, 13.0)),
    system_share_pct=40.0,
    cpu_us_per_round=None,
    cpu_pressure_avg10=1.25,
    flags=("smt",),
    missing={"psi": "no /proc/pressure"},
)
STALLS = StallSummary(5.0, 1.25, 2, 1, (0, 3), (3,))
NOISE = StepNoise(5.0, 1, (0.0, 7.5, None), (1.0, None, 2.0), (2400.0, None, 800.0))
OPRATE = OpRate(100.0, 50.0, 1.5, 48.0, 52.0, 3)
CELL = Cell("pipe", 0, 1, "smt", LAT.rounded(), LAT.rounded(), LAT.rounded(), 12345.0)
STEP_LATENCY = StepLatency("1 in 64", (PAIR.rounded(),), {"rtt_p50": (7000.0, 7100.0)})

SPREAD = session_spread([[100.0, 101.0, 99.5], [90.0, 91.0, 92.0]])
FLOOR = aa_noise_floor([100.0, 101.0, 99.0, 100.5, 98.0, 102.0, 100.0, 99.0], 4.0)
READING = RunReading(
    "sysv-msg", "same", 1, 2, 1e5, threads=(ThreadReading(0, "A", 0, (0, 1), 10),), windows=(9e4,)
)
TIMED_READING = replace(READING, latency=RunLatency.of(PAIR, "every round timed"))

# Each converted class: an object and what its own writer puts in a record.
CASES: list[tuple[object, dict[str, Any]]] = [
    (COSTS, to_plain(COSTS)),
    (STALLS, to_plain(STALLS)),
    (NOISE, NOISE.to_dict()),
    (replace(NOISE, mhz=None), replace(NOISE, mhz=None).to_dict()),
    (OPRATE, OPRATE.to_dict()),
    (replace(OPRATE, n=None), replace(OPRATE, n=None).to_dict()),
    (LAT.rounded(), LAT.to_dict()),
    (PAIR.rounded(), PAIR.to_dict()),
    (STEP_LATENCY, STEP_LATENCY.to_dict()),
    (StepThread(0, "A", 1, 10.5, 7, 0), to_plain(StepThread(0, "A", 1, 10.5, 7, 0))),
    (StepUnit(0, 40, 1e5, [0, 1]), to_plain(StepUnit(0, 40, 1e5, [0, 1]))),
    (SPREAD, to_plain(SPREAD)),
    (FLOOR, to_plain(FLOOR)),
    (Verdict("warn", "box", "smt on"), to_plain(Verdict("warn", "box", "smt on"))),
    (READING, READING.to_dict()),  # its computed label is dropped on the way back
    (TIMED_READING, TIMED_READING.to_dict()),
]


@pytest.mark.parametrize("obj, written", CASES, ids=lambda x: type(x).__name__)
def test_every_converted_class_comes_back_from_json_unchanged(
    obj: object, written: dict[str, Any]
) -> None:
    assert from_plain(type(obj), _json(written)) == obj


def test_the_matrix_cell_reads_its_written_names_back() -> None:
    written = CELL.to_dict()
    assert list(written)[:4] == ["workload", "from", "to", "class"]
    assert Cell.from_dict(_json(written)) == CELL


def test_real_box_facts_and_real_samples_come_back_unchanged(real_samples: list[Sample]) -> None:
    facts = read_box()
    assert from_plain(BoxFacts, _json(to_plain(facts))) == facts
    for s in real_samples:
        # A record keeps latency to three significant digits (LatencySummary.rounded).
        kept = replace(s, latency=tuple(p.rounded() for p in s.latency))
        assert Sample.from_dict(_json(s.to_dict())) == kept
    last = real_samples[-1]
    assert last.costs is not None and last.costs.threads, "detail on: costs were read"
    assert last.latency, "the native ends timed their rounds"


def test_the_written_shape_is_what_the_dataclass_fields_say() -> None:
    # Same keys, same order as before the generic writer (asdict's).
    assert list(to_plain(COSTS)) == [
        "threads", "cpus", "rtt_us", "system_share_pct", "cpu_us_per_round",
        "cpu_pressure_avg10", "flags", "missing",
    ]  # fmt: skip
    assert json.dumps(to_plain(COSTS)["rtt_us"]) == "[[0, 12.5], [1, 13.0]]"
    assert list(LAT.to_dict()) == ["n", "mean", "p50", "p99", "p999", "max"]
    assert LAT.to_dict()["mean"] == 7120.0
    assert "mhz" not in replace(NOISE, mhz=None).to_dict()
    assert "n" not in replace(OPRATE, n=None).to_dict()


def test_missing_optional_keys_read_as_their_defaults() -> None:
    assert from_plain(Costs, {}) == Costs()
    assert from_plain(StallSummary, {"threshold_s": 5, "left_out_s": 0, "windows_left_out": 0,
                                     "gaps": 0}) == StallSummary(5.0, 0.0, 0, 0)  # fmt: skip
    assert (
        from_plain(StepNoise, {k: v for k, v in NOISE.to_dict().items() if k != "mhz"}).mhz is None
    )
    old_cell = {k: v for k, v in _json(CELL.to_dict()).items() if k not in ("reverse", "rtt")}
    assert Cell.from_dict(old_cell).reverse == NOTHING_TIMED
    d = _json(to_plain(read_box()))
    del d["governor"], d["limits"]
    d["limits_of_a_newer_ipctop"] = {"x": 1}  # a newer writer's key is dropped
    back = from_plain(BoxFacts, d)
    assert back.governor is None and back.limits == type(back.limits)()


def test_an_old_sample_without_the_optional_keys_reads(real_samples: list[Sample]) -> None:
    s = real_samples[0]
    bare = {"t": s.t, "dt": s.dt, "pairs": 1, "threads": _json(s.to_dict())["threads"],
            "total_ops_per_s": s.total_ops_per_s, "latency": None, "costs": {}, "ops": {}}  # fmt: skip
    back = Sample.from_dict(bare)
    assert back == Sample(s.t, s.dt, 1, s.threads, s.total_ops_per_s)
    assert back.costs is None and back.ops is None and back.latency == ()


def test_json_lists_become_the_declared_tuples() -> None:
    back = from_plain(Costs, _json(to_plain(COSTS)))
    assert isinstance(back.rtt_us, tuple) and isinstance(back.rtt_us[0], tuple)
    assert isinstance(back.threads[0], ThreadCost)


@pytest.mark.parametrize(
    "cls, d, named",
    [
        (Costs, {"system_share_pct": "a lot"}, "Costs: system_share_pct"),
        (Costs, {"threads": [{"pair": 0}]}, "Costs: threads.0.role"),
        (
            StallSummary,
            {"threshold_s": 5, "left_out_s": 0, "windows_left_out": [], "gaps": 0},
            "StallSummary: windows_left_out",
        ),  # fmt: skip
        (LatencySummary, {"n": "many"}, "LatencySummary: n"),
        (Costs, ["not", "an", "object"], "Costs: top level"),
        (Verdict, {"status": "fine", "subject": "box", "reason": "?"}, "Verdict: "),
    ],
)
def test_a_wrong_type_is_refused_naming_the_field(cls: type, d: Any, named: str) -> None:
    with pytest.raises(PlainError) as e:
        from_plain(cls, d)
    assert str(e.value).startswith(named), str(e.value)
    assert "\n" not in str(e.value)


def test_a_check_runs_latency_is_typed_and_writes_what_check_wrote_as_a_dict() -> None:
    """check's JSON keeps a run's pooled latency as before it was typed: PairLatency's
    rounded dict, then the note."""
    written = TIMED_READING.to_dict()["latency"]
    assert written == {**PAIR.to_dict(), "note": "every round timed"}
    assert list(written) == ["pair", "rtt", "oneway", "note"]
    lat = TIMED_READING.latency
    assert lat is not None and lat.rtt == LAT.rounded() and lat.rtt.p99 == 9000.0
    assert READING.to_dict()["latency"] is None  # not timed: null, as before
