"""sweep --sessions K: a baseline record that knows how much sessions of its box differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from ipctop.analysis.sessions import session_term
from ipctop.live.baseline import load_baseline


@pytest.mark.timeout(300)
def test_a_sweep_keeps_its_own_workloads_session_spread(tmp_path: Path) -> None:
    out = tmp_path / "base.json"
    r = run_cli(
        "sweep", "-w", "posix-sem", "--cpus", "0", "--max-pairs", "1", "--seconds", "0.3",
        "--warmup", "0.1", "--repeat", "2", "--sessions", "2", "--json", str(out), timeout=280,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    # The sessions ran the sweep's workload, not check's sysv-sem.
    assert "session 2/2: -w posix-sem --placement same --mode threads, 1 pair" in r.stdout
    assert "posix-sem: session spread: s.d." in r.stdout
    sp = json.loads(out.read_text())["sessions"]
    assert (sp["sessions"], sp["runs_per_session"]) == (2, 3) and sp["run_sd_pct"] > 0
    # As a baseline, the TUI's Diff takes the spread the record kept: the spread of a
    # session's mean, with K - 1 df.
    term = session_term(sp["session_sd_pct"], sp["run_sd_pct"], 3, 2)
    base = load_baseline(out)
    assert (base.session_sd_pct, base.session_df) == term and term[0] > 0
    # The box keeps it (the test's own XDG_STATE_HOME), and compare of two later
    # records that carry no spread, from separate sessions, finds it there.
    sweep = ("sweep", "-w", "posix-sem", "--cpus", "0", "--max-pairs", "1", "--seconds", "0.3",
             "--warmup", "0.1", "--repeat", "2")  # fmt: skip
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for path in (a, b):
        r = run_cli(*sweep, "--json", str(path), timeout=120)
        assert r.returncode == 0, r.stderr
    # The TUI's Diff against a record without a spread finds the stored one too.
    assert load_baseline(a).session_sd_pct == term[0]
    r = run_cli("compare", str(a), str(b), "--fail-below", "50", timeout=60)
    assert r.returncode == 0, (r.stdout, r.stderr)
    day = json.loads(out.read_text())["created"][:10]
    assert (
        f"session term {term[0]:.1f} % s.d. of a session's mean, df 1 (sessions "
        f"{sp['session_sd_pct']:.1f} %, runs {sp['run_sd_pct']:.1f} %), measured by sweep "
        f"--sessions on {day}, n=2 (stored for"
    ) in r.stdout


def test_sessions_below_two_are_refused_in_one_line() -> None:
    r = run_cli("sweep", "-w", "sysv-sem", "--sessions", "1")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "--sessions" in r.stderr
