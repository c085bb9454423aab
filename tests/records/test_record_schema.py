"""The published JSON Schema: generated from the record models, and every record ipctop
writes (a real sweep, a real live session) validates against it with an outside validator.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import run_cli

from ipctop.analysis.scaling import ScalingPoint
from ipctop.box import read_box
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.engine.opstats import OpRate
from ipctop.engine.sampler import Sampler
from ipctop.output.records.record import Record
from ipctop.output.records.record_box import Box
from ipctop.output.records.record_io import read_record
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
