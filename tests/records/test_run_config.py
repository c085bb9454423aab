"""One run configuration from the command line to the record: RunConfig.

The engine runs it, a record keeps it (as_run), and a record read back is the
same type again; a record writes only the keys its configuration says, so an
older record written again is what it was.
"""

from __future__ import annotations

import json

import pytest

from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.output.records.record import Record, validate_record_dict

NINE = (
    "workload",
    "placement",
    "mode",
    "engine",
    "cpus",
    "seconds",
    "warmup",
    "repeat",
    "interval",
)


def test_the_record_keeps_the_runs_own_type_and_writes_only_what_it_says() -> None:
    asked = RunConfig("sysv-sem-multi", cpus=(0,), threads=3, latency_every=1, think_ns=5)
    run = asked.as_run("native", seconds=1.0, warmup=0.0, repeat=2, window_s=0.5)
    assert type(run) is type(asked)  # one type, no conversion
    said = run.said()
    assert list(said) == [*NINE, "think_ns", "threads", "sems", "window_s"]
    assert said["engine"] == "native" and said["threads"] == 3 and said["sems"] == 128
    # How rounds were timed is the engine's: carried, never written.
    assert run.latency_every == 1 and "latency_every" not in said
    assert not run.recorded("latency_every") and run.recorded("threads")
    assert not run.recorded("queues")  # another workload's option: not said
    record = Record(kind="sweep", box={}, config=run)
    back = Record.from_dict(json.loads(json.dumps(record.to_dict())))
    assert type(back.config) is type(asked) and back.config.said() == said


def test_the_records_configuration_runs_on_the_engine() -> None:
    run = RunConfig("sysv-sem", cpus=(0,)).as_run("native", interval=0.5)
    with Engine(run) as engine:  # real ends and semaphores
        engine.start(1)
        assert engine.config is run and len(engine.pairs) == 1


def test_an_older_record_written_again_keeps_its_keys() -> None:
    config = {k: None for k in NINE} | {
        "workload": "sysv-msg",
        "placement": "same",
        "mode": "threads",
        "engine": "native",
        "cpus": [0],
        "a newer key": [1, 2],
    }
    d = {
        "schema": "ipctop.record/2",
        "kind": "session",
        "created": "2026-01-01T00:00:00+00:00",
        "interrupted": False,
        "box": {},
        "config": config,
        "steps": [],
        "points": [],
        "timeline": [],
        "events": [],
    }
    record = Record.from_dict(d)
    assert record.config.think_ns == 0 and not record.config.recorded("think_ns")
    assert record.to_dict()["config"] == config  # no think_ns or size made up


@pytest.mark.parametrize("key", NINE)
def test_each_of_the_nine_keys_is_required_in_a_record(key: str) -> None:
    run = RunConfig("pipe", cpus=(0,)).as_run("native", seconds=1.0)
    d = json.loads(json.dumps(Record(kind="sweep", box={}, config=run).to_dict()))
    del d["config"][key]
    assert validate_record_dict(d) == [f"config.{key} is missing"]


def test_a_misspelt_field_is_refused_not_kept() -> None:
    with pytest.raises(TypeError, match="no field cpu"):
        RunConfig("pipe", cpu=(0,))
    with pytest.raises(TypeError, match="no field plcement"):
        RunConfig("pipe").changed(plcement="cross")
    assert RunConfig("pipe").changed(placement="cross").placement == "cross"
