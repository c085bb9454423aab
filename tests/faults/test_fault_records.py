"""Issue 16, parts 1, 3 and 4: hostile record files, a gate that had nothing to judge,
and output paths that could not be written.

Each test runs the real command in a subprocess and asserts the exit code, one
line on stderr and no traceback; the autouse fixture checks that nothing leaked.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli
from handmade_records import sweep_of

from ipctop.output.records.bounded_read import MAX_RECORD_BYTES
from ipctop.output.records.record import Step
from ipctop.output.records.record_io import write_record

NOISE = (-0.02, -0.01, 0.0, 0.01, 0.02)


def make(path: Path, totals: list[float], kernel: str = "6.1.0") -> Path:
    rec = sweep_of(
        # Five windows each (planted ±2 % noise), so the gate has intervals to judge.
        [Step(i + 1, t, windows=[t * math.exp(e) for e in NOISE]) for i, t in enumerate(totals)],
        workload="sysv-sem",
        box={"kernel_release": kernel},
        seconds=1.0,
        warmup=0.0,
    )
    return write_record(path, rec)


def one_line(r: subprocess.CompletedProcess, code: int) -> str:
    assert r.returncode == code, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    # Leftovers of other runs on this shared box are announced in a note of their own.
    lines = [ln for ln in r.stderr.strip().splitlines() if not ln.startswith("ipctop: note:")]
    assert len(lines) == 1, r.stderr
    return lines[0]


@pytest.fixture
def good(tmp_path: Path) -> str:
    return str(make(tmp_path / "good.json", [1e6, 2e6]))


# --- 1: unbounded reads -------------------------------------------------------------


def test_compare_refuses_dev_zero_at_once(good: str) -> None:
    # On main this read until the OOM killer came; the timeout is the test's only guard.
    r = run_cli("compare", good, "/dev/zero", timeout=30)
    assert "/dev/zero is not a regular file" in one_line(r, 2)


def test_compare_refuses_a_fifo_without_waiting_for_a_writer(good: str, tmp_path: Path) -> None:
    fifo = tmp_path / "rec.json"
    os.mkfifo(fifo)
    r = run_cli("compare", good, str(fifo), timeout=30)
    assert "not a regular file" in one_line(r, 2)


def test_compare_refuses_a_record_larger_than_the_cap(good: str, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(MAX_RECORD_BYTES + 1)  # sparse: no disk is used
    r = run_cli("compare", good, str(big), timeout=30)
    assert "a record is at most 256 MiB" in one_line(r, 2)


def test_compare_refuses_a_record_nested_too_deep(good: str, tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200 + "]" * 200)  # below Python's recursion limit, far above ours
    r = run_cli("compare", good, str(deep))
    assert "nested more than 32 deep" in one_line(r, 2)


def test_replay_refuses_dev_zero() -> None:
    r = run_cli("replay", "/dev/zero", timeout=30)
    assert "not a regular file" in one_line(r, 2)


# --- 3: a gate that passes on nothing ----------------------------------------------


@pytest.mark.parametrize(
    "totals, says",
    [
        ([], "no points at all"),
        ([1e6], "at 2 pair(s): no 2-pair point"),
        ([1e6, 2e6, 3e6], "the baseline has no 3-pair point"),
    ],
    ids=["empty", "fewer-points", "more-points"],
)
def test_fail_below_does_not_pass_a_point_it_cannot_compare(
    good: str, tmp_path: Path, totals: list[float], says: str
) -> None:
    other = make(tmp_path / "other.json", totals)
    r = run_cli("compare", "--fail-below", "5", good, str(other))
    assert r.returncode == 1, r.stdout
    assert "not comparable" in r.stdout and says in r.stdout, r.stdout
    assert "Traceback" not in r.stderr


def test_fail_below_with_a_zero_baseline_does_not_pass(tmp_path: Path) -> None:
    zero = make(tmp_path / "zero.json", [0.0, 0.0])
    new = make(tmp_path / "new.json", [1e6, 2e6])
    r = run_cli("compare", "--fail-below", "5", str(zero), str(new))
    assert r.returncode == 1, r.stdout
    assert "the baseline's 1-pair total is 0" in r.stdout


def test_fail_below_still_passes_matching_records(good: str, tmp_path: Path) -> None:
    same = make(tmp_path / "same.json", [1e6, 2e6])
    # Planted records without a session level: a measured spread of 0 lets the gate judge.
    r = run_cli("compare", "--fail-below", "5", good, str(same), "--session-sd", "0")
    assert r.returncode == 0 and "(2 judged, one-sided, Holm 5 % family-wise)" in r.stdout, r.stdout


# --- 4: output paths checked before the first pair ----------------------------------

SWEEP = ("sweep", "--seconds", "0.2", "--warmup", "0", "--repeat", "1", "--max-pairs", "1")


@pytest.mark.parametrize(
    "option, target, says",
    [
        ("--json", "/proc/x.json", "cannot write in /proc"),
        ("--json", "{tmp}", "is a directory"),
        ("--json", "{tmp}/missing/x.json", "no such directory"),
        ("--csv", "/dev/null", "is not a regular file"),
    ],
    ids=["proc", "directory", "missing-folder", "device"],
)
def test_sweep_refuses_an_unwritable_output_before_any_pair(
    tmp_path: Path, option: str, target: str, says: str
) -> None:
    r = run_cli(*SWEEP, option, target.format(tmp=tmp_path))
    line = one_line(r, 2)
    assert says in line, line
    assert "pair(s)" not in r.stdout  # no step ran


def test_tui_refuses_an_unwritable_record_before_any_pair() -> None:
    r = run_cli("--record", "/proc/x.json")
    assert "cannot write in /proc" in one_line(r, 2)


def test_full_disk_at_the_end_keeps_the_record_and_says_where(filling_disk) -> None:
    full = filling_disk(f"{' '.join(SWEEP[:2])} 2 --warmup 0 --repeat 1 --max-pairs 1")
    assert full.run.returncode == 1, full.run.stderr
    assert "Traceback" not in full.run.stderr
    assert "No space left on device" in full.line
    assert json.loads(full.kept.read_text())["kind"] == "sweep"
