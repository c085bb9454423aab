"""ab on a busy box: what other processes used of the CPUs during the run, and when
that leaves ops/s unjudged (engine/outside_cpu.py says why)."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.outside_cpu import BUSY_PCT

BUSY_VERDICT = "not judged (a busy box)"  # in place of ops/s's verdict, here and in the TUI


@dataclass(frozen=True)
class BusyNote:
    """Other processes' CPU during the run, and why ops/s is not judged (or "")."""

    outside_pct: float | None
    not_judged: str


def busy_note(
    outside_pct: float | None,
    metric: str,
    advice: str = "rerun on a quiet box, or judge --metric cpu",
) -> BusyNote:
    """ops/s is not judged when others took more than BUSY_PCT of a CPU during the run."""
    if outside_pct is None or metric == "cpu" or outside_pct <= BUSY_PCT:
        return BusyNote(outside_pct, "")
    return BusyNote(
        outside_pct,
        f"not judged: other processes used {outside_pct:.0f} % of a CPU during the run "
        f"(above {BUSY_PCT:.0f} %), and ops/s moves with their load (on a loaded box 3 of "
        f"14 A/A runs called a change): {advice}",
    )
