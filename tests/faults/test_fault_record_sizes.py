"""Issue 27, finding 22: a record's strings and nesting are bounded for every reader.

A real sweep record made by this box, then edited as the hostile run did: a
10 MB `config.workload` became one 20 MB stderr line in compare, a 10 MB
`box.cpu_model` kept replay's screen busy for 8 s after q, and report read a
record nested 40 deep that compare refuses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from ipctop.output.records.bounded_read import MAX_RECORD_DEPTH
from ipctop.output.records.record_checks import STRING_MAX

QUICK = ("--seconds", "0.5", "--warmup", "0", "--repeat", "1", "--cpus", "0")
HUGE = "x" * 10_000_000


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("made") / "sweep.json"
    r = run_cli("sweep", "-w", "sysv-sem", "--max-pairs", "1", *QUICK, "--json", str(path))
    assert r.returncode == 0, r.stderr
    return path


def edited(sweep: Path, tmp_path: Path, name: str, where: str, value: Any) -> Path:
    d = json.loads(sweep.read_text())
    part, key = where.split(".")
    d[part][key] = value
    out = tmp_path / name
    out.write_text(json.dumps(d))
    return out


def one_short_line(r, code: int = 2) -> str:
    assert "Traceback" not in r.stderr, r.stderr[:2000]
    assert r.returncode == code, (r.returncode, r.stderr[:2000])
    assert len(r.stdout) + len(r.stderr) < 2000, (len(r.stdout), len(r.stderr))
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_compare_names_a_10_mb_string_in_one_short_line(sweep: Path, tmp_path: Path) -> None:
    big = edited(sweep, tmp_path, "big.json", "config.workload", HUGE)
    line = one_short_line(run_cli("compare", str(sweep), str(big)))
    assert line == (
        f"ipctop: big.json: config.workload is 10,000,000 characters long (at most {STRING_MAX:,})"
    )


def test_replay_refuses_a_10_mb_cpu_model_before_the_screen(sweep: Path, tmp_path: Path) -> None:
    big = edited(sweep, tmp_path, "cpu.json", "box.cpu_model", HUGE)
    line = one_short_line(run_cli("replay", str(big)))
    assert "box.cpu_model is 10,000,000 characters long" in line


def test_report_skips_a_10_mb_string_and_a_record_nested_too_deep(
    sweep: Path, tmp_path: Path
) -> None:
    big = edited(sweep, tmp_path, "cpu.json", "box.cpu_model", HUGE)
    deep: list = []
    for _ in range(MAX_RECORD_DEPTH + 8):
        deep = [deep]
    nested = edited(sweep, tmp_path, "deep.json", "config.extra", deep)
    # compare refuses the nesting: report must not read what compare cannot.
    assert "nested more than 32 deep" in one_short_line(run_cli("compare", str(nested), str(sweep)))
    r = run_cli("report", str(sweep), str(big), str(nested))
    assert r.returncode == 0, r.stderr
    assert len(r.stdout) + len(r.stderr) < 5000, (len(r.stdout), len(r.stderr))
    assert "1 record(s)" in r.stdout, r.stdout  # only the unedited one is reported
    assert f"# skipped {nested}: not a record (nested more than 32 deep)" in r.stdout, r.stdout
    assert f"# skipped {big}: " in r.stdout and "cpu_model is 10,000,000 characters" in r.stdout
