"""The JSON record, and the files and tables made from it (CSV, gnuplot, result matrix)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import pytest

from ipctop.analysis.scaling import ScalingPoint
from ipctop.engine.sample import CpuSample, Sample, ThreadSample
from ipctop.errors import EXIT_USAGE, RecordError
from ipctop.output.exports.csvout import COLUMNS, write_csv
from ipctop.output.exports.gnuplot import write_gnuplot
from ipctop.output.records.record import (
    SCHEMA,
    Record,
    Step,
    StepThread,
    record_points,
    validate_record_dict,
)
from ipctop.output.records.record_io import read_record, write_record
from ipctop.output.text.tables import format_matrix

CONFIG = {
    "workload": "psem",
    "placement": "spread",
    "mode": "threads",
    "engine": "native",
    "cpus": [0, 1],
    "seconds": 5.0,
    "warmup": 1.0,
    "repeat": 3,
    "interval": 1.0,
}


def threads(pairs: int, per_thread: float) -> list[StepThread]:
    return [
        StepThread(pair=p, role=r, cpu=p, ops_per_s=per_thread, rounds=int(per_thread * 5))
        for p in range(pairs)
        for r in ("A", "B")
    ]


def sweep_record() -> Record:
    return Record(
        kind="sweep",
        box={"kernel_release": "6.1.0", "cpu_model": "Pentium III (fake)"},
        config=dict(CONFIG),
        steps=[
            Step(
                1,
                948_005.0,
                repeats=[940_000.0, 948_005.0, 950_000.0],
                threads=threads(1, 474_002.5),
            ),
            Step(2, 1_768_273.0, repeats=[1_768_273.0], threads=threads(2, 442_068.25)),
        ],
        events=["warmup done"],
    )


def sample(t: float) -> Sample:
    return Sample(
        t=t,
        dt=1.0,
        pairs=1,
        threads=(
            ThreadSample(0, "A", 101, 0, 0, 10, 10.0),
            ThreadSample(0, "B", 102, 0, 1, 10, 10.0),
        ),
        total_ops_per_s=20.0,
        cpus=(CpuSample(0, 10.0, 50.0, 0.0, 40.0),),
        ctxt_per_s=1234.0,
        events=("pair 0 moved",),
    )


def write_json(path: Path, d: Any) -> Path:
    path.write_text(json.dumps(d))
    return path


def test_round_trip_sweep(tmp_path: Path) -> None:
    rec = sweep_record()
    path = write_record(tmp_path / "record.json", rec)
    back = read_record(path)
    assert back == rec
    assert back.source == str(path)
    assert back.name == "record.json"
    d = json.loads(path.read_text())
    assert d["schema"] == SCHEMA
    assert list(d) == [
        "schema", "kind", "created", "interrupted", "box", "config",
        "steps", "points", "timeline", "events",
    ]  # fmt: skip
    step = d["steps"][0]
    assert step["spread_pct"] == pytest.approx(100 * 10_000 / 948_005)
    assert set(step) == {
        "pairs",
        "total_ops_per_s",
        "repeats",
        "spread_pct",
        "oversubscribed",
        "threads",
        "costs",
        "ops",
        "events",
        "windows",
    }
    assert step["costs"] is None and step["ops"] is None and step["events"] == []
    assert step["threads"][1] == {
        "pair": 0, "role": "B", "cpu": 0, "ops_per_s": 474_002.5, "rounds": 2_370_012, "errors": 0,
    }  # fmt: skip
    assert validate_record_dict(d) == []


def test_round_trip_session_with_timeline(tmp_path: Path) -> None:
    rec = Record(
        kind="session",
        box={},
        config={**CONFIG, "seconds": None, "repeat": None},
        points=[ScalingPoint(1, 20.0), ScalingPoint.from_repeats(2, [30.0, 40.0])],
        timeline=[sample(1.0), sample(2.0)],
        interrupted=True,
    )
    back = read_record(write_record(tmp_path / "s.json", rec))
    assert back.timeline == rec.timeline
    assert back.timeline[0].threads[1].off_cpu
    assert back.points[1].repeats == (30.0, 40.0)
    assert back.points[1].total_ops_per_s == 35.0
    assert back.interrupted is True


def test_record_accepts_plain_dicts() -> None:
    d = sweep_record().to_dict()
    rec = Record(
        kind="sweep",
        box={},
        config=CONFIG,
        steps=d["steps"],
        points=[{"pairs": 1, "total_ops_per_s": 5.0}],
    )
    assert rec.steps[1].threads[3] == StepThread(1, "B", 1, 442_068.25, 2_210_341, 0)
    assert rec.points == [ScalingPoint(1, 5.0)]


def test_write_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    path.write_text("old contents")
    write_record(path, sweep_record())
    assert os.listdir(tmp_path) == ["record.json"]
    assert json.loads(path.read_text())["kind"] == "sweep"
    assert oct(path.stat().st_mode & 0o777) == "0o644"


def test_write_refuses_unreadable_record(tmp_path: Path) -> None:
    rec = sweep_record()
    rec.steps[0].total_ops_per_s = float("nan")
    with pytest.raises(RecordError, match=r"steps\[0\]\.total_ops_per_s is NaN"):
        write_record(tmp_path / "bad.json", rec)
    assert os.listdir(tmp_path) == []


def test_write_failure_keeps_old_file_and_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    path.write_text("old")
    rec = sweep_record()
    rec.events.append(object())  # type: ignore[arg-type]  # what JSON cannot hold
    with pytest.raises(TypeError):
        write_record(path, rec)
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["record.json"]


def test_read_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="no such file") as e:
        read_record(tmp_path / "nope.json")
    assert e.value.exit_code == EXIT_USAGE


def test_read_directory(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="is a directory"):
        read_record(tmp_path)


def test_read_truncated_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    text = json.dumps(sweep_record().to_dict(), indent=1)
    path.write_text(text[:300])
    with pytest.raises(RecordError) as e:
        read_record(path)
    msg = str(e.value)
    assert msg.startswith("record.json is truncated or not JSON (line ")
    err = None
    try:
        json.loads(text[:300])
    except json.JSONDecodeError as x:
        err = x
    assert err is not None
    assert msg.endswith(f"(line {err.lineno}, column {err.colno})")
    assert "\n" not in msg


def test_read_empty_and_binary(tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_text("")
    with pytest.raises(
        RecordError, match=r"empty.json is truncated or not JSON \(line 1, column 1\)"
    ):
        read_record(tmp_path / "empty.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(RecordError, match="bin.json is not JSON"):
        read_record(tmp_path / "bin.json")


def test_read_other_version(tmp_path: Path) -> None:
    d = sweep_record().to_dict()
    d["schema"] = "ipctop.record/7"
    with pytest.raises(RecordError) as e:
        read_record(write_json(tmp_path / "record.json", d))
    assert (
        str(e.value)
        == "record.json is ipctop.record/7; this ipctop reads ipctop.record/1, ipctop.record/2 and ipctop.record/3"
    )


def test_read_not_a_record(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"x.json: schema is missing"):
        read_record(write_json(tmp_path / "x.json", {"hello": 1}))
    with pytest.raises(RecordError, match=r"x.json: top level should be an object, not list"):
        read_record(write_json(tmp_path / "x.json", [1, 2]))
    with pytest.raises(RecordError, match=r"schema is 'other/1'"):
        read_record(write_json(tmp_path / "x.json", {"schema": "other/1"}))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["steps"][1].pop("total_ops_per_s"), "steps[1].total_ops_per_s is missing"),
        (
            lambda d: d["steps"][0].update(total_ops_per_s="fast"),
            "steps[0].total_ops_per_s should be a number, not string",
        ),
        (
            lambda d: d["steps"][0].update(total_ops_per_s=-1.0),
            "steps[0].total_ops_per_s is negative (-1.0)",
        ),
        (lambda d: d["steps"][0].update(pairs=0), "steps[0].pairs is below 1 (0)"),
        (
            lambda d: d["steps"][0].update(pairs=1.5),
            "steps[0].pairs should be an integer, not number",
        ),
        (
            lambda d: d["steps"][0].update(oversubscribed="no"),
            "steps[0].oversubscribed should be true or false, not string",
        ),
        (
            lambda d: d["steps"][0]["repeats"].__setitem__(2, -3),
            "steps[0].repeats[2] is negative (-3)",
        ),
        (lambda d: d["steps"][1]["threads"][3].pop("cpu"), "steps[1].threads[3].cpu is missing"),
        (
            lambda d: d["steps"][1]["threads"].__setitem__(0, 7),
            "steps[1].threads[0] should be an object, not integer",
        ),
        (
            lambda d: d["steps"][0].update(total_ops_per_s=True),
            "steps[0].total_ops_per_s should be a number, not boolean",
        ),
        (lambda d: d.pop("config"), "config is missing"),
        (lambda d: d["config"].pop("placement"), "config.placement is missing"),
        (
            lambda d: d["config"].update(cpus=[0, -1]),
            "config.cpus[1] is negative (-1)",
        ),
        (lambda d: d.update(kind="party"), "kind should be one of sweep, session, ab, not 'party'"),
        (lambda d: d.update(created="yesterday"), "created is not an ISO 8601 time ('yesterday')"),
        (lambda d: d.update(steps={}), "steps should be a list, not object"),
        (
            lambda d: d.update(points=[{"pairs": 1, "settled": "yes"}]),
            "points[0].total_ops_per_s is missing",
        ),
        (
            lambda d: d.update(timeline=[{"t": 1.0, "dt": 1.0, "pairs": 1}]),
            "timeline[0].threads is missing",
        ),
        (lambda d: d.update(events=["ok", 3]), "events[1] should be a string, not integer"),
    ],
)
def test_read_reports_bad_keys(tmp_path: Path, edit: Any, message: str) -> None:
    d = sweep_record().to_dict()
    edit(d)
    assert validate_record_dict(d)[0] == message
    with pytest.raises(RecordError) as e:
        read_record(write_json(tmp_path / "record.json", d))
    assert str(e.value).startswith(f"record.json: {message}")


def test_read_nan_written_by_hand(tmp_path: Path) -> None:
    d = sweep_record().to_dict()
    text = json.dumps(d).replace('"total_ops_per_s": 1768273.0', '"total_ops_per_s": NaN')
    path = tmp_path / "record.json"
    path.write_text(text)
    with pytest.raises(RecordError, match=r"record.json: steps\[1\].total_ops_per_s is NaN"):
        read_record(path)


def test_many_problems_counted_in_one_line(tmp_path: Path) -> None:
    d = sweep_record().to_dict()
    del d["kind"], d["box"], d["events"]
    assert validate_record_dict(d) == ["kind is missing", "box is missing", "events is missing"]
    with pytest.raises(RecordError) as e:
        read_record(write_json(tmp_path / "r.json", d))
    assert str(e.value) == "r.json: kind is missing (and 2 more problems)"


def test_integral_floats_count_as_integers() -> None:
    d = sweep_record().to_dict()
    d["steps"][0]["pairs"] = 1.0
    assert validate_record_dict(d) == []
    assert Record.from_dict(d).steps[0].pairs == 1


def test_record_points_from_points_or_steps() -> None:
    rec = sweep_record()
    pts = record_points(rec)
    assert [(p.pairs, p.total_ops_per_s) for p in pts] == [(1, 948_005.0), (2, 1_768_273.0)]
    assert pts[0].repeats == (940_000.0, 948_005.0, 950_000.0)
    assert pts[0].spread_pct == pytest.approx(100 * 10_000 / 948_005)
    rec.points = [ScalingPoint(2, 7.0, settled=False), ScalingPoint(1, 5.0)]
    assert [(p.pairs, p.total_ops_per_s, p.settled) for p in record_points(rec)] == [
        (1, 5.0, True),
        (2, 7.0, False),
    ]


def test_write_csv_one_row_per_step_and_thread(tmp_path: Path) -> None:
    rec = sweep_record()
    rec.steps.append(Step(3, 2_000_000.0))  # no per-thread figures kept
    path = write_csv(tmp_path / "out.csv", rec)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == COLUMNS
    assert len(rows) == 1 + 2 + 4 + 1
    assert rows[1] == [
        "psem",
        "spread",
        "threads",
        "native",
        "1",
        "0",
        "A",
        "0",
        "474002.5",
        "948005.0",
    ]
    assert rows[6] == [
        "psem",
        "spread",
        "threads",
        "native",
        "2",
        "1",
        "B",
        "1",
        "442068.25",
        "1768273.0",
    ]
    assert rows[7] == ["psem", "spread", "threads", "native", "3", "", "", "", "", "2000000.0"]


def test_write_gnuplot_cores_total(tmp_path: Path) -> None:
    pts = [ScalingPoint(2, 1_768_273.4), ScalingPoint(1, 948_005.0)]
    path = write_gnuplot(tmp_path, "psem-spread", pts)
    assert path == tmp_path / "psem-spread.dat"
    assert path.read_text() == "# pairs total_ops_per_s\n1 948005\n2 1768273\n"
    assert write_gnuplot(tmp_path, "x.txt", pts).name == "x.txt"
    with pytest.raises(ValueError):
        write_gnuplot(tmp_path, "a/b", pts)


def test_format_matrix_pairs_side_by_side() -> None:
    out = format_matrix(threads(2, 442_068.25), title="psem, 2 pairs").splitlines()
    assert out[0] == "psem, 2 pairs"
    assert out[1].split() == ["pair", "A", "cpu", "A", "ops/s", "B", "cpu", "B", "ops/s"]
    assert out[2].split() == ["0", "0", "442,068", "0", "442,068"]
    assert out[3].split() == ["1", "1", "442,068", "1", "442,068"]
    assert out[4] == "total 1,768,273 ops/s"
    assert len(out) == 5  # balanced: no imbalance note


def test_format_matrix_flags_imbalance_and_off_cpu() -> None:
    # The seeds' finding: one pair doing twice the rounds of the others.
    ts = [
        ThreadSample(0, "A", 1, 0, 0, 0, 24_666.0),
        ThreadSample(0, "B", 2, 0, 1, 0, 24_666.0),
        ThreadSample(1, "A", 3, 1, 1, 0, 12_300.0),
        ThreadSample(1, "B", 4, 1, 1, 0, 12_300.0),
        ThreadSample(2, "A", 5, None, 1, 0, 12_310.0),
        ThreadSample(2, "B", 6, None, None, 0, 12_290.0),
    ]
    out = format_matrix(ts, total=50_000.0).splitlines()
    assert out[1].split() == ["0", "0", "24,666", "1", "(bound", "0)", "24,666", "!"]
    assert out[2].split() == ["1", "1", "12,300", "1", "12,300"]
    assert out[3].split() == ["2", "1", "12,310", "-", "12,290"]
    assert out[4] == "total 50,000 ops/s"
    assert out[5].startswith("! this pair differs from the median pair by more than 1.5x")


def test_version_1_record_still_reads_and_its_repeats_stand_in_for_windows(
    tmp_path: Path,
) -> None:
    d = sweep_record().to_dict()
    d["schema"] = "ipctop.record/1"
    for step in d["steps"]:
        del step["windows"]
    for point in d["points"]:
        del point["windows"]
    back = read_record(write_json(tmp_path / "v1.json", d))
    assert back.steps[0].windows == []
    point = record_points(back)[0]
    assert point.samples == (940_000.0, 948_005.0, 950_000.0)
    assert point.summary.n == 3
    # Written again, it is the current version.
    again = json.loads(write_record(tmp_path / "again.json", back).read_text())
    assert again["schema"] == SCHEMA == "ipctop.record/3"


def test_version_2_windows_round_trip_and_make_the_interval(tmp_path: Path) -> None:
    rec = sweep_record()
    windows = [947_000.0 + 300 * i for i in range(10)]
    rec.steps[0].windows = windows
    rec.points = [ScalingPoint.from_repeats(1, rec.steps[0].repeats, windows=windows)]
    back = read_record(write_record(tmp_path / "v2.json", rec))
    assert back.steps[0].windows == windows
    point = record_points(back)[0]
    assert point.windows == tuple(windows)
    assert point.total_ops_per_s == pytest.approx(947_000 + 300 * 4.5)
    # The windows are kept, but with 3 runs the runs are the replicate of the interval.
    assert (point.summary.n, point.summary.unit) == (3, "runs")


def test_windows_that_are_not_numbers_are_a_problem() -> None:
    d = sweep_record().to_dict()
    d["steps"][0]["windows"] = [1.0, "fast"]
    assert validate_record_dict(d) == ["steps[0].windows[1] should be a number, not string"]
