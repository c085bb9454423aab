"""`ipctop compare` run as a user would: hand-made records in, table and exit code out."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import run_cli

from ipctop.output.records.record import Record, Step
from ipctop.output.records.record_io import write_record

Q6600_2622 = [4.79e6, 9.40e6, 13.58e6, 18.10e6]
Q6600_2624 = [4.01e6, 7.58e6, 8.04e6, 5.13e6]


# Planted run-to-run noise, one value per run (mean 0, sample variance 0.00025):
# about ±2.3 % on a ratio of 5 runs against 5.
E = (-0.02, -0.01, 0.0, 0.01, 0.02)
# The planted noise is all run noise: a measured session spread of 0 lets compare
# judge two single records on their runs (without any spread it would not judge).
NO_SESSION_LEVEL = ("--session-sd", "0")


def make(
    path: Path, kernel: str, totals: list[float], noisy: bool = True, **config: object
) -> Path:
    cfg = {
        "workload": "sysv-sem",
        "placement": "same",
        "mode": "threads",
        "engine": "native",
        "cpus": [0, 1, 2, 3],
        "seconds": 5.0,
        "warmup": 1.0,
        "repeat": 1,
        "interval": None,
    }
    cfg.update(config)
    rec = Record(
        kind="sweep",
        box={"kernel_release": kernel},
        config=cfg,
        steps=[
            Step(i + 1, t, repeats=[t * math.exp(e) for e in E] if noisy else [])
            for i, t in enumerate(totals)
        ],
    )
    return write_record(path, rec)


@pytest.fixture
def q6600(tmp_path: Path) -> tuple[str, str]:
    old = make(tmp_path / "old.json", "2.6.22", Q6600_2622)
    new = make(tmp_path / "new.json", "2.6.24", Q6600_2624)
    return str(old), str(new)


def test_exact_diffs_on_stdout(q6600: tuple[str, str]) -> None:
    r = run_cli("compare", *q6600, *NO_SESSION_LEVEL)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["2.6.22", "(old.json)", "2.6.24", "(new.json)"]
    # (new - old) / old: -16.3, -19.4, -40.8, -71.7 %, each ±2.3 %: no decimals.
    assert lines[2].split() == ["1", "4,790,000", "4,010,000", "-16", "[-18,", "-14]", "regression"]
    assert lines[3].split() == ["2", "9,400,000", "7,580,000", "-19", "[-21,", "-17]", "regression"]
    assert lines[4].split() == [
        "3",
        "13,580,000",
        "8,040,000",
        "-41",
        "[-42,",
        "-39]",
        "regression",
    ]
    assert lines[5].split() == [
        "4",
        "18,100,000",
        "5,130,000",
        "-72",
        "[-72,",
        "-71]",
        "regression",
    ]
    assert "Scalability [%]" in lines
    assert lines[-1].split() == ["4", "377.9", "127.9"]
    assert r.stderr == ""


def test_three_records_each_against_the_first(tmp_path: Path) -> None:
    a = make(tmp_path / "a.json", "2.6.18", [948_005.0, 1_768_273.0])
    b = make(tmp_path / "b.json", "2.6.25", [398_435.0])
    c = make(tmp_path / "c.json", "6.9.0", [1_000_000.0, 2_000_000.0])
    r = run_cli("compare", str(a), str(b), str(c), *NO_SESSION_LEVEL)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[2].split() == ["1", "948,005", "398,435", "-58", "[-59,", "-57]", "regression",
                                "1,000,000", "+5", "[+3,", "+8]", "improvement"]  # fmt: skip
    assert lines[3].split() == ["2", "1,768,273", "-", "-", "-", "2,000,000", "+13", "[+11,",
                                "+16]", "improvement"]  # fmt: skip


@pytest.mark.parametrize(
    "pct, code",
    # One-sided against PCT, Holm over the 4 points (s.e. 0.01 on the log, df 8).
    # At 70.9 % the 4-pair point alone has p 0.015, but it is one of 4 judged:
    # Holm's 4 x 0.015 is over 5 %, so the gate holds.
    [("14", 1), ("15", 1), ("40", 1), ("70.5", 1), ("70.9", 0), ("71.1%", 0), ("90", 0)],
)
def test_fail_below_exit_codes(q6600: tuple[str, str], pct: str, code: int) -> None:
    r = run_cli("compare", *q6600, "--fail-below", pct, *NO_SESSION_LEVEL)
    assert r.returncode == code, (r.stdout, r.stderr)
    if code:
        assert "regressions of more than" in r.stdout
        assert "2.6.24 (new.json) at 4 pair(s): -71.7 % (interval up to -71.0, Holm p" in r.stdout
    else:
        assert "(4 judged, one-sided, Holm 5 % family-wise)" in r.stdout


def test_fail_below_improvement_exits_0(tmp_path: Path) -> None:
    # pmsg-shared before/after the wake-up patch: +7.8 %, nothing regressed.
    a = make(tmp_path / "before.json", "before", [52.4e6], workload="sysv-msg-shared")
    b = make(tmp_path / "after.json", "after", [56.5e6], workload="sysv-msg-shared")
    r = run_cli("compare", str(a), str(b), "--fail-below", "0", *NO_SESSION_LEVEL)
    assert r.returncode == 0, r.stdout
    assert "+8" in r.stdout and "improvement" in r.stdout


def test_fail_below_without_windows_is_one_line_exit_2(tmp_path: Path) -> None:
    a = make(tmp_path / "a.json", "6.1", [100.0], noisy=False)
    b = make(tmp_path / "b.json", "6.1", [50.0], noisy=False)
    r = run_cli("compare", str(a), str(b), "--fail-below", "5")
    assert r.returncode == 2
    [line] = r.stderr.strip().splitlines()
    assert "needs an interval" in line and "2 windows" in line


def test_vs_pools_several_records_per_side(tmp_path: Path) -> None:
    # Sessions differ by 3 % (more than their runs do): each record is one value.
    olds = [make(tmp_path / f"old{i}.json", "6.1", [970.0 + 30 * i]) for i in range(3)]
    news = [make(tmp_path / f"new{i}.json", "6.2", [985.0 + 30 * i]) for i in range(2)]
    r = run_cli("compare", *map(str, olds), "--vs", *map(str, news), "--fail-below", "0")
    assert r.returncode == 0, r.stderr
    assert "6.1 (old0.json + old1.json + old2.json)" in r.stdout
    assert "no difference shown" in r.stdout
    assert "A: n=3 sessions; B: n=2 sessions" in r.stdout


def test_different_workloads_refused_then_forced(tmp_path: Path) -> None:
    a = make(tmp_path / "sem.json", "6.1", [100.0, 190.0])
    b = make(tmp_path / "msg.json", "6.1", [80.0, 150.0], workload="sysv-msg")
    r = run_cli("compare", str(a), str(b))
    assert r.returncode == 2
    assert r.stdout == ""
    [line] = r.stderr.strip().splitlines()
    assert "sysv-sem/same/threads" in line and "sysv-msg/same/threads" in line
    assert "--force" in line and "Traceback" not in r.stderr
    r = run_cli("compare", str(a), str(b), "--force")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "forced: sem.json vs msg.json: workload 'sysv-sem' vs 'sysv-msg'"
    assert lines[4].split()[:4] == ["1", "100", "80", "-20"]


def test_corrupted_record_one_line_exit_2(q6600: tuple[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(Path(q6600[1]).read_text()[:200])
    r = run_cli("compare", q6600[0], str(bad))
    assert r.returncode == 2
    assert r.stdout == ""
    [line] = r.stderr.strip().splitlines()
    assert "bad.json is truncated or not JSON" in line


def test_wrong_version_record_one_line_exit_2(q6600: tuple[str, str], tmp_path: Path) -> None:
    d = json.loads(Path(q6600[1]).read_text())
    d["schema"] = "ipctop.record/9"
    future = tmp_path / "future.json"
    future.write_text(json.dumps(d))
    r = run_cli("compare", q6600[0], str(future))
    assert r.returncode == 2
    [line] = r.stderr.strip().splitlines()
    assert (
        "future.json is ipctop.record/9; this ipctop reads ipctop.record/1, ipctop.record/2 and ipctop.record/3"
        in line
    )


@pytest.mark.parametrize(
    "args, words",
    [
        (("missing.json",), "no such file"),
        (("ONLY_ONE",), "at least two records"),
        (("--fail-below", "-5"), "positive percentage"),
        (("--fail-below", "lots"), "not a percentage"),
    ],
)
def test_bad_invocations_one_line_exit_2(
    q6600: tuple[str, str], tmp_path: Path, args: tuple[str, ...], words: str
) -> None:
    if args == ("ONLY_ONE",):
        full = [q6600[0]]
    elif args == ("missing.json",):
        full = [q6600[0], str(tmp_path / "missing.json")]
    else:
        full = [*q6600, *args]
    r = run_cli("compare", *full)
    assert r.returncode == 2, r
    assert "Traceback" not in r.stderr
    [line] = r.stderr.strip().splitlines()
    assert words in line


def test_gnuplot_writes_pairs_total_files(q6600: tuple[str, str], tmp_path: Path) -> None:
    out = tmp_path / "plots" / "q6600"
    r = run_cli("compare", *q6600, "--gnuplot", str(out))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["new.dat", "old.dat"]
    rows = [line.split() for line in (out / "new.dat").read_text().splitlines()]
    assert rows[0][0] == "#"
    assert rows[1:] == [["1", "4010000"], ["2", "7580000"], ["3", "8040000"], ["4", "5130000"]]
    assert str(out / "old.dat") in r.stderr


def test_gnuplot_same_file_names_are_numbered(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = make(tmp_path / "a" / "run.json", "6.1", [100.0])
    two = make(tmp_path / "b" / "run.json", "6.2", [90.0])
    out = tmp_path / "dat"
    r = run_cli("compare", str(one), str(two), "--gnuplot", str(out))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["1-run.dat", "2-run.dat"]
    assert (out / "2-run.dat").read_text().splitlines()[1] == "1 90"


def test_plot_draws_both_curves_without_colour(q6600: tuple[str, str]) -> None:
    r = run_cli("compare", *q6600, "--plot")
    assert r.returncode == 0, r.stderr
    assert "total ops/s by pairs" in r.stdout
    assert "2.6.22 (old.json)" in r.stdout.split("Scalability [%]")[1]
    assert "\x1b[" not in r.stdout  # not a terminal: no escape codes in a pipe
    plot = r.stdout.split("total ops/s by pairs")[1]
    # Without colour each curve has its own marker, named in the legend.
    assert "** 2.6.22 (old.json)" in plot and "oo 2.6.24 (new.json)" in plot
    assert plot.count("o") > 10 and plot.count("*") > 10
    assert "18.1M" in plot and "pairs" in plot


@pytest.mark.slow  # the quick loop's slowest (3-19 s); CI runs it
def test_json_gives_each_point_its_estimate_interval_verdict_and_unit(
    q6600: tuple[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "cmp.json"
    r = run_cli("compare", *q6600, "--json", str(out), *NO_SESSION_LEVEL)
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert d["schema"] == "ipctop.compare/1" and d["family_wise"] == "holm"
    assert [p["pairs"] for p in d["points"]] == [1, 2, 3, 4]
    p4 = d["points"][3]
    assert p4["diff_pct"] == pytest.approx(100 * (5.13 / 18.10 - 1), abs=1e-6)
    assert p4["low_pct"] < p4["diff_pct"] < p4["high_pct"]
    assert (p4["n"], p4["unit"], p4["verdict"]) == (5, "runs", "regression")
    assert p4["test"] == "Welch's t on log rates" and p4["p_holm"] < 0.05
    # '-' puts the JSON alone on stdout, the table on stderr.
    r = run_cli("compare", *q6600, "--json", "-", *NO_SESSION_LEVEL)
    assert json.loads(r.stdout)["points"][0]["verdict"] == "regression"
    assert "Scalability [%]" in r.stderr
    r = run_cli("compare", *q6600, "--json", "/proc/x.json")
    assert r.returncode == 2 and r.stdout == ""
