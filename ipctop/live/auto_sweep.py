"""The auto-sweep (key s): one more pair every K seconds until every CPU is used.

A step waits at least K seconds and for the current reading to settle, so
each pair count leaves a settled point; a reading that will not settle is
given up on after 3 K so a noisy box still finishes the sweep.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

PATIENCE = 3.0  # x step: the longest a step waits for a settled reading


@dataclass
class AutoSweep:
    target: int  # pairs at the end: one per CPU
    step: float  # K seconds
    last_change: float  # when the pair count last changed
    pairs: int  # the count at that time
    first: int | None = field(default=None)  # the count the sweep started at

    def __post_init__(self) -> None:
        if self.first is None:
            self.first = self.pairs

    def next_step(self, now: float, pairs: int, settled: bool) -> str:
        """'add', 'wait' or 'done' for the current pair count and settle state."""
        if pairs != self.pairs:
            self.pairs, self.last_change = pairs, now
        waited = now - self.last_change
        ready = pairs == 0 or (waited >= self.step and settled) or waited >= PATIENCE * self.step
        if not ready:
            return "wait"
        return "done" if pairs >= self.target else "add"

    def time_left(self, now: float) -> float:
        """Seconds still planned: the rest of this step and a step per pair to add.

        A step that waits for its reading to settle takes longer; the figure
        is the plan, as the headless commands' bars are.
        """
        this = max(0.0, self.step - (now - self.last_change))
        return this + max(0, self.target - self.pairs) * self.step

    def describe(self, now: float | None = None) -> str:
        now = time.monotonic() if now is None else now
        first = self.first if self.first is not None else self.pairs
        total = max(1, self.target - first + 1) * self.step
        left = self.time_left(now)
        return (
            f"SWEEP {_bar(1.0 - left / total)} {self.pairs}→{self.target} pairs, "
            f"{self.step:g} s steps, ~{left:.0f} s left (s stops)"
        )


def _bar(fraction: float, width: int = 10) -> str:
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "▰" * filled + "▱" * (width - filled)
