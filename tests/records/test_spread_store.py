"""The box's stored session spread: what is kept, and which compare may use."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from ipctop.errors import RecordError
from ipctop.output.records.spread_store import (
    StoredSpread,
    find_spread,
    read_spreads,
    remember,
    state_dir,
    store_path,
)


def spread(**over: object) -> StoredSpread:
    d: dict[str, object] = {
        "host": "box1", "kernel": "6.18.44", "workload": "sysv-sem", "placement": "same",
        "mode": "threads", "cpus": (0,), "sessions": 5, "runs_per_session": 3,
        "session_sd_pct": 2.0, "run_sd_pct": 0.8, "session_df": 4.0,
        "measured_by": "check --sessions", "when": "2026-12-05T10:00:00+00:00",
    }  # fmt: skip
    d.update(over)
    return StoredSpread(**d)  # type: ignore[arg-type]


def test_the_store_is_under_xdg_state_home(private_state: Path) -> None:
    assert state_dir() == private_state / "ipctop"
    assert store_path() == private_state / "ipctop" / "session-spreads.json"


def test_a_relative_xdg_state_home_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")
    assert state_dir() == Path.home() / ".local" / "state" / "ipctop"


def test_remember_keeps_the_newest_per_setting_and_reads_back(private_state: Path) -> None:
    remember(spread(session_sd_pct=4.4))
    remember(spread(workload="pipe", session_sd_pct=3.0))
    path = remember(spread(session_sd_pct=1.3, when="2026-12-06T05:00:00+00:00"))
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    got = read_spreads()
    # The sysv-sem entry was replaced, not joined by a second one.
    assert [(e.workload, e.session_sd_pct) for e in got] == [("pipe", 3.0), ("sysv-sem", 1.3)]
    assert json.loads(path.read_text())["schema"] == "ipctop.session-spreads/1"


def test_a_broken_store_is_one_line_naming_it_and_is_replaced(private_state: Path) -> None:
    path = store_path()
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(RecordError, match="session-spreads.json: not JSON.*remove it"):
        read_spreads()
    remember(spread())
    assert read_spreads() == [spread()]


BOX = [("box1", "6.18.44")]


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        (spread(host="other"), "none stored for host box1"),
        (spread(kernel="6.1.0"), "none stored for kernel 6.18.44 on box1"),
        (spread(workload="pipe"), "none stored for sysv-sem on box1, 6.18.44 (only pipe)"),
    ],
    ids=["host", "kernel", "workload"],
)
def test_a_spread_of_another_host_kernel_or_workload_is_not_used(
    entry: StoredSpread, why: str
) -> None:
    found = find_spread([entry], BOX, "sysv-sem")
    assert found.spread is None and found.why_not == why


def test_records_without_a_host_get_none() -> None:
    found = find_spread([spread()], [(None, "6.18.44")], "sysv-sem")
    assert found.spread is None and "host or kernel" in found.why_not


def test_only_the_same_cpus_are_used_then_the_newest() -> None:
    # A real A/A (12-06): check's spread of CPU 0 judged sweeps of CPUs 0-1 and called
    # changes in 4 of 16 points; a spread is of the CPUs it was measured on.
    old_same = spread(cpus=(0, 1), session_sd_pct=4.0, when="2026-12-01T00:00:00+00:00")
    new_other = spread(cpus=(0,), session_sd_pct=1.5, when="2026-12-06T00:00:00+00:00")
    newer_same = spread(cpus=(0, 1), session_sd_pct=2.0, when="2026-12-05T00:00:00+00:00")
    assert find_spread([old_same, new_other], BOX, "sysv-sem", (0, 1)).spread == old_same
    both = [old_same, new_other, newer_same]
    assert find_spread(both, BOX, "sysv-sem", (0, 1)).spread == newer_same
    found = find_spread([old_same, new_other], BOX, "sysv-sem", (2, 3))
    assert found.spread is None
    assert found.why_not == "none stored for CPUs 2,3 (only CPUs 0; 0,1)"
    # No CPUs asked (check --baseline): any, the newest.
    assert find_spread([old_same, new_other], BOX, "sysv-sem").spread == new_other


def test_the_session_term_is_a_session_means_spread_with_k_minus_1_df() -> None:
    # var_s + var_runs / R on the log scale; K - 1 df, whatever the split.
    s = spread(session_sd_pct=0.0, run_sd_pct=6.0, sessions=5)
    sd, df = s.term()
    want = math.expm1(math.sqrt(math.log1p(0.06) ** 2 / s.runs_per_session))
    assert sd == pytest.approx(100 * want) and sd > 0 and df == 4
    assert "session term" in s.legend() and "df 4" in s.legend()


def test_two_kernels_each_need_their_own_entry_and_the_widest_is_used() -> None:
    a, b = spread(session_sd_pct=1.3), spread(kernel="6.19.0", session_sd_pct=3.1)
    boxes = BOX + [("box1", "6.19.0")]
    assert find_spread([a, b], boxes, "sysv-sem").spread == b
    found = find_spread([a], boxes, "sysv-sem")
    assert found.spread is None and found.why_not == "none stored for kernel 6.19.0 on box1"


def test_the_legend_says_what_when_and_how_many() -> None:
    assert (
        spread()
        .legend()
        .startswith(
            "session term 2.1 % s.d. of a session's mean, df 4 (sessions 2.0 %, runs 0.8 %), "
            "measured by check --sessions on 2026-12-05, n=5"
        )
    )


def test_this_box_is_what_check_sessions_stores_under() -> None:
    # remember_spread keys by os.uname(): what read_box records as hostname and kernel.
    from ipctop.box import read_box

    box = read_box()
    assert (box.hostname, box.kernel_release) == (os.uname().nodename, os.uname().release)
