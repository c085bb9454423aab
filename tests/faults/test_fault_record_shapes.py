"""Issue 27, finding 14: hand-edited records of every kind are refused in one line.

Real records first (a sweep, an `ab` run and a `check --quick` made by this box
once per module), then each is edited as the hostile run edited it: numbers
that overflow a ratio (1e308 against 1e-300), NaN and Infinity where a
measurement belongs, lists where objects belong, a number where a string
belongs. On main each was a traceback (OverflowError, ZeroDivisionError,
TypeError, AttributeError) or, for ab's `"A": "12"`, windows [1.0, 2.0].
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

QUICK = ("--seconds", "0.5", "--warmup", "0", "--repeat", "1", "--cpus", "0")


def one_line(r, code: int = 2) -> str:
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == code, (r.returncode, r.stderr)
    lines = [ln for ln in r.stderr.strip().splitlines() if not ln.startswith("ipctop: note:")]
    assert len(lines) == 1, r.stderr
    return lines[0]


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Any]:
    """One real record of each kind, made by this box's engine."""
    d = tmp_path_factory.mktemp("made")
    runs = {
        "sweep": ("sweep", "-w", "sysv-sem", "--max-pairs", "1", *QUICK, "--json"),
        "ab": (
            "ab",
            "-w",
            "sysv-sem",
            "--b=--placement cross",
            # Short slots and time for many: it stops at ±50 % (3 blocks), and a loaded
            # box (slots of seconds) still gets its 2 blocks in before the time is up.
            "--window",
            "0.2",
            "--settle",
            "0.05",
            "--max-seconds",
            "60",
            "--precision",
            "50",
            "--json",
        ),  # fmt: skip
        "check": ("check", "--quick", "--json"),
    }
    out: dict[str, Any] = {}
    for kind, args in runs.items():
        path = d / f"{kind}.json"
        if kind == "check":
            r = run_cli(*args, timeout=300)
            assert r.returncode in (0, 1), r.stderr  # 1 is a failed verdict, still a result
            path.write_text(r.stdout)
        else:
            r = run_cli(*args, str(path), timeout=300)
            assert r.returncode == 0, r.stderr
        out[kind] = json.loads(path.read_text())
    return out


def _set_windows(d: dict, value: Callable[[int], float]) -> None:
    for part in ("steps", "points"):
        for s in d[part]:
            s["windows"] = [value(i) for i in range(8)]
            s["total_ops_per_s"] = value(0)
            s["repeats"] = [value(0)]


def _profile(d: dict, profile: Any) -> None:
    d["steps"][0]["profile"] = profile


SWEEP_EDITS = {
    "huge windows": (lambda d: _set_windows(d, lambda i: 1e308), "not a measurement"),
    "tiny windows": (lambda d: _set_windows(d, lambda i: 1e-300), "not a measurement"),
    "alternating windows": (
        lambda d: _set_windows(d, lambda i: 1e308 if i % 2 else 1e-300),
        "not a measurement",
    ),
    "Infinity in latency windows": (
        lambda d: (
            d["steps"][0]
            .setdefault("latency", {"pairs": [], "windows": {}})["windows"]
            .__setitem__("rtt_p99", [float("inf"), 1000.0])
        ),
        "rtt_p99[0] is infinite",
    ),
    "profile symbols a string": (
        lambda d: _profile(d, {"event": "cpu-clock", "symbols": "x"}),
        "profile.symbols",
    ),
    "profile symbols ints": (lambda d: _profile(d, {"symbols": [1, 2]}), "profile.symbols[0]"),
    "profile a list": (lambda d: _profile(d, [1]), "profile should be an object"),
}


@pytest.mark.parametrize("edit", list(SWEEP_EDITS))
@pytest.mark.parametrize("plot", [False, True])
def test_compare_refuses_an_edited_sweep_record(made, tmp_path: Path, edit: str, plot) -> None:
    base, bad = tmp_path / "base.json", tmp_path / "bad.json"
    base.write_text(json.dumps(made["sweep"]))
    d = copy.deepcopy(made["sweep"])
    change, words = SWEEP_EDITS[edit]
    change(d)
    bad.write_text(json.dumps(d, allow_nan=True))
    # Either order: the huge one as baseline overflowed the ratio, the tiny one as new.
    for pair in ((base, bad), (bad, base)):
        r = run_cli("compare", *map(str, pair), *(["--plot"] if plot else []))
        line = one_line(r)
        assert "bad.json" in line and words in line, line


def test_replay_refuses_a_record_of_1e308_windows_before_the_screen(made, tmp_path) -> None:
    d = copy.deepcopy(made["sweep"])
    _set_windows(d, lambda i: 1e308)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    line = one_line(run_cli("replay", str(bad), timeout=60))
    assert "not a measurement" in line


