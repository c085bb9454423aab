"""The headless commands, run as a user would: a subprocess and its output."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli, two_cpus

from ipctop.cli import COMMANDS
from ipctop.output.records.record import validate_record_dict

QUICK = ("--seconds", "0.2", "--warmup", "0", "--repeat", "1")


@pytest.mark.parametrize(
    "argv",
    [
        ("run", "-w", "sysv-msg,sysv-sem", "--seconds", "1"),
        ("ab", "--a=-w sysv-msg,sysv-sem", "--max-seconds", "2"),
        ("ab", "--b=-w sysv-msg,futex", "--max-seconds", "2"),
        ("tui", "-w", "sysv-msg,sysv-sem"),
    ],
)
def test_a_list_of_workloads_where_one_is_run_is_refused(argv: tuple[str, ...]) -> None:
    # Issue 27 #22: the first workload ran and the rest were dropped without a word.
    r = run_cli(*argv)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stdout == ""  # nothing was measured
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "runs one workload at a time" in lines[0], r.stderr


@pytest.mark.parametrize(
    "spec, words",
    [
        ("0-", "malformed"),
        ("x", "malformed"),
        ("4096", "not in the allowed set"),
        ("0,4096", "not in the allowed set"),
    ],
)
def test_bad_cpus_is_one_line_and_exit_2(spec: str, words: str) -> None:
    r = run_cli("sweep", "--cpus", spec, *QUICK)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert words in lines[0] and "allowed" in lines[0]
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("sweep", "--seconds", "-1"),
        ("sweep", "--repeat", "0"),
        ("sweep", "--workload", "nope"),
        ("run", "--pairs", "abc"),
        ("run", "--mode", "fibers"),
        ("sweep", "--engine", "quantum"),
    ],
)
def test_bad_values_exit_2_without_traceback(args: tuple[str, ...]) -> None:
    r = run_cli(*args)
    assert r.returncode == 2, r
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_help_page_prints(command: str | None) -> None:
    r = run_cli(*([command] if command else []), "--help")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stdout.startswith("usage: ipctop")


@two_cpus
def test_sweep_json_validates_and_names_the_engine(tmp_path) -> None:
    out = tmp_path / "sweep.json"
    csv = tmp_path / "sweep.csv"
    r = run_cli("sweep", "--workload", "sysv-sem", "--cpus", "0-1", *QUICK, "--json", str(out),
                "--csv", str(csv))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "engine native" in r.stdout or "engine python" in r.stdout
    assert "scalability" in r.stdout
    d = json.loads(out.read_text())
    assert validate_record_dict(d) == []
    assert d["schema"] == "ipctop.record/3"
    assert d["config"]["workload"] == "sysv-sem"
    assert d["config"]["engine"] in ("native", "python")
    assert [s["pairs"] for s in d["steps"]] == [1, 2]
    for step in d["steps"]:
        assert len(step["threads"]) == 2 * step["pairs"]
        assert step["total_ops_per_s"] > 0
        assert {"pair", "cpu", "ops_per_s"} <= set(step["threads"][0])
    for key in ("kernel_release", "cpu_model", "online", "allowed", "limits", "python"):
        assert key in d["box"]
    assert len(csv.read_text().splitlines()) == 1 + 2 + 4


def test_oversubscribed_is_said() -> None:
    r = run_cli("run", "--cpus", "0", "--pairs", "2", "--seconds", "0.3")
    assert r.returncode == 0, r.stderr
    assert "oversubscribed" in r.stdout


def test_run_prints_a_line_per_interval() -> None:
    r = run_cli("run", "--workload", "sysv-msg-shared", "--cpus", "0", "--seconds", "1.1",
                "--interval", "0.5")  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("t=")]
    # How many intervals fit depends on a busy box's scheduling; each line must be complete.
    assert 1 <= len(lines) <= 3
    assert all("0A@0=" in ln and "0B@0=" in ln for ln in lines)


def test_run_lines_follow_the_schedule_without_a_sliver_at_the_end() -> None:
    # Ten steps of 0.1 s add up to a hair under 1 s in floating point; that hair
    # once made a last line of near-zero rates at the same time as the one before.
    r = run_cli("run", "--cpus", "0", "--seconds", "1", "--interval", "0.1")
    assert r.returncode == 0, r.stderr
    times = [float(ln.split()[1]) for ln in r.stdout.splitlines() if ln.startswith("t=")]
    assert times and len(times) <= 10, r.stdout
    # No window shorter than a quarter interval (0.025 s; t is printed to 0.01 s),
    # however late a loaded box takes a reading: a reading taken at once behind a
    # late one was such a sliver, two lines at the same t.
    assert all(b - a >= 0.02 for a, b in zip(times, times[1:])), r.stdout


def test_python_engine_is_named_and_explains_sysv_sem() -> None:
    r = run_cli("run", "--workload", "sysv-sem", "--engine", "python", "--cpus", "0",
                "--seconds", "0.3")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "engine python" in r.stdout
    assert "two single sets" in r.stdout


def test_lifecycle_sweep_reports_each_operation(tmp_path) -> None:
    out = tmp_path / "life.json"
    # msgbench counts a round only when a repeat's IPC_RMID phase ends: give it a second
    r = run_cli("sweep", "--workload", "sysv-lifecycle", "--cpus", "0", "--queues", "64",
                "--seconds", "1", "--warmup", "0", "--repeat", "1", "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    for op in ("msgget", "msgsnd", "IPC_STAT", "MSG_STAT", "IPC_RMID"):
        assert op in r.stdout
    ops = json.loads(out.read_text())["steps"][0]["ops"]
    assert list(ops) == ["msgget", "msgsnd", "IPC_STAT", "MSG_STAT", "IPC_RMID"]
    for stats in ops.values():
        assert stats["per_s"] > 0
        assert stats["min"] <= stats["avg"] <= stats["max"]


def test_a_load_that_delivered_nothing_shows_no_cost_and_says_why(capsys) -> None:
    # A room sweep whose window saw no message (too short a warm-up on a loaded box)
    # printed "inf" us/message with exit 0; the row now shows "-" and a note says why.
    from ipctop.analysis.load_scaling import RatePoint
    from ipctop.commands.load_sweep import _rate_row

    _rate_row(RatePoint(2, (0.0, 0.0)))
    out, err = capsys.readouterr()
    assert "inf" not in out and out.split()[-1] == "-", out
    assert "2 room(s): no window measured a message" in err
