"""A step with no rate in a record, and what every reader makes of it.

The records are hand-made (helpers/handmade_records.py): a sweep's steps with
their figures planted, one of them as a sweep writes a step whose every window
stalled (tests/faults/test_fault_no_rate.py makes such a record for real).
Read back, the step is told apart from a 0 and skipped, with a word, by the
points, compare, report, the CSV, a replay and the summary table.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from handmade_records import handmade_sweep

from ipctop.live.replay_source import sweep_samples
from ipctop.output.exports.csvout import csv_text
from ipctop.output.records.latency_record import FIGURES, StepLatency
from ipctop.output.records.record import Record, Step, record_points, unrated
from ipctop.output.records.record_io import write_record
from ipctop.output.report.report_input import load
from ipctop.output.text.compare_records import compare, format_comparison
from ipctop.output.text.latency_compare import (
    format_latency_comparison,
    has_latency,
    latency_comparison_rows,
)
from ipctop.output.text.tables import format_summary

WHY = "every window of its 5.0 s stalled: ipctop or its ends went 2 s or more without CPU"


def _stalled_at(pairs: int, name: str = "stalled.json") -> Record:
    """The hand-made sweep with its step at `pairs` as one whose windows all stalled."""
    rec = handmade_sweep()
    old = next(s for s in rec.steps if s.pairs == pairs)
    for t in old.threads:
        t.ops_per_s = 0.0
    rec.steps = [
        Step(pairs=pairs, total_ops_per_s=0.0, threads=old.threads, no_rate=WHY)
        if s.pairs == pairs
        else s
        for s in rec.steps
    ]
    rec.source = f"/records/{name}"
    return rec


def test_the_step_reads_back_as_no_rate_not_as_0() -> None:
    rec = _stalled_at(2)
    d = json.loads(json.dumps(rec.to_dict()))
    one, two = d["steps"]
    assert "no_rate" not in one  # absent, not null, where there is a rate
    assert two["no_rate"] == WHY and two["repeats"] == [] and two["total_ops_per_s"] == 0.0
    back = Record.from_dict(d)
    assert back == rec and back.steps[1].repeats == []
    assert unrated(back) == {2: WHY}
    assert [(p.pairs, p.total_ops_per_s) for p in record_points(back)] == [(1, 400_000.0)]


def test_the_summary_says_no_rate_and_divides_by_no_missing_1_pair_rate() -> None:
    rec = _stalled_at(1)
    lines = format_summary(record_points(rec), unrated=unrated(rec)).splitlines()
    assert lines[1].split() == ["1", "no", "rate", "-", "-", "-", "-", "-", "-"], lines
    # 2 pairs: its total, and no scalability or efficiency against a 1-pair rate it lacks.
    assert lines[2].split()[:5] == ["2", "1,000,000", "500,000", "-", "-"], lines
    assert f"no rate at 1 pair(s): {WHY}" in lines


def test_compare_skips_the_step_and_says_so() -> None:
    base, stalled = handmade_sweep(), _stalled_at(2)
    base.source = "/records/base.json"
    cmp = compare([base, stalled], session_sd_pct=0.0)
    assert f"skipped: stalled.json at 2 pair(s): no rate ({WHY})" in cmp.notes
    (row,) = [r for r in cmp.rows if r.pairs == 2]
    assert row.totals == (1_000_000.0, None) and row.diffs == (None, None)
    text = format_comparison(cmp)
    assert text.index("skipped: stalled.json") < text.index("ops/s")  # above the table


def test_csv_and_replay_leave_the_step_without_a_rate() -> None:
    rec = _stalled_at(2)
    rows = list(csv.DictReader(io.StringIO(csv_text(rec))))
    two = [r for r in rows if r["pairs"] == "2"]
    assert two and all(r["total_ops_per_s"] == "" and r["ops_per_s"] == "" for r in two)
    assert all(float(r["total_ops_per_s"]) == 400_000.0 for r in rows if r["pairs"] == "1")
    assert {s.pairs for s in sweep_samples(rec)} == {1}  # no 0 played on the curve


def test_report_skips_the_step_and_says_so(tmp_path: Path) -> None:
    path = write_record(tmp_path / "stalled.json", _stalled_at(2))
    got = load([str(path)])
    assert got.skipped == [f"{path}: 2 pair(s): no rate ({WHY})"]
    (run,) = got.runs
    assert [pts for pts in run.curves.values()] == [((1, 400_000.0),)]


def _timed(rec: Record, ns: float) -> Record:
    """Each step with latency windows planted near `ns`; a step with no rate gets two
    far off, as from the rounds its ends made before they stopped (step_latency keeps
    every window with a timed round, stalled or not)."""
    for s in rec.steps:
        xs = (ns * 5, ns * 9) if s.no_rate is not None else (ns, ns * 1.02, ns * 0.98)
        s.latency = StepLatency(note="timed", windows={k: xs for k in FIGURES})
    return rec


def test_compare_latency_skips_the_step_and_says_so_once() -> None:
    base = _timed(handmade_sweep(), 10_000.0)
    base.source = "/records/base.json"
    stalled = _timed(_stalled_at(2), 11_000.0)
    # The stalled record twice: its step is named once, not per record or per figure.
    records = [base, stalled, stalled]
    text = format_latency_comparison(records, ["base", "new", "again"])
    note = f"skipped: stalled.json at 2 pair(s): no rate ({WHY})"
    assert [line.strip() for line in text.splitlines()].count(note) == 1, text
    rows = [line.split() for line in text.splitlines() if line.startswith("2 ")]
    assert len(rows) == len(FIGURES), text
    for row in rows:
        # The base's figure (10.0µs, its interval, n=3), then "-" for the skipped step
        # in each column after it: its two records and their two ratios.
        assert any("n=3" in c for c in row) and row[-4:] == ["-", "-", "-", "-"], row
    json_rows = latency_comparison_rows(records, ["base", "new", "again"])
    assert {(r["pairs"], r["side"]) for r in json_rows if r["pairs"] == 2} == {(2, "base")}
    # With no figure left anywhere (the only timed step had no rate), no section at all.
    alone = _timed(_stalled_at(2), 11_000.0)
    alone.steps = [s for s in alone.steps if s.pairs == 2]
    assert not has_latency([alone, alone])
