"""--profile for the commands that measure spans: run, sweep, check.

The perf status is asked once per command; each measured span (a run, one
repeat of a sweep step) gets its own recorder on the CPUs its pairs are
bound to, and the windows of all repeats of a step make the step's profile.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .perf import PerfStatus, perf_status
from .recorder import FREQUENCY, PerfRecorder
from .window import Profile, ProfileWindow


def pair_cpus(engine: Any) -> list[int]:
    """The CPUs the pairs are bound to; all of the engine's when any end is free."""
    bound = [e.bound_cpu for e in engine.ends()]
    if not bound or any(c is None for c in bound):
        return list(engine.cpus)
    return sorted(set(bound))


def pair_tids(engine: Any) -> set[int]:
    return {e.tid for e in engine.ends() if e.tid}


class SpanProfiler:
    """One status for the command, one recorder per span, windows kept per step."""

    def __init__(self, cpus: list[int], window: float = 1.0) -> None:
        self.status: PerfStatus = perf_status(cpus)
        self.window = window
        self._windows: list[ProfileWindow] = []
        self._notes: list[str] = []
        self._cpus: tuple[int, ...] = tuple(cpus)

    @property
    def lines(self) -> list[str]:
        """What to say once at the start: why not, or what is degraded."""
        if not self.status.ok:
            return [self.status.line or f"profile n/a ({self.status.why})"]
        return list(self.status.warnings)

    @contextmanager
    def span(self, engine: Any) -> Iterator[None]:
        """Profile while the body measures; the windows in the body's time are kept."""
        if not self.status.ok:
            yield
            return
        cpus = pair_cpus(engine)
        self._cpus = tuple(sorted(set(self._cpus) | set(cpus)))
        recorder = PerfRecorder(self.status, cpus, lambda: pair_tids(engine), self.window)
        recorder.start()
        t0 = time.monotonic()
        try:
            yield
        finally:
            t1 = time.monotonic()
            recorder.stop()
            # perf takes a moment to start: the body's warm-up is in the first window.
            got = recorder.profile(t0, t1)
            self._windows.extend(got.windows)
            self._notes.extend(n for n in recorder.errors if n not in self._notes)

    def take(self) -> Profile:
        """The profile of the spans since the last take(), and start afresh."""
        windows, self._windows = self._windows, []
        if not self.status.ok:
            return Profile(
                event=self.status.event,
                perf_version=self.status.version,
                frequency=0,
                cpus=self._cpus,
                na=self.status.reason,
                notes=tuple(self.lines),
            )
        return Profile(
            event=self.status.event,
            perf_version=self.status.version,
            frequency=FREQUENCY,
            cpus=self._cpus,
            windows=tuple(windows),
            notes=tuple(self.status.warnings) + tuple(self._notes),
            na=None if windows else "no samples",
        )
