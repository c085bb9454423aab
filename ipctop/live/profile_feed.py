"""What the profile panel shows: perf windows of a live source, or a record's steps.

A live source gets one perf record on its CPUs while the panel is on; the
windows arrive on the recorder's thread and are handed over through
`on_window`, as samples are. A replayed record shows the profile its steps
carry (the step with the pair count on screen, else the last one); a record
without profiles says so. Everything the panel cannot show has its "why".
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from ..engine.profile import PerfRecorder, PerfStatus, Profile, ProfileWindow, perf_status
from .source_protocol import SampleSource

HISTORY = 30  # windows kept for the sparklines: half a minute at 1 s


class ProfileFeed:
    def __init__(self, source: SampleSource, window: float = 1.0) -> None:
        self.source = source
        self.window = window
        self.history: deque[ProfileWindow] = deque(maxlen=HISTORY)
        self.status: PerfStatus | None = None
        self.event = "?"
        self.perf_version: str | None = None
        self._recorder: PerfRecorder | None = None
        self._steps = self._recorded_steps()

    @property
    def live(self) -> bool:
        return self.source.controllable

    def _recorded_steps(self) -> dict[int, Profile]:
        record = self.source.record
        steps = record.steps if record is not None else []
        return {s.pairs: s.profile for s in steps if s.profile}

    # -- live ----------------------------------------------------------------------
    def start(self, on_window: Callable[[ProfileWindow], None]) -> str | None:
        """Start perf for a live source; the one line of why not, or None."""
        if not self.live:
            return None
        cpus = list(self.source.info.config.cpus)
        self.status = perf_status(cpus)
        if not self.status.ok:
            return self.status.line
        self.event, self.perf_version = self.status.event, self.status.version

        def got(w: ProfileWindow) -> None:
            self.history.append(w)
            on_window(w)

        self._recorder = PerfRecorder(
            self.status, cpus, self.source.pair_tids, self.window, on_window=got, keep=HISTORY
        ).start()
        return self.status.warnings[0] if self.status.warnings else None

    def stop(self) -> None:
        recorder, self._recorder = self._recorder, None
        if recorder is not None:
            recorder.stop()

    # -- what to show ------------------------------------------------------------------
    def na(self) -> str | None:
        """Why there is nothing to show, or None."""
        if not self.live:
            return None if self._steps else "this record carries no profile"
        if self.status is None:
            return "starting perf"
        if not self.status.ok:
            return self.status.reason
        if not self.history:
            return "waiting for perf's first window"
        return None

    def recorded(self, pairs: int | None) -> Profile | None:
        if not self._steps:
            return None
        return self._steps.get(pairs or -1) or self._steps[max(self._steps)]

    @property
    def cost_pct(self) -> float | None:
        costs = [w.cost_pct for w in list(self.history)[-5:] if w.cost_pct is not None]
        return sum(costs) / len(costs) if costs else None
