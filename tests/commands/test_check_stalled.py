"""check's reading of a run whose windows stalled: no rate, never a rate of 0.

The windows are measured for real (a live pair, measure_engine); the stall is
planted on copies of them (windows emptied as a stall empties them), named as
such: on the lab's 64-CPU TCG guest every sample of a 64-pair step stalled
(`42.1 s of 42.1 s left out of the rates`), which this 2-CPU box cannot make
happen on purpose within a window of check's length.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import two_cpus

from ipctop.analysis.verdicts import FAIL, judge_integrity
from ipctop.commands.check_runs import summarise
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine, resolve_engine
from ipctop.live.measure import RunResult, measure_engine

CONFIG = RunConfig("sysv-sem", "same", "threads", (0, 1), resolve_engine())


@pytest.fixture(scope="module")
def windows() -> list[RunResult]:
    """Three real windows of one live pair, as check measures them (--quick's lengths)."""
    with Engine(CONFIG) as engine:
        engine.start(1)
        return [measure_engine(engine, 0.5, 0.3 if i == 0 else 0.0, 0.125) for i in range(3)]


def _stalled(r: RunResult) -> RunResult:
    """The window as a stall of every sample leaves it (planted): no kept window, and
    measure_engine's reason (tests/faults/test_fault_no_rate.py makes one for real)."""
    why = f"every window of its {r.seconds:.1f} s stalled (planted)"
    return replace(r, windows=(), noise=(), total_ops_per_s=0.0, no_rate=why)


@two_cpus
def test_a_run_whose_every_window_stalled_has_no_rate_and_says_why(
    windows: list[RunResult],
) -> None:
    assert all(r.windows and r.total_ops_per_s > 0 for r in windows)  # real windows
    reading, lines = summarise(CONFIG, 1, [_stalled(r) for r in windows], {})
    assert reading.error is not None and reading.error.startswith("no rate: every sample of its 3")
    assert lines == [f"{reading.label}: {reading.error}"]
    verdicts = judge_integrity(reading)
    assert [v.status for v in verdicts] == [FAIL]
    assert "could not run: no rate" in verdicts[0].reason


@two_cpus
def test_stalled_windows_are_left_out_and_counted(windows: list[RunResult]) -> None:
    whole, _ = summarise(CONFIG, 1, windows, {})
    part, lines = summarise(CONFIG, 1, [windows[0], _stalled(windows[1]), windows[2]], {})
    assert whole.error is None and part.error is None
    # The stalled window's zero is not a sample: the rate is one of the two kept
    # windows' (the upper median of two), the windows are theirs alone.
    kept = sorted([windows[0].total_ops_per_s, windows[2].total_ops_per_s])
    assert part.total_ops_per_s == kept[1]
    assert part.window_totals == (windows[0].total_ops_per_s, windows[2].total_ops_per_s)
    assert part.windows == windows[0].windows + windows[2].windows
    assert "over 2 windows; 1 stalled through" in lines[0], lines
    assert "stalled through" not in summarise(CONFIG, 1, windows, {})[1][0]
    # Everything else about the run still counts all three windows: the rounds and
    # wrong messages of the ends, its events.
    assert len(part.threads) == 2 and all(t.rounds > 0 for t in part.threads)