@pytest.mark.parametrize(
    "pairs, words",
    [(1e30, "pairs should be an integer"), (10**30, "beyond any figure ipctop writes")],
    ids=["float", "int"],
)
def test_replay_refuses_a_record_of_1e30_pairs_before_the_screen(
    made, tmp_path, pairs: float, words: str
) -> None:
    # Issue 27 #17: the monitor died in 8 s (ZeroDivisionError in plotext) on a blank
    # screen, exit 0; such a record is now refused as it is read.
    d = copy.deepcopy(made["sweep"])
    for part in ("steps", "points"):
        for s in d[part]:
            s["pairs"] = pairs
    bad = tmp_path / "pairs.json"
    bad.write_text(json.dumps(d))
    line = one_line(run_cli("replay", str(bad), timeout=60))
    assert "pairs.json" in line and words in line, line


def _side(d: dict, key: str, value: Any) -> None:
    d["ab"]["sides"]["A"][key] = value


AB_EDITS = {
    "sides a list": (
        lambda d: d["ab"].__setitem__("sides", [1, 2]),
        "ab.sides should be an object",
    ),
    "side A a string": (lambda d: d["ab"]["sides"].__setitem__("A", "x"), "ab.sides.A should be"),
    "options a number": (lambda d: _side(d, "options", 5), "ab.sides.A.options should be a string"),
    "NaN in blocks": (lambda d: d["ab"]["blocks"][0]["A"].__setitem__(0, float("nan")), "is NaN"),
    "Infinity in blocks": (
        lambda d: d["ab"]["blocks"][0]["B"].__setitem__(0, float("inf")),
        "is infinite",
    ),
    "a block's A a string": (
        lambda d: d["ab"]["blocks"][0].__setitem__("A", "12"),
        "ab.blocks[0].A should be a list",
    ),
    "NaN in latency blocks": (
        lambda d: d["ab"].__setitem__(
            "latency", {"blocks": [{"A": {"rtt_p50": [float("nan")]}, "B": {"rtt_p50": [1.0]}}]}
        ),
        "ab.latency.blocks[0].A.rtt_p50[0] is NaN",
    ),
    "profile sides not objects": (
        lambda d: d["ab"].__setitem__("profile", {"A": 1, "B": "x"}),
        "ab.profile.A should be",
    ),
    "costs sides not objects": (
        lambda d: d["ab"].__setitem__("costs", {"A": 1, "B": "x"}),
        "ab.costs.A should be",
    ),
}


@pytest.mark.parametrize("edit", list(AB_EDITS))
def test_compare_refuses_an_edited_ab_record(made, tmp_path: Path, edit: str) -> None:
    d = copy.deepcopy(made["ab"])
    change, words = AB_EDITS[edit]
    change(d)
    bad = tmp_path / "ab.json"
    bad.write_text(json.dumps(d, allow_nan=True))
    line = one_line(run_cli("compare", str(bad)))
    assert words in line, line


def test_the_unedited_records_still_compare_and_report(made, tmp_path: Path) -> None:
    # The checks must not refuse what ipctop itself writes.
    for kind in ("sweep", "ab", "check"):
        (tmp_path / f"{kind}.json").write_text(json.dumps(made[kind]))
    r = run_cli("compare", str(tmp_path / "ab.json"))
    assert r.returncode == 0, r.stderr
    r = run_cli("compare", str(tmp_path / "sweep.json"), str(tmp_path / "sweep.json"))
    assert r.returncode == 0, r.stderr
    r = run_cli("report", str(tmp_path / "check.json"), str(tmp_path / "sweep.json"))
    assert r.returncode == 0, r.stderr


CHECK_EDITS = {
    "box null": (lambda d: d.__setitem__("box", None), "box should be an object, not null"),
    "box a string": (lambda d: d.__setitem__("box", "x"), "box should be an object, not string"),
    "runs a string": (lambda d: d.__setitem__("runs", "x"), "runs should be a list"),
    "runs ints": (lambda d: d.__setitem__("runs", [1, 2]), "runs[0] should be an object"),
    "NaN in window_totals": (
        lambda d: d["runs"][0].__setitem__("window_totals", [float("nan"), 1.0]),
        "runs[0].window_totals[0] is NaN",
    ),
}


@pytest.mark.parametrize("edit", list(CHECK_EDITS))
def test_report_refuses_an_edited_check_result(made, tmp_path: Path, edit: str) -> None:
    d = copy.deepcopy(made["check"])
    change, words = CHECK_EDITS[edit]
    change(d)
    bad = tmp_path / "check.json"
    bad.write_text(json.dumps(d, allow_nan=True))
    line = one_line(run_cli("report", str(bad)))
    assert words in line, line
