"""Key s: the auto-sweep adds a pair every K seconds, each once the last settled.

The decisions are live/auto_sweep.py's (AutoSweep, no Textual); this drives it
from a 4 Hz timer and stops it on s again or when every CPU has a pair.
Mixed into IpctopApp.
"""

from __future__ import annotations

import time

from textual.timer import Timer

from ..live.auto_sweep import AutoSweep
from .host import AppHost

TICK = 0.25  # seconds between looks at the sweep


class SweepActions:
    """Uses the app's source, info, session, sweep_step, _busy, _say and set_interval."""

    _sweep: AutoSweep | None = None
    _sweep_timer: Timer | None = None

    @property
    def sweeping(self) -> bool:
        return self._sweep is not None

    def sweep_note(self) -> str:
        """For the header: the sweep's progress, or ""."""
        return self._sweep.describe() if self._sweep is not None else ""

    def action_sweep(self: AppHost) -> None:
        if self._sweep is not None:
            self._end_sweep("sweep stopped")
            return
        if not self.source.controllable:
            self._say(f"{self.info.source} source: cannot sweep", "warning")
            return
        target = len(self.info.config.cpus)
        pairs = self.source.pair_count()
        if pairs >= target:
            self._say(f"every CPU already has a pair ({pairs}/{target}); remove some first")
            return
        self._start_sweep(
            target, pairs, f"sweep: one pair every {self.sweep_step:g} s up to {target}"
        )

    def _start_sweep(self: AppHost, target: int, pairs: int, message: str) -> None:
        """Climb from `pairs` to `target`, a pair each settled step (keys s and W)."""
        if self._sweep is not None:
            self._end_sweep("sweep stopped")
        self._sweep = AutoSweep(target, self.sweep_step, time.monotonic(), pairs)
        self._sweep_timer = self.set_interval(TICK, self._sweep_tick)
        if message:
            self._say(message)

    def _sweep_tick(self: AppHost) -> None:
        sweep = self._sweep
        if sweep is None or self._busy:
            return
        s = self.session.latest
        pairs = self.source.pair_count()
        settled = s is not None and s.pairs == pairs and self.session.settled
        step = sweep.next_step(time.monotonic(), pairs, settled)
        if step == "add":
            self.action_add_pair()
        elif step == "done":
            self._end_sweep(f"sweep done: {pairs} pairs on {sweep.target} CPUs")
        self._schedule_redraw()

    def _end_sweep(self: AppHost, message: str) -> None:
        if self._sweep_timer is not None:
            self._sweep_timer.stop()
        self._sweep = None
        self._sweep_timer = None
        self._say(message)
