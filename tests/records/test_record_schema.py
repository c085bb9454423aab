"""The published JSON Schema: generated from the record models, and every record ipctop
writes (a real sweep, a real live session) validates against it with an outside validator;
records written before a field was added still read.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import run_cli, wait_for

from ipctop.analysis.scaling import ScalingPoint
from ipctop.box import read_box
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine, resolve_engine
from ipctop.engine.opstats import OpRate
from ipctop.engine.sampler import Sampler
from ipctop.output.records.record import Record
from ipctop.output.records.record_box import Box
from ipctop.output.records.record_io import read_record, write_record
from ipctop.output.records.record_schema import PUBLISHED, schema_text
from ipctop.output.records.session_recorder import SessionRecorder
from ipctop.plain import from_plain

jsonschema = pytest.importorskip("jsonschema", reason="the test extra installs jsonschema")


def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(PUBLISHED.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_published_schema_is_the_one_the_models_generate() -> None:
    assert PUBLISHED.read_text() == schema_text(), (
        "ipctop/schema/record.schema.json is stale: run python -m ipctop.output.records.record_schema"
    )


def test_a_real_sweep_record_validates(tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    r = run_cli(
        "sweep", "--workload", "sysv-lifecycle", "--cpus", "0", "--seconds", "0.2",
        "--warmup", "0", "--repeat", "2", "--json", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    errors = sorted(validator().iter_errors(d), key=str)
    assert not errors, errors[0]
    assert len(d["steps"][0]["windows"]) >= 2, "the typed window rates were written"


def test_a_real_session_record_with_costs_and_latency_validates(tmp_path: Path) -> None:
    config = RunConfig("sysv-msg", "same", "threads", (0,))
    path = tmp_path / "session.json"
    with Engine(config) as engine:
        engine.start(1)
        sampler = Sampler(engine)
        sampler.detail = True  # costs in every sample
        run = config.as_run("native", interval=0.1)  # a live run's: no fixed length
        rec = SessionRecorder(path, Box.of(read_box()), run)
        for _ in range(4):
            time.sleep(0.1)
            rec.feed(sampler.sample())
        rec.finish([ScalingPoint(1, rec.record.timeline[-1].total_ops_per_s)])
    d = json.loads(path.read_text())
    errors = sorted(validator().iter_errors(d), key=str)
    assert not errors, errors[0]
    last = d["timeline"][-1]
    assert last["costs"] is not None and last["costs"]["threads"], "typed costs were written"
    assert read_record(path) == Record.from_dict(d)
    # A workload that counts no operations writes no op counts: its records do not grow.
    assert all("ops" not in t for s in d["timeline"] for t in s["threads"])


@pytest.mark.skipif(resolve_engine() != "native", reason="sysv-lifecycle needs the native engine")
def test_a_lifecycle_session_keeps_each_ends_op_counts(tmp_path: Path) -> None:
    config = RunConfig("sysv-lifecycle", "same", "threads", (0,), "native", queues=64)
    path = tmp_path / "session.json"
    with Engine(config) as engine:
        engine.start(1)
        # Both ends past their first msgget before the samples: a loaded box can hold
        # an end back past the samples' 0.3 s, and its last count would still be 0.
        ends = engine.ends()
        wait_for(lambda: all(engine.counters.read(e.slot).ops[0] > 0 for e in ends), 30)
        sampler = Sampler(engine)
        try:
            rec = SessionRecorder(path, Box.of(read_box()), config.as_run("native", interval=0.1))
            for _ in range(3):
                time.sleep(0.1)
                rec.feed(sampler.sample())
            rec.finish([ScalingPoint(1, rec.record.timeline[-1].total_ops_per_s)])
        finally:
            sampler.close()
    d = json.loads(path.read_text())
    errors = sorted(validator().iter_errors(d), key=str)
    assert not errors, errors[0]
    written = [t["ops"] for s in d["timeline"] for t in s["threads"]]
    assert written and all(len(ops) == 5 and all(type(n) is int for n in ops) for ops in written)
    assert written[-1][0] > 0, written  # msgget calls, cumulative
    back = read_record(path)
    assert [list(t.ops) for s in back.timeline for t in s.threads] == written
    assert back == Record.from_dict(d)


OP = {"per_s": 1.0, "avg": 1.0, "stddev": 0.0, "min": 1.0, "max": 1.0}


def test_a_sample_recorded_with_an_extra_dict_still_reads(tmp_path: Path) -> None:
    # Records written before the sample's fields were typed kept them under "extra".
    d = {
        "schema": "ipctop.record/2", "kind": "session", "created": "2026-12-03T10:00:00+00:00",
        "interrupted": False, "box": {}, "events": [], "steps": [], "points": [],
        "config": {"workload": "sysv-msg", "placement": "same", "mode": "threads",
                   "engine": "native", "cpus": [0], "seconds": None, "warmup": None,
                   "repeat": None, "interval": 0.5},
        "timeline": [{"t": 0.5, "dt": 0.5, "pairs": 1, "threads": [], "total_ops_per_s": 10.0,
                      "extra": {"oversubscribed": True, "ops": {"msgget": OP}}}],
    }  # fmt: skip
    path = tmp_path / "old.json"
    path.write_text(json.dumps(d))
    (s,) = read_record(path).timeline
    assert s.oversubscribed is True and s.ops == {"msgget": from_plain(OpRate, OP)}
    assert s.costs is None and s.latency == ()


# One end as ipctop wrote it before ThreadSample kept op counts: no "ops" key.
OLD_THREAD = {
    "pair": 0, "role": "A", "tid": 4242, "bound_cpu": 0, "last_cpu": 0, "rounds": 1200,
    "ops_per_s": 2400.0, "errors": 0, "state": "running", "vcsw_per_s": 5.0, "ivcsw_per_s": 0.0,
}  # fmt: skip


def test_a_record_from_before_the_op_counts_still_reads(tmp_path: Path) -> None:
    d = {
        "schema": "ipctop.record/3", "kind": "session", "created": "2026-12-05T10:00:00+00:00",
        "interrupted": False, "box": {}, "events": [], "steps": [], "points": [],
        "config": {"workload": "sysv-lifecycle", "placement": "same", "mode": "threads",
                   "engine": "native", "cpus": [0], "seconds": None, "warmup": None,
                   "repeat": None, "interval": 0.5},
        "timeline": [{"t": 0.5, "dt": 0.5, "pairs": 1, "threads": [OLD_THREAD],
                      "total_ops_per_s": 2400.0, "cpus": [], "ctxt_per_s": None, "ipis": [],
                      "events": [], "oversubscribed": False, "ops": {"msgget": OP},
                      "latency": [], "costs": None, "side": None}],
    }  # fmt: skip
    errors = sorted(validator().iter_errors(d), key=str)
    assert not errors, errors[0]  # the published schema still takes the older shape
    (s,) = read_record(write_json(tmp_path / "old.json", d)).timeline
    (t,) = s.threads
    assert t.ops == () and (t.rounds, t.ops_per_s) == (1200, 2400.0)
    # Written again it keeps that shape: no empty op counts added to it.
    again = write_record(tmp_path / "again.json", read_record(tmp_path / "old.json"))
    assert json.loads(again.read_text())["timeline"][0]["threads"] == [OLD_THREAD]


def write_json(path: Path, d: object) -> Path:
    path.write_text(json.dumps(d))
    return path
