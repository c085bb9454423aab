"""`ipctop demo`: the monitor telling its story without typing, at the speaker's pace.

1 pair on one CPU, then a pair more per step until every CPU has one, then
the same-core curve becomes the baseline and the pairs move to cross
placement, then the presentation view with the Diff % and its verdict. A
step ends when its reading has settled and `pace` seconds have passed;
`n` ends it now, `space` holds the story (the pairs keep running).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult

from ..analysis.settle import Settler
from ..live.baseline import Baseline
from ..output.records.record import Record
from ..output.records.record_box import Box
from .app import IpctopApp
from .keys import KeySpec, bindings
from .widgets.bands import NarrationBand
from .widgets.run_header import RunHeader

TICK = 0.25  # seconds between looks at the story


@dataclass(frozen=True)
class Step:
    caption: str
    start: Callable[[DemoApp], None]


def _add_pair(app: DemoApp) -> None:
    app.action_add_pair()


def _to_cross(app: DemoApp) -> None:
    app.keep_same_core_curve()
    app._restart(placement="cross")


def _present(app: DemoApp) -> None:
    if app._present is None:
        app.action_present()


def story(cpus: int) -> list[Step]:
    """The steps for a box with this many CPUs (at least 1)."""
    steps = [Step("1 pair, both ends on one CPU, as the seeds ran it", lambda _app: None)]
    for n in range(2, cpus + 1):
        steps.append(Step(f"add a pair: {n} pairs on {n} CPUs; the ideal is {n}x", _add_pair))
    steps.append(
        Step(
            "cross placement: every wake-up crosses CPUs; the same-core curve is the baseline",
            _to_cross,
        )  # fmt: skip
    )
    steps.append(Step("the verdict: Diff % against the same-core baseline", _present))
    return steps


def settle_progress(settler: Settler) -> str:
    """How far a reading is from settled: its window, its spread, its interval."""
    if not settler.window_full:
        return f"collecting {settler.window_s:g} s of samples"
    cv, half = settler.cv, settler.half_width_pct
    parts = []
    if cv is not None:
        parts.append(f"spread {100 * cv:.1f} % (under {100 * settler.cv_max:g} % needed)")
    if half is not None:
        parts.append(f"interval ±{half:.1f} % (±{settler.ci_max_pct:g} % needed)")
    return ", ".join(parts) or "no reading yet"


class DemoApp(IpctopApp):
    # Over the monitor's n (next symbol) and space (pause): the story's own keys.
    KEYS = (
        KeySpec("n", "demo_step", "next step", "demo: the next step of the story now"),
        KeySpec("space", "demo_pause", "hold story", "demo: hold the story / go on"),
    )
    BINDINGS = bindings(KEYS)

    def __init__(self, *args: Any, pace: float = 8.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pace = pace
        self.steps = story(len(self.info.config.cpus))
        self.step = 0
        self.held = False
        self._step_at = time.monotonic()
        self._own_baseline = kwargs.get("baseline") is None

    def compose(self) -> ComposeResult:
        # The monitor's layout with the narration under its header: its own band, not
        # the footer's last words.
        for widget in super().compose():
            yield widget
            if isinstance(widget, RunHeader):
                yield NarrationBand(id="narration")

    def on_mount(self) -> None:
        # Textual runs IpctopApp.on_mount itself (a handler per class of the MRO): calling it
        # here as well started the source twice.
        self.set_interval(TICK, self._tick)
        self._tell()

    # -- the story -----------------------------------------------------------------
    def _tick(self) -> None:
        self._tell()
        if self.held or self._busy or self.step >= len(self.steps) - 1:
            return
        if self._settled_here() and time.monotonic() - self._step_at >= self.pace:
            self._advance()

    def _settled_here(self) -> bool:
        latest = self.session.latest
        return (
            latest is not None and latest.pairs == self.source.pair_count() and self.session.settled
        )

    def _advance(self) -> None:
        if self.step >= len(self.steps) - 1:
            return  # the band already says the story is told
        self.step += 1
        self._step_at = time.monotonic()
        self.steps[self.step].start(self)
        self._tell()

    def narration(self) -> Text:
        """The band's three lines: which step, what it shows, what the screen waits for."""
        step = self.steps[self.step]
        text = Text()
        text.append(f"DEMO  step {self.step + 1} of {len(self.steps)}", "bold")
        text.append("    n: next step · space: hold the story\n")
        text.append(step.caption, "bold")
        text.append("\n")
        text.append(self.waiting())
        return text

    def waiting(self) -> str:
        """What moves the story on, in words a room can follow."""
        if self.step >= len(self.steps) - 1:
            return "the story is told: q quits, or keep using the keys"
        if self.held:
            return "held: space goes on, n steps on now (the pairs keep running)"
        if self._busy:
            return "restarting the pairs"
        left = self.pace - (time.monotonic() - self._step_at)
        if self._settled_here():
            if left <= 0:
                return "settled: the next step now"
            return f"settled: the next step in {left:.0f} s (n: now)"
        n = self.source.pair_count()
        return (
            f"waiting for the {n}-pair reading to settle: {settle_progress(self.session.settler)}"
        )

    def _tell(self) -> None:
        text = self.narration()
        for band in self._bands():
            band.say(text)

    def _bands(self) -> list[NarrationBand]:
        bands = list(self.query(NarrationBand))  # the monitor's, under its header
        if self._present is not None and self._present.is_mounted:
            bands += list(self._present.query(NarrationBand))
        return bands

    def action_demo_step(self) -> None:
        self._advance()

    def action_demo_pause(self) -> None:
        self.held = not self.held
        self._step_at = time.monotonic()  # a held step gets its whole pace again
        self._tell()

    def keep_same_core_curve(self) -> None:
        """The curve measured so far becomes the baseline, unless one was given."""
        if not self._own_baseline:
            return
        points = tuple(p for p in self.session.points() if p.settled)
        info = self.info
        record = Record(
            kind="sweep",
            box=Box.model_validate({"kernel_release": info.kernel, "cpu_model": info.cpu_model}),
            # The run's own configuration; a live curve has no fixed run length:
            # each point is the settler's reading.
            config=info.config.model_copy(
                update={"seconds": self.pace, "warmup": 0.0, "repeat": 1}
            ),
            points=list(points),
            source=f"{info.config.placement}-core",  # its name on the baseline bar and the chart
        )
        self._show_baseline(
            Baseline(record=record, points=points, path=f"{info.config.placement}-core")
        )
