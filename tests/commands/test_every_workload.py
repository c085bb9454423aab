"""Every workload through every command and output, generated from the registry (issue 24).

For each workload in `WORKLOADS`: `run` (text, with `--metrics` scraped once
while it runs), `run --jsonl`, `sweep --json --csv` (the record against the
published schema), `ab` with identical sides and `--json`, `compare` of both
records against themselves, `report`, `replay` of the sweep record in a real
pseudo-terminal, and the Python engine. Each is a real run at the shortest
settings that still give every end some rounds on a loaded 2-CPU box.

A new workload is covered with no edit here: its options get small values from
their declarations, a load workload is sized by its own unit (--groups,
--rooms), and what a workload refuses by design (a placement its `check`
rejects, the Python engine when `python_unavailable` says why) is asserted as
the one-line refusal and exit 2, then the command runs the way it can.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from jsonl_lines import split_jsonl
from prometheus_client.parser import text_string_to_metric_families
from terminal import Terminal

from ipctop.engine.workloads import WORKLOADS, make_workload
from ipctop.errors import UsageError

jsonschema = pytest.importorskip("jsonschema", reason="the test extra installs jsonschema")

pytestmark = pytest.mark.slow

NAMES = list(WORKLOADS)
SCHEMA = ROOT / "ipctop" / "schema" / "record.schema.json"
METRICS_URL = re.compile(r"metrics on (http://\S+/metrics)")
ANSI = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|.)")
TIMEOUT = 120.0


def option_args(name: str) -> list[str]:
    """Each of the workload's options at a small value its declaration allows:
    2, or the default when that is smaller (sysv-lifecycle's --prefill 0)."""
    out: list[str] = []
    for o in WORKLOADS[name].options:
        small = max(o.low, 2)
        value = small if o.default is None else min(o.default, small)
        out += [o.flag, str(value)]
    return out


def refused_placement(name: str) -> str | None:
    """The workload's own refusal of the default placement (spin's), None when it runs there."""
    try:
        make_workload(name).check("same", "native")
    except UsageError as exc:
        return str(exc)
    return None


def common(name: str) -> list[str]:
    """Workload, its options and a placement it runs in."""
    placement = ["--placement", "cross"] if refused_placement(name) else []
    return ["--workload", name, *option_args(name), *placement]


def units(name: str) -> list[str]:
    """One unit, by the workload's own word for it (--pairs, --groups, --rooms)."""
    return [f"--{WORKLOADS[name].unit}s", "1"]


def sweep_size(name: str) -> list[str]:
    """One step: a pair workload up to 1 pair, a load workload at a load of 1."""
    cls = WORKLOADS[name]
    return ["--max-pairs", "1"] if cls.unit == "pair" else [f"--{cls.unit}s", "1"]


def ok(r: subprocess.CompletedProcess, what: str) -> None:
    assert r.returncode == 0, f"{what}: exit {r.returncode}\n{r.stderr}"
    assert "Traceback" not in r.stdout + r.stderr, f"{what}:\n{r.stderr}"


def one_line_refusal(r: subprocess.CompletedProcess, words: str) -> None:
    """Exit 2 and one line on stderr saying `words` (README, "Exit codes")."""
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stdout + r.stderr, r.stderr
    assert r.stderr.strip().splitlines() == [f"ipctop: {words}"], r.stderr


def scrape_once(url: str, name: str) -> dict[str, list]:
    """The first scrape that has the run's totals (an empty board before the first
    interval is not a result), parsed by prometheus_client's own parser."""
    deadline = time.monotonic() + 60
    while True:
        with urllib.request.urlopen(url, timeout=10) as resp:
            text = resp.read().decode()
        families = {f.name: f.samples for f in text_string_to_metric_families(text)}
        if families.get("ipctop_total_ops_per_second"):
            return families
        assert time.monotonic() < deadline, f"{name}: no totals served:\n{text}"
        time.sleep(0.1)


@pytest.mark.parametrize("name", NAMES)
def test_run_text_and_metrics(name: str) -> None:
    placement = refused_placement(name)
    if placement is not None:
        one_line_refusal(run_cli("run", "--workload", name, "--seconds", "0.5"), placement)
    proc = subprocess.Popen(
        [sys.executable, "-m", "ipctop", "run", *common(name), *units(name),
         "--seconds", "2", "--interval", "0.25", "--metrics", "127.0.0.1:0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # A note may come first (objects another engineer's killed ipctop left).
        first = ""
        while proc.stderr and not METRICS_URL.search(first) and first.count("\n") < 20:
            line = proc.stderr.readline()
            if not line:
                break
            first += line
        m = METRICS_URL.search(first)
        assert m, f"no metrics URL in {first!r}"
        families = scrape_once(m.group(1), name)
    finally:
        out, err = proc.communicate(timeout=TIMEOUT)
    r = subprocess.CompletedProcess(proc.args, proc.returncode, out, first + err)
    ok(r, "run --metrics")
    assert f"# ipctop run: {name} ·" in out, out
    assert re.search(r"^# total [\d,]+ ops/s", out, re.M), out
    (total,) = families["ipctop_total_ops_per_second"]
    assert total.labels["workload"] == name, total.labels


@pytest.mark.parametrize("name", NAMES)
def test_run_jsonl(name: str) -> None:
    r = run_cli(
        "run", *common(name), *units(name), "--seconds", "0.5", "--interval", "0.25", "--jsonl",
        timeout=TIMEOUT,
    )  # fmt: skip
    ok(r, "run --jsonl")
    lines = r.stdout.splitlines()
    assert lines, r.stderr
    samples, summary = split_jsonl(r.stdout)  # JSON samples, then the summary line
    assert all(s["pairs"] == 1 and s["threads"] for s in samples), samples[-1]
    assert {t["pair"] for t in samples[-1]["threads"]} == {0}, samples[-1]
    assert summary is not None and summary["workload"] == name and summary["exit"] == 0
    # The summary's total is the "# total" line's, as a number.
    total = re.search(r"# total ([\d,]+) ops/s", r.stderr)
    assert total and round(summary["total_ops_per_s"]) == int(total[1].replace(",", "")), r.stderr
    assert f"# ipctop run: {name} ·" in r.stderr, r.stderr  # the header is kept off stdout


@pytest.mark.parametrize("name", NAMES)
def test_python_engine_runs_or_says_why_not(name: str) -> None:
    r = run_cli("run", *common(name), *units(name), "--engine", "python", "--seconds", "0.5")
    why = WORKLOADS[name].python_unavailable
    if why is not None:
        one_line_refusal(r, f"{name} is unavailable on the Python engine: {why}")
        return
    ok(r, "run --engine python")
    assert f"# ipctop run: {name} ·" in r.stdout and "engine python" in r.stdout, r.stdout


def replay_screen(record: Path) -> tuple[int, str]:
    """`ipctop replay` on a pty played to its end, then q: its exit and the screen's text."""
    with Terminal("replay", str(record), "--speed", "1000") as term:
        finished = term.wait_for_text("replay finished", timeout=60)
        term.press("q")
        code = term.wait(30)
        text = ANSI.sub("", term.output)
    assert finished, text[-2000:]
    return code, text


@pytest.mark.timeout(600)  # seven commands in a row on a loaded shared box
@pytest.mark.parametrize("name", NAMES)
def test_records_through_sweep_ab_compare_report_and_replay(name: str, tmp_path: Path) -> None:
    # Files named for their kind: the workload's name must come from the outputs.
    sweep_json, sweep_csv, ab_json = (tmp_path / f for f in ("sweep.json", "sweep.csv", "ab.json"))
    sweep = ["sweep", *common(name), *sweep_size(name), "--seconds", "0.5", "--warmup", "0.3",
             "--repeat", "1", "--loops", "10", "--json", str(sweep_json)]  # fmt: skip
    load = WORKLOADS[name].unit != "pair"
    if load:  # a load sweep's rows are loads, not a pair sweep's CSV columns
        r = run_cli(*sweep, "--csv", str(sweep_csv))
        one_line_refusal(r, "--csv: a load sweep (--groups, --rooms) writes no CSV; --json does")
    r = run_cli(*sweep, *([] if load else ["--csv", str(sweep_csv)]), timeout=TIMEOUT)
    ok(r, "sweep")
    assert r.stdout.startswith(f"ipctop sweep · {name} · "), r.stdout
    record = json.loads(sweep_json.read_text())
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(record)
    assert record["kind"] == "sweep" and record["config"]["workload"] == name
    # A rate of 0 is a finding only with its reason: under a hostile load (stress-ng
    # beside the suite) every window of a 0.5 s step may be left out as a stall.
    said = all((st.get("stalls") or {}).get("windows_left_out", 0) > 0 for st in record["steps"])
    assert max(st["total_ops_per_s"] for st in record["steps"]) > 0 or said, record["steps"]
    if not load:
        with sweep_csv.open(newline="") as f:
            rows = list(csv.DictReader(f))
        assert rows and {row["workload"] for row in rows} == {name}, rows[:2]
        assert all(float(row["ops_per_s"]) >= 0 for row in rows), rows

    # Identical sides: ab must still run its blocks and write a record.
    r = run_cli(
        "ab", *common(name), *units(name), "--window", "0.2", "--settle", "0.05",
        "--max-seconds", "30", "--precision", "50", "--json", str(ab_json), timeout=TIMEOUT,
    )  # fmt: skip
    ok(r, "ab")
    assert f" · {name} · " in r.stdout.splitlines()[0], r.stdout
    ab = json.loads(ab_json.read_text())
    assert ab["kind"] == "ab" and ab["config"]["workload"] == name

    # A record against itself: the same figures, a Diff of zero.
    for path in (sweep_json, ab_json):
        r = run_cli("compare", str(path), str(path), timeout=TIMEOUT)
        ok(r, f"compare {path.name}")
        row = next(line.split() for line in r.stdout.splitlines() if line.split()[:1] == ["1"])
        assert row[1] == row[2] and re.fullmatch(r"\+0(\.0)?", row[3]), r.stdout

    r = run_cli("report", str(sweep_json), str(ab_json), timeout=TIMEOUT)
    ok(r, "report")
    assert f"{name} " in r.stdout.splitlines()[1], r.stdout  # the columns name it
    assert f"# skipped {ab_json}: an A/B" in r.stdout  # not a box's figures: said, not dropped

    code, screen = replay_screen(sweep_json)
    assert code == 0, screen[-2000:]
    assert "Traceback" not in screen, screen[-4000:]
    assert "replay finished" in screen and name in screen, screen[-2000:]
