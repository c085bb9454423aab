"""How often the long tables take a sample: each one up to PACED_ROWS threads, once a
second above them, every 2 s above LONG_ROWS (issue 29).

Every thread sparkline shifts and every switches row moves with each sample, so at
512 threads those two tables are most of the lines a frame styles afresh. Above
PACED_ROWS threads they step once a second instead: two samples' columns at a
time at the default 0.5 s, nothing dropped, and their titles say so. Since
2026-12-07 the whole screen steps with them (IpctopApp._screen_steps; the status
line says "screen every 1 s"): the header, the CPUs and the curve move every
sample, so each frame was a whole-screen composite, and the frame, not the
figures, was most of what the monitor cost there beyond the sampler. A step
comes at once when the pair count changes or the run restarts, so adding or
removing a pair shows in the next frame, and a key's redraw draws the latest
sample at once. 64 threads is
about where the monitor's own cost started to show beside the sampler's
(BENCHMARKS.md, "Observer effect": 16 threads met 3 % of a CPU, 512 did not),
and more rows than any terminal shows at once, so the table is scrolled anyway.

Above LONG_ROWS threads (from 2026-12-07 on) a step is 2 s. There the ends evict
the monitor's caches between frames, so a frame at 512 busy threads cost about
twice one at 16, and one frame a second still put the monitor at 3.7 % of a CPU
where the issue asks 3 % (BENCHMARKS.md, "Observer effect"). Records, `run` and
replay still see every sample; only the screen steps less often.
"""

from __future__ import annotations

from typing import NamedTuple

from ...engine.latency_pace import EVERY_SAMPLE_ENDS, LONG_SPAN_S
from ...live.session import Session

PACED_ROWS = 64  # a table of more threads than this steps once a second
# and of more than this, every LONG_STEP_S: where the sampler reads latency every
# 2 s too (engine/latency_pace.py), so one rule says what the screen and the panel show
LONG_ROWS = EVERY_SAMPLE_ENDS
PACED_STEP_S = 1.0  # seconds between a paced table's steps (whole samples of it)
LONG_STEP_S = LONG_SPAN_S


class Pace(NamedTuple):
    """What a long table is told at a redraw."""

    every_s: float | None  # seconds between its steps when paced; None: it takes every sample
    at: int  # the session's sample count at the latest step: a table not taken then takes now


def step_s(threads: int) -> float | None:
    """Seconds between the screen's steps at this many threads; None: every sample."""
    if threads <= PACED_ROWS:
        return None
    return PACED_STEP_S if threads <= LONG_ROWS else LONG_STEP_S


def samples_a_step(interval: float, step: float = PACED_STEP_S) -> int:
    """Samples per step of `step` s: 2 at the default 0.5 s and 1 s steps; 1 (no
    pacing) when a sample comes as seldom as a step."""
    if interval <= 0:
        return 1
    return max(1, round(step / interval))


class TablePace:
    """Where the long tables' steps fall: counted in samples, not wall time, so a
    step always holds whole samples and a replay paces as the live run did."""

    def __init__(self) -> None:
        self._session: Session | None = None
        self._count = 0  # the session's sample count at the latest step
        self._pairs = -1  # and its pair count then

    def pace(self, session: Session, interval: float) -> Pace:
        s = session.latest
        step = step_s(len(s.threads)) if s is not None else None
        every = samples_a_step(interval, step) if step is not None else 1
        if s is None or every == 1:
            self._session, self._count, self._pairs = session, session.count, -1
            return Pace(None, session.count)
        if (
            session is not self._session
            or s.pairs != self._pairs  # a pair added or removed shows at once
            or not 0 <= session.count - self._count < every
        ):
            self._session, self._count, self._pairs = session, session.count, s.pairs
        return Pace(every * interval, self._count)


def paced_title(title: str, every_s: float | None, what: str = "") -> str:
    """A table's border title, saying how often it steps when it is paced."""
    return title if every_s is None else f"{title} · {what}every {every_s:g} s"


class Taken:
    """Which step a paced table last took its rows at, and from which session."""

    def __init__(self) -> None:
        self.session: Session | None = None
        self._step: object = None

    def due(self, session: Session, step: object) -> bool:
        """Whether the table takes the session's rows now: unpaced (step None) always,
        paced at a new step or when the session is another; noted when it does."""
        if step is not None and step == self._step and session is self.session:
            return False
        self.session, self._step = session, step
        return True
