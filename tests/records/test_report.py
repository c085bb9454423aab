"""`ipctop report`: real records made on this box, and synthetic fleets named as such."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import ROOT, run_cli, two_cpus

from ipctop.analysis.fleet import FAST, IMBALANCE, NOISE, SCALES, SLOW, group_runs
from ipctop.output.report.report_input import from_check


@pytest.fixture(scope="module")
def real_records(tmp_path_factory) -> Path:
    """A quick check and two short sweeps, measured on this box now: both kinds of
    record in one group, three of them (a second check would add its quarter minute)."""
    if len(__import__("os").sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 allowed CPUs; this box allows only 1")
    d = tmp_path_factory.mktemp("real")
    r = run_cli("check", "--quick", "--json", timeout=180)
    assert r.returncode in (0, 1), r.stderr  # 1: a line failed on the shared box
    (d / "check.json").write_text(r.stdout)
    for i in (1, 2):
        r = run_cli(
            "sweep", "--max-pairs", "2", "--seconds", "1", "--repeat", "1", "-q",
            "--json", str(d / f"sweep{i}.json"), timeout=120,
        )  # fmt: skip
        assert r.returncode in (0, 1), r.stderr
    return d


def synthetic_check(host: str, kernel: str = "6.1.0-synthetic", scale: float = 1.0,
                    all_scale: float = 1.0, spread: float = 0.01, pair1: float = 1.0) -> dict:  # fmt: skip
    """A check result built by hand, in the layout `check --json` writes."""
    runs = []
    for workload, one in (("sysv-msg", 200_000.0), ("sysv-sem", 150_000.0)):
        for placement, pairs, total in (("same", 1, one), ("same", 2, 2 * one * 0.95)):
            total *= scale * (all_scale if pairs == 2 else 1.0)
            rounds = [total] if pairs == 1 else [total / 2, total / 2 * pair1]
            threads = [
                {"pair": p, "role": role, "rounds": int(r / 2), "bound_cpu": p, "seen_cpus": [p],
                 "errors": 0, "state": "running"}
                for p, r in enumerate(rounds) for role in "AB"
            ]  # fmt: skip
            runs.append({
                "workload": workload, "placement": placement, "pairs": pairs, "ncpus": 2,
                "total_ops_per_s": total, "threads": threads, "oversubscribed": False,
                "events": [], "seconds": 1.5, "error": None,
                "window_totals": [total * (1 - spread), total, total * (1 + spread)],
            })  # fmt: skip
    box = {"hostname": host, "cpu_model": "Synthetic CPU 9000", "kernel_release": kernel,
           "allowed": [0, 1], "online": [0, 1]}  # fmt: skip
    return {"schema": "ipctop.check/1", "quick": True, "engine": "native", "cpus": [0, 1],
            "box": box, "runs": runs, "verdicts": [], "status": "ok", "exit_code": 0}  # fmt: skip


def write(d: Path, name: str, data: dict) -> Path:
    p = d / name
    p.write_text(json.dumps(data))
    return p


def flags_of(groups, host: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for g in groups:
        for b in g.boxes:
            if b.run.host == host:
                for f in b.flags:
                    out.setdefault(f.reason, []).append(f.detail)
    return out


def synthetic_fleet(**odd) -> list:
    runs = [from_check(synthetic_check(f"synthetic-{i}", scale=1 + 0.01 * i), f"s{i}.json")
            for i in range(4)]  # fmt: skip
    runs.append(from_check(synthetic_check("synthetic-odd", **odd), "odd.json"))
    return group_runs(runs)


# --- real records ---------------------------------------------------------------------


@two_cpus
def test_report_on_real_records_of_this_box(real_records: Path) -> None:
    from ipctop.box import read_box

    box = read_box()
    r = run_cli("report", str(real_records))
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith(f"{box.cpu_model} · kernel {box.kernel_release} · 3 record(s)")
    for name in ("check.json", "sweep1.json", "sweep2.json"):
        assert name in r.stdout
    assert "group median" in r.stdout and "sysv-msg same 1" in r.stdout
    # Every box cell is a whole percent against the median, its interval in brackets.
    assert re.search(r"[+-]\d+ % \[[+-]\d+, [+-]\d+\]", r.stdout), r.stdout
    assert "fewer than 3 records" not in r.stdout


@two_cpus
@pytest.mark.slow  # the quick loop's slowest (3-19 s); CI runs it
def test_real_and_synthetic_records_of_other_kernels_form_their_own_groups(tmp_path: Path) -> None:
    # One short sweep is a real record of this box's group; real_records' two checks
    # would make the quick tier, which lacks the test above, wait for them here.
    (tmp_path / "real").mkdir()
    r = run_cli(
        "sweep", "--max-pairs", "1", "--seconds", "0.3", "--warmup", "0", "--repeat", "1",
        "-q", "--json", str(tmp_path / "real" / "sweep.json"), timeout=120,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    for i in range(3):
        write(tmp_path, f"synthetic{i}.json", synthetic_check(f"synthetic-{i}"))
    r = run_cli("report", str(tmp_path), "--format", "markdown")
    assert r.returncode == 0, r.stderr
    titles = [ln for ln in r.stdout.splitlines() if ln.startswith("## ")]
    assert len(titles) == 2, titles
    assert any("Synthetic CPU 9000 · kernel 6.1.0-synthetic · 3 record(s)" in t for t in titles)


# --- synthetic fleets: each reason -------------------------------------------------------


def test_synthetic_slow_box_is_flagged_slower_with_its_interval() -> None:
    groups = synthetic_fleet(scale=0.6)
    got = flags_of(groups, "synthetic-odd")
    assert SLOW in got and any(d.startswith("sysv-msg same 1 pair: -41 %") for d in got[SLOW])
    for i in range(4):  # the others are within a few % of the median
        assert SLOW not in flags_of(groups, f"synthetic-{i}")


def test_synthetic_fast_box_is_called_faster() -> None:
    assert FAST in flags_of(synthetic_fleet(scale=1.5), "synthetic-odd")


def test_synthetic_box_that_scales_worse_is_flagged_so() -> None:
    got = flags_of(synthetic_fleet(all_scale=0.6), "synthetic-odd")
    assert SCALES in got and SLOW in got  # its all-CPU figure is slower too
    assert any("sysv-msg same: 57 % of linear" in d for d in got[SCALES]), got[SCALES]
    assert all("1 pair" not in d for d in got[SLOW])  # one pair is as fast as the rest


def test_synthetic_imbalanced_box_names_the_pair() -> None:
    got = flags_of(synthetic_fleet(pair1=0.5), "synthetic-odd")
    assert IMBALANCE in got and any("pair 1 at 50 % of pair 0" in d for d in got[IMBALANCE])


def test_synthetic_noisy_box_is_flagged_noisy_not_slower() -> None:
    got = flags_of(synthetic_fleet(spread=0.4), "synthetic-odd")
    assert NOISE in got and SLOW not in got


def test_synthetic_pair_of_boxes_is_shown_but_not_judged() -> None:
    runs = [from_check(synthetic_check("synthetic-a"), "a.json"),
            from_check(synthetic_check("synthetic-b", scale=0.5), "b.json")]  # fmt: skip
    (g,) = group_runs(runs)
    assert all(f.reason == IMBALANCE for b in g.boxes for f in b.flags)
    assert g.boxes[1].standings["sysv-msg same 1 pair"].ratio < 1


@pytest.mark.slow  # the quick loop's slowest (3-19 s); CI runs it
def test_fail_on_outlier_exits_1_with_a_synthetic_outlier(tmp_path: Path) -> None:
    for i in range(3):
        write(tmp_path, f"synthetic{i}.json", synthetic_check(f"synthetic-{i}"))
    write(tmp_path, "slow.json", synthetic_check("synthetic-slow", scale=0.5))
    r = run_cli("report", str(tmp_path), "--fail-on-outlier")
    assert r.returncode == 1, r.stderr
    assert "! synthetic-slow (slow.json): slower: sysv-msg same 1 pair: -50 %" in r.stdout
    r = run_cli("report", str(tmp_path / "synthetic0.json"), str(tmp_path / "synthetic1.json"))
    assert r.returncode == 0


# --- formats --------------------------------------------------------------------------------


def test_html_is_self_contained_with_a_curve_per_record(tmp_path: Path) -> None:
    for i in range(3):
        write(tmp_path, f"synthetic{i}.json", synthetic_check(f"synthetic-<{i}>"))
    write(tmp_path, "slow.json", synthetic_check("synthetic-slow", scale=0.5))
    out = tmp_path / "report.html"
    r = run_cli("report", str(tmp_path), "--format", "html", "-o", str(out))
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert not re.search(r"(src|href)=", page)  # nothing fetched from anywhere
    assert "synthetic-&lt;0&gt;" in page  # host names are escaped
    svgs = re.findall(r"<svg.*?</svg>", page, flags=re.S)
    assert len(svgs) == 2  # sysv-msg and sysv-sem, same-core: one chart each
    for svg in svgs:
        root = ET.fromstring(svg)
        lines = root.findall(".//{http://www.w3.org/2000/svg}polyline")
        assert len(lines) == 4 + 1  # one per record and the group median
    assert 'stroke="#c00000"' in page  # the slow one drawn as an outlier


def test_markdown_is_a_pipe_table_per_group(tmp_path: Path) -> None:
    for i in range(3):
        write(tmp_path, f"synthetic{i}.json", synthetic_check(f"synthetic-{i}"))
    r = run_cli("report", str(tmp_path), "--format", "markdown")
    assert r.returncode == 0, r.stderr
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith("| ")]
    assert rows[0].startswith("| box | record |") and len(rows) == 1 + 1 + 3
    assert all(ln.count("|") == rows[0].count("|") for ln in rows)


# --- other schemas and bad input -------------------------------------------------------


def test_other_schemas_and_versions_are_named_and_skipped(tmp_path: Path) -> None:
    for i in range(3):
        write(tmp_path, f"synthetic{i}.json", synthetic_check(f"synthetic-{i}"))
    write(tmp_path, "future.json", {"schema": "ipctop.record/9", "kind": "sweep"})
    write(tmp_path, "ab.json", {"schema": "ipctop.ab/1"})
    write(tmp_path, "abrec.json", {"schema": "ipctop.record/2", "kind": "ab"})
    write(tmp_path, "grafana.json", {"title": "not ours"})
    (tmp_path / "broken.json").write_text('{"schema": "ipctop.check/1", "box": ')
    r = run_cli("report", str(tmp_path))
    assert r.returncode == 0, r.stderr
    notes = [ln for ln in r.stdout.splitlines() if ln.startswith("# skipped")]
    assert len(notes) == 5, notes
    assert any("abrec.json: an A/B of two settings on one box" in n for n in notes)
    assert any(
        "future.json: ipctop.record/9: a version this ipctop does not read" in n for n in notes
    )
    assert any("ab.json: ipctop.ab/1" in n for n in notes)
    assert any("grafana.json: not an ipctop record" in n for n in notes)
    assert any("broken.json: not an ipctop record (not JSON)" in n for n in notes)


def test_a_skipped_version_goes_to_stderr_when_the_report_goes_to_a_file(tmp_path: Path) -> None:
    a = write(tmp_path, "a.json", synthetic_check("synthetic-a"))
    future = copy.deepcopy(synthetic_check("x"))
    future["schema"] = "ipctop.check/7"
    b = write(tmp_path, "b.json", future)
    r = run_cli("report", str(a), str(b), "-o", str(tmp_path / "r.txt"))
    assert r.returncode == 0, r.stderr
    assert "ipctop: skipped" in r.stderr and "ipctop.check/7" in r.stderr


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda d: d / "missing", "no such file or folder"),
        (lambda d: write(d, "x.json", {"hello": 1}), "is not an ipctop record (no ipctop schema)"),
        (lambda d: (d / "x.txt").write_text("plain") and d / "x.txt", "not JSON"),
        (lambda d: d, "no ipctop records to report on"),
    ],
    ids=["missing", "not-ours", "not-json", "empty-folder"],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, make, words: str) -> None:
    path = make(tmp_path)
    r = run_cli("report", str(path))
    assert r.returncode == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in r.stderr, lines
    assert r.stdout == ""


@pytest.mark.skipif(
    shutil.which("setpriv") is None, reason="needs setpriv to drop root's DAC override"
)
def test_an_unreadable_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    write(locked, "a.json", synthetic_check("synthetic-a"))
    locked.chmod(0)
    try:
        # root reads anything; without CAP_DAC_OVERRIDE it is held to the mode bits
        r = subprocess.run(
            ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
             sys.executable, "-m", "ipctop", "report", str(locked)],
            capture_output=True, text=True, cwd=ROOT, timeout=60,
        )  # fmt: skip
    finally:
        locked.chmod(0o755)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == f"ipctop: {locked}: cannot read this folder (permission denied)"
