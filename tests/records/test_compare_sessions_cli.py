"""compare of one record a side from separate sessions: judged with a session spread
from --session-sd or the box's stored one, and not judged without one (issue 23)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from conftest import run_cli
from handmade_records import sweep_of

from ipctop.output.records.record import Step
from ipctop.output.records.record_io import write_record
from ipctop.output.records.spread_store import StoredSpread, remember

E = (-0.02, -0.01, 0.0, 0.01, 0.02)  # planted run noise, s.d. 1.6 % on the log
HOST, KERNEL = os.uname().nodename, os.uname().release
NOT_JUDGED = "not judged: sessions differ by an unknown amount; run `ipctop sweep --sessions 5`"


def make(path: Path, totals: list[float], workload: str = "sysv-sem") -> str:
    rec = sweep_of(
        [Step(i + 1, t, repeats=[t * math.exp(e) for e in E]) for i, t in enumerate(totals)],
        workload=workload,
        box={"kernel_release": KERNEL, "hostname": HOST},
        repeat=5,
    )
    return str(write_record(path, rec))


@pytest.fixture
def pair(tmp_path: Path) -> tuple[str, str]:
    # Two sessions 10 % apart: a regression on runs alone, within a 4 % session spread.
    return make(tmp_path / "a.json", [1e6, 2e6]), make(tmp_path / "b.json", [0.9e6, 1.8e6])


def stored(sd: float, workload: str = "sysv-sem", cpus: tuple[int, ...] = (0, 1)) -> None:
    remember(
        StoredSpread(
            host=HOST,
            kernel=KERNEL,
            workload=workload,
            placement="same",
            mode="threads",
            cpus=cpus,
            sessions=5,
            runs_per_session=3,
            session_sd_pct=sd,
            run_sd_pct=0.8,
            session_df=4.0,
            measured_by="check --sessions",
            when="2026-12-05T10:00:00+00:00",
        )  # fmt: skip
    )


def test_without_a_spread_the_figures_show_but_nothing_is_judged(pair: tuple[str, str]) -> None:
    r = run_cli("compare", *pair)
    assert r.returncode == 0, r.stderr
    row = next(ln.split() for ln in r.stdout.splitlines() if ln.split()[:1] == ["1"])
    assert row[:4] == ["1", "1,000,000", "900,000", "-10"]
    assert " ".join(row[4:]) == "[-12, -8] not judged: sessions differ"
    assert "regression" not in r.stdout
    assert NOT_JUDGED in r.stdout and f"none stored for host {HOST}" in r.stdout


def test_without_a_spread_the_gate_exits_5_with_one_line(pair: tuple[str, str]) -> None:
    r = run_cli("compare", *pair, "--fail-below", "3")
    assert r.returncode == 5, (r.stdout, r.stderr)
    [line] = r.stderr.strip().splitlines()
    assert line.startswith("ipctop: --fail-below not judged: not judged: sessions differ")


def test_the_flag_judges_and_says_so(pair: tuple[str, str]) -> None:
    r = run_cli("compare", *pair, "--session-sd", "0", "--fail-below", "3")
    assert r.returncode == 1, r.stdout  # -10 % on runs alone, nothing added
    assert "session spread 0 % s.d. (--session-sd): added to every interval" in r.stdout
    r = run_cli("compare", *pair, "--session-sd", "4", "--fail-below", "3")
    assert r.returncode == 0, r.stdout  # 4 % a session: -10 % is not shown past -3 %
    assert "session spread 4 % s.d. (--session-sd)" in r.stdout


@pytest.mark.slow  # the quick loop's slowest (3-19 s); CI runs it
def test_the_stored_spread_is_used_and_named(pair: tuple[str, str]) -> None:
    stored(4.0)
    r = run_cli("compare", *pair, "--fail-below", "3")
    assert r.returncode == 0, (r.stdout, r.stderr)
    # The spread of a session's mean (4 % and 0.8 % / sqrt 3 of runs), with 4 df.
    assert (
        "session term 4.0 % s.d. of a session's mean, df 4 (sessions 4.0 %, runs 0.8 %), "
        f"measured by check --sessions on 2026-12-05, n=5 (stored for {HOST}, {KERNEL}, "
        "sysv-sem on CPUs 0,1): added to every interval"
    ) in r.stdout
    assert "not judged" not in r.stdout
    # The flag still wins over the stored one.
    r = run_cli("compare", *pair, "--session-sd", "0", "--fail-below", "3")
    assert r.returncode == 1 and "(--session-sd)" in r.stdout


def test_a_stored_spread_of_other_cpus_is_not_used(pair: tuple[str, str]) -> None:
    stored(4.0, cpus=(0,))  # what check --sessions stores: one CPU's sessions
    r = run_cli("compare", *pair, "--fail-below", "3")
    assert r.returncode == 5, r.stdout
    assert "(stored spread: none stored for CPUs 0,1 (only CPUs 0))" in r.stdout


@pytest.mark.slow  # the quick loop's slowest (3-19 s); CI runs it
def test_a_stored_spread_of_0_still_adds_its_sessions_means_spread(
    pair: tuple[str, str], tmp_path: Path
) -> None:
    # Five sessions whose runs varied more than their means: the session part is 0,
    # which taken as known judged -10 % a regression on runs alone. The means' own
    # spread (0.8 % / sqrt 3 here, 4 df) is never 0 and is what the interval gets.
    stored(0.0)
    out = tmp_path / "cmp.json"
    r = run_cli("compare", *pair, "--json", str(out))
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    want = 100 * math.expm1(math.log1p(0.008) / math.sqrt(3))
    assert d["session_sd_pct"] == pytest.approx(want) and d["session_df"] == 4
    known = json.loads(run_cli("compare", *pair, "--session-sd", "0", "--json", "-").stdout)
    assert known["session_df"] is None  # given as known
    wide, narrow = d["points"][0], known["points"][0]
    assert wide["high_pct"] - wide["low_pct"] > narrow["high_pct"] - narrow["low_pct"]


def test_a_stored_spread_of_another_workload_is_not_used(pair: tuple[str, str]) -> None:
    stored(4.0, workload="pipe")
    r = run_cli("compare", *pair, "--fail-below", "3")
    assert r.returncode == 5, r.stdout
    assert f"(stored spread: none stored for sysv-sem on {HOST}, {KERNEL} (only pipe))" in r.stdout


def test_two_records_a_side_are_the_replicate_without_any_spread(tmp_path: Path) -> None:
    a = [make(tmp_path / f"a{i}.json", [1e6 * (1 + d), 2e6]) for i, d in enumerate((0, 0.01))]
    b = [make(tmp_path / f"b{i}.json", [0.7e6 * (1 + d), 1.4e6]) for i, d in enumerate((0, 0.01))]
    r = run_cli("compare", *a, "--vs", *b, "--fail-below", "3")
    assert r.returncode == 1, r.stdout
    assert "A: n=2 sessions; B: n=2 sessions" in r.stdout and "not judged" not in r.stdout


def test_a_record_against_itself_is_one_session(pair: tuple[str, str]) -> None:
    r = run_cli("compare", pair[0], pair[0], "--fail-below", "3")
    assert r.returncode == 0, r.stdout
    assert "one session: the interval covers run-to-run noise only" in r.stdout


@pytest.mark.slow  # the quick loop's slowest (3-19 s); CI runs it
def test_json_says_judged_or_not_and_why(pair: tuple[str, str], tmp_path: Path) -> None:
    r = run_cli("compare", *pair, "--json", "-")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["judged"] is False and d["not_judged"].startswith("not judged: sessions differ")
    assert d["session_sd_pct"] is None and d["session_sd_source"] is None
    p1 = d["points"][0]
    assert (p1["judged"], p1["verdict"]) == (False, "not judged: sessions differ")
    assert p1["not_judged_why"].startswith("not judged: sessions differ by an unknown amount")
    assert p1["low_pct"] < p1["diff_pct"] < p1["high_pct"]  # the interval is still given
    stored(2.0)
    out = tmp_path / "cmp.json"
    r = run_cli("compare", *pair, "--json", str(out))
    d = json.loads(out.read_text())
    assert d["judged"] is True and d["not_judged"] is None and d["session_df"] == 4
    assert d["session_sd_pct"] == pytest.approx(
        100 * math.expm1(math.hypot(math.log1p(0.02), math.log1p(0.008) / math.sqrt(3)))
    )
    assert d["session_sd_source"].startswith("session term 2.1 % s.d. of a session's mean")
    assert [(p["judged"], p["not_judged_why"]) for p in d["points"]] == [(True, None)] * 2
    assert d["points"][0]["verdict"] in ("regression", "no difference shown")
