"""--profile for the commands that measure spans: run, sweep, check.

One perf record runs for the whole command on the command's CPUs (it takes
a second or two to start on a loaded box, too long to pay per span), and each
measured span (a run, one repeat of a sweep step) counts only its own pairs'
samples between its start and end. The windows of the spans taken together
(the repeats of a step) make one profile.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .perf import PerfStatus, perf_status
from .perf_record import FREQUENCY, PerfRecorder, Span
from .window import Profile


def pair_tids(engine: Any) -> set[int]:
    return {e.tid for e in engine.ends() if e.tid}


class SpanProfiler:
    """Use as a context manager: perf starts at once and stops at the end."""

    def __init__(self, cpus: list[int], window: float = 1.0) -> None:
        self.status: PerfStatus = perf_status(cpus)
        self.cpus = tuple(sorted(set(cpus)))
        self._recorder: PerfRecorder | None = None
        self._pending: list[tuple[str, Span]] = []  # (tag, span): ab's A and B slots
        if self.status.ok:
            # Started now, so perf's start-up overlaps the pairs' start and warm-up.
            self._recorder = PerfRecorder(self.status, list(self.cpus), set, window).start()

    def __enter__(self) -> SpanProfiler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._recorder is not None:
            self._recorder.stop()

    @property
    def lines(self) -> list[str]:
        """What to say once at the start: why not, or what is degraded."""
        if not self.status.ok:
            return [self.status.line or f"profile n/a ({self.status.why})"]
        return list(self.status.warnings)

    @contextmanager
    def span(self, engine: Any, tag: str = "") -> Iterator[None]:
        """Profile the engine's pairs while the body runs; take(tag) collects it."""
        if self._recorder is None:
            yield
            return
        span = self._recorder.open_span(lambda: pair_tids(engine))
        try:
            yield
        finally:
            self._recorder.close_span(span)
            self._pending.append((tag, span))

    def take(self, tag: str = "") -> Profile:
        """The profile of the spans of `tag` since the last take(); waits for perf
        to catch up."""
        pending = [s for t, s in self._pending if t == tag]
        self._pending = [(t, s) for t, s in self._pending if t != tag]
        if self._recorder is None:
            return Profile(
                event=self.status.event,
                perf_version=self.status.version,
                frequency=0,
                cpus=self.cpus,
                na=self.status.reason,
                notes=tuple(self.lines),
            )
        windows = [w for s in pending for w in self._recorder.wait_span(s).windows]
        return Profile(
            event=self.status.event,
            perf_version=self.status.version,
            frequency=FREQUENCY,
            cpus=self.cpus,
            windows=tuple(windows),
            notes=tuple(self.status.warnings) + tuple(self._recorder.errors),
            na=None if any(w.samples for w in windows) else "no samples",
        )
