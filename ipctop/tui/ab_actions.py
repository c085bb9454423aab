"""The monitor's A/B (key a): the current setting against one changed option.

Key a asks for B's options (keys.py declares a and escape), then live/ab_live.py runs ABBA slots on the live
pairs in a worker thread; its progress reaches the UI as messages and the
AbPanel shows the running B/A, its interval and verdict. Escape stops it;
however it ends, the A setting is put back. While it runs, the keys that
change the pairs are refused (they would change A or B under it).
"""

from __future__ import annotations

import threading

from textual.message import Message

from ..analysis.stats import REGRESSION, fmt_diff
from ..errors import IpctopError
from ..live.ab_live import AbProgress, LiveAB, describe, parse_change
from ..live.sources import LiveSource
from .host import AppHost
from .screens.prompts import AbInputScreen
from .widgets.ab_panel import AbPanel

# What a slot measures and when the A/B stops; `ipctop ab` has the same rule
# with shorter slots (a restart of the live pairs needs the longer settle).
TIMING = {"window": 1.0, "settle": 0.5, "precision_pct": 1.0, "max_seconds": 60.0}


class AbProgressArrived(Message):
    def __init__(self, progress: AbProgress) -> None:
        super().__init__()
        self.progress = progress


class AbActions:
    """Uses the app's source, info, _say, push_screen, run_worker, post_message."""

    ab_timing: dict[str, float] = TIMING
    _ab: LiveAB | None = None
    _ab_finished: threading.Event | None = None
    _ab_progress: AbProgress | None = None
    _ab_sides = ("", "")
    _ab_last_b = ""

    @property
    def ab_running(self) -> bool:
        return self._ab is not None

    def action_ab(self: AppHost) -> None:
        if self._ab is not None:
            self._say("an A/B is running: escape stops it", "warning")
            return
        if not self.source.controllable or not isinstance(self.source, LiveSource):
            self._say(f"{self.info.source} source: cannot run an A/B", "warning")
            return
        c = self.source.engine.config
        current = f"{c.workload}, {c.placement}, {c.mode}, {self.source.pair_count()} pair(s)"
        self.push_screen(AbInputScreen(current, self._ab_last_b), self._ab_start)

    def _ab_start(self: AppHost, text: str | None) -> None:
        if not text or self._ab is not None:
            return
        self._ab_last_b = text
        source = self.source
        if not isinstance(source, LiveSource):
            return  # action_ab asked only of a live source

        def progress(p: AbProgress) -> None:
            self.post_message(AbProgressArrived(p))

        try:
            change = parse_change(text, source.engine.config, source.allowed)
            ab = LiveAB(
                source, change, on_progress=progress,
                **self.ab_timing,
            )  # fmt: skip
        except IpctopError as exc:
            self._say(str(exc), "error")
            return
        self._ab, self._ab_finished = ab, threading.Event()
        self._ab_sides = (describe(ab.a), describe(ab.b))
        self._ab_show(None)
        self.run_worker(self._ab_run, thread=True, group="ab", name="A/B")

    def _ab_run(self: AppHost) -> None:
        ab, finished = self._ab, self._ab_finished
        try:
            if ab is not None:
                ab.run()  # A is back whatever happens
        finally:
            if finished is not None:
                finished.set()

    def on_ab_progress_arrived(self: AppHost, msg: AbProgressArrived) -> None:
        p = msg.progress
        self._ab_show(p)
        if not p.done:
            return
        self._ab = None
        self.info = self.source.info
        d = p.difference
        if d is None:
            self._say(f"A/B {p.why}: {p.blocks} block(s), too few for an interval", "warning")
            return
        severity = "error" if p.why.startswith("error") else "information"
        if p.verdict == REGRESSION or p.not_judged:
            severity = "warning"
        self._say(f"A/B {p.why}: B/A {fmt_diff(d)}, {p.verdict}", severity)
        if p.not_judged:
            self._say(p.not_judged, "warning")

    def action_stop_ab(self: AppHost) -> None:
        if self._ab is not None:
            self._ab.cancel()
            self._say("stopping the A/B: A comes back")
        elif self._ab_progress is not None:
            self._ab_progress = None
            self._ab_panel().update_from("", "", None)

    def _ab_show(self: AppHost, p: AbProgress | None) -> None:
        if p is None:  # started: an empty first line until the first slot reports
            t = self.ab_timing["max_seconds"]
            p = AbProgress(0, "A", 0, 0.0, t, None, None, None)
        self._ab_progress = p
        self._ab_panel().update_from(*self._ab_sides, p)

    def _ab_panel(self: AppHost) -> AbPanel:
        # The main screen's: a screen on top (help, a chooser) hides it from query_one.
        return self.screen_stack[0].query_one(AbPanel)

    def _ab_unmount(self: AppHost, timeout: float = 30.0) -> None:
        """Before the source stops: end the A/B and wait until A is back."""
        ab, finished = self._ab, self._ab_finished
        if ab is None or finished is None:
            return
        ab.cancel()
        finished.wait(timeout)
