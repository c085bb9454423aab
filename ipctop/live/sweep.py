"""The auto-sweep (key s): one more pair every K seconds until every CPU is used.

A step waits at least K seconds and for the current reading to settle, so
each pair count leaves a settled point; a reading that will not settle is
given up on after 3 K so a noisy box still finishes the sweep.
"""

from __future__ import annotations

from dataclasses import dataclass

PATIENCE = 3.0  # x step: the longest a step waits for a settled reading


@dataclass
class AutoSweep:
    target: int  # pairs at the end: one per CPU
    step: float  # K seconds
    last_change: float  # when the pair count last changed
    pairs: int  # the count at that time

    def next_step(self, now: float, pairs: int, settled: bool) -> str:
        """'add', 'wait' or 'done' for the current pair count and settle state."""
        if pairs != self.pairs:
            self.pairs, self.last_change = pairs, now
        waited = now - self.last_change
        ready = pairs == 0 or (waited >= self.step and settled) or waited >= PATIENCE * self.step
        if not ready:
            return "wait"
        return "done" if pairs >= self.target else "add"

    def describe(self) -> str:
        return f"SWEEP {self.pairs}→{self.target} pairs, {self.step:g} s steps (s stops)"
