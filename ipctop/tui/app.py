"""The live monitor: add cores and watch scalability degrade.

Threads: the sampler thread posts each Sample as a message (post_message is
thread-safe); engine control runs in thread workers that report back with
call_from_thread. Only the UI thread touches widgets, and it redraws at most
REDRAW_HZ times a second however fast samples arrive.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from textual.app import App, ComposeResult, SystemCommand
from textual.containers import Horizontal, Vertical
from textual.filter import LineFilter
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget

from ..engine.sample import Sample
from ..live.baseline import Baseline
from ..live.mechanisms import comparable
from ..live.monitor import MonitorCpuMeter
from ..live.session import Session
from ..live.sources import SampleSource
from .ab_actions import AbActions
from .contrast_floor import ContrastFloor
from .control_actions import ControlActions
from .crash_report import CrashReport
from .host import AppHost
from .keys import MONITOR_KEYS, bindings, key_commands
from .own_cpu import OwnCpu, PairTids
from .profile_actions import ProfileActions
from .record_actions import RecordActions
from .screens.help import HelpScreen
from .screens.key_list import key_sections
from .signal_exit import SignalExit
from .sweep_actions import SweepActions
from .view_actions import ViewActions
from .widgets.ab_panel import AbPanel
from .widgets.bands import MIN_SIZE, BaselineBar, TooSmall
from .widgets.cpus_panel import CpusPanel
from .widgets.detail_panel import DetailPanel
from .widgets.fitted_footer import FittedFooter
from .widgets.latency_panel import LatencyPanel
from .widgets.profile_panel import ProfilePanel
from .widgets.run_header import RunHeader
from .widgets.scaling_panel import ScalingPanel
from .widgets.status_line import StatusLine
from .widgets.switches_panel import SwitchesPanel
from .widgets.table_pace import TablePace
from .widgets.threads_panel import ThreadsPanel

REDRAW_HZ = 4


class SampleArrived(Message):
    """A sample from the source's thread; generation tells restarts apart."""

    def __init__(self, sample: Sample, generation: int) -> None:
        super().__init__()
        self.sample = sample
        self.generation = generation


class IpctopApp(
    CrashReport,
    SignalExit,
    RecordActions,
    ProfileActions,
    AbActions,
    ControlActions,
    SweepActions,
    ViewActions,
    App[int],
):
    CSS_PATH = "app.tcss"
    TITLE = "ipctop"
    # The first of each: below the smallest layout (widgets/bands.py says so).
    HORIZONTAL_BREAKPOINTS = [
        (0, "-too-narrow"),
        (MIN_SIZE[0], "-tiny"),
        (50, "-narrow"),
        (80, "-wide"),
        (120, "-full"),
    ]
    VERTICAL_BREAKPOINTS = [
        (0, "-too-low"),
        (MIN_SIZE[1], "-flat"),
        (16, "-short"),
        (24, "-tall"),
        (32, "-full-height"),
    ]

    KEYS = MONITOR_KEYS  # every key, once (tui/keys.py)
    BINDINGS = bindings(MONITOR_KEYS)

    def __init__(
        self,
        source: SampleSource,
        *,
        sweep_step: float = 5.0,
        theme: str | None = None,
        screenshot_dir: str = ".",
        own_cpu: Callable[[PairTids], float | None] | None = None,
        record: str | None = None,
        baseline: Baseline | None = None,
        metrics: Callable[[Sample, Any, Session], None] | None = None,
        present: bool = False,
    ) -> None:
        super().__init__()
        self.metrics = metrics  # publishes each fed sample to --metrics
        self._present_at_start = present
        self.source = source
        self.info = source.info
        self.session = Session(workload=self.info.config.workload)
        self.sweep_step = sweep_step
        self.screenshot_dir = screenshot_dir
        self._initial_theme = theme
        self._own_cpu = OwnCpu(own_cpu if own_cpu is not None else MonitorCpuMeter().read_lazy)
        self._generation = 0
        self._dirty = False
        self._redraw_pending = False
        self._last_redraw = 0.0
        # Above 64 threads the screen steps every 1 s, above 256 every 2 s.
        self._table_pace = TablePace()
        self._message = ""
        self.run_header: RunHeader | None = None
        self._contrast_floor: ContrastFloor | None = None
        self._records_init(record, baseline, screenshot_dir)

    def get_line_filters(self) -> Sequence[LineFilter]:
        # Last: it judges the colours the terminal will show, after Textual's filters.
        return [*super().get_line_filters(), self.contrast_floor]

    @property
    def contrast_floor(self) -> ContrastFloor:
        if self._contrast_floor is None:  # the console knows its colour depth once it runs
            self._contrast_floor = ContrastFloor(self.console.color_system)
        return self._contrast_floor

    # -- layout ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield RunHeader(id="header")
        yield BaselineBar(id="baseline-bar")
        yield AbPanel(id="ab-panel")
        # Threads take the rows they need (capped); the chart takes the rest.
        with Horizontal(id="top"):
            yield ThreadsPanel(id="threads", classes="panel")
            yield CpusPanel(id="cpus", classes="panel")
        with Horizontal(id="main"):
            yield ScalingPanel(id="scaling", classes="panel")
            with Vertical(id="side"):
                yield SwitchesPanel(id="switches", classes="panel")
                yield DetailPanel(id="detail", classes="panel")
                yield LatencyPanel(id="latency", classes="panel")
                yield ProfilePanel(id="profile", classes="panel")
        yield TooSmall(id="too-small")
        yield StatusLine(id="status")
        # No ^p on the right: docked over the keys it cut the last of them ("^ppa lette");
        # the help screen names ctrl+p. Only the keys that fit whole (widgets/fitted_footer.py).
        yield FittedFooter(show_command_palette=False)

    def on_mount(self) -> None:
        if self._initial_theme:
            self.theme = self._initial_theme
        titles = {
            "threads": "Threads",
            "cpus": "CPUs",
            "scaling": "Scaling",
            "switches": "Context switches",
            "detail": "Where the time goes",
            "profile": "Profile (perf)",
            "latency": "Latency, last reading (l; up/down: pair)",
        }
        for wid, title in titles.items():
            self.query_one(f"#{wid}").border_title = title
        scaling = self.query_one(ScalingPanel)
        scaling.default_subtitle = scaling.border_subtitle = "total ops/s by pairs"
        # Kept, not queried: a help or chooser screen on top hides them from query_one.
        self.run_header = self.query_one(RunHeader)
        self.status_line = self.query_one(StatusLine)
        self.threads_panel = self.query_one(ThreadsPanel)
        self.cpus_panel = self.query_one(CpusPanel)
        self.switches_panel = self.query_one(SwitchesPanel)
        self.scaling_panel = self.query_one(ScalingPanel)
        self.detail_panel = self.query_one(DetailPanel)
        self.latency_panel = self.query_one(LatencyPanel)
        self.baseline_bar = self.query_one(BaselineBar)
        self.theme_changed_signal.subscribe(self, lambda _theme: self._theme_changed())
        self._own_cpu.prime(self.source.pair_tids, time.monotonic())
        self._catch_signals()
        self._records_mounted()
        self.source.start(self._deliver)
        if self._present_at_start:
            self.action_present()
        self._redraw()
        # The widgets, styles and engine live as long as the app: out of the
        # collector's sight, so a full collection does not walk them twice a second.
        self.call_after_refresh(gc.freeze)

    async def on_unmount(self) -> None:
        gc.unfreeze()  # what the app held may be collected again
        await asyncio.to_thread(self._profile_unmount)  # perf stops before the pairs
        await asyncio.to_thread(self._ab_unmount)  # so does an A/B, A put back
        self._records_finish(interrupted=self.signalled is not None)
        self._restore_signals()
        # Stopping joins threads and children: off the event loop.
        await asyncio.to_thread(self.source.stop)

    # -- samples -------------------------------------------------------------------
    def _deliver(self, sample: Sample, generation: int) -> None:
        """Runs on the source's thread: hand over, touch nothing."""
        self.post_message(SampleArrived(sample, generation))

    def on_sample_arrived(self, msg: SampleArrived) -> None:
        if msg.generation < self._generation:
            return  # from a run that was just replaced
        self._records_feed(msg.sample, msg.generation)  # before a restart replaces the session
        if msg.generation > self._generation:
            self._generation = msg.generation
            old, old_info = self.session, self.info
            self.info = self.source.info
            self.session = Session(workload=self.info.config.workload)
            if comparable(old_info, self.info):
                self.session.carry_curves(old)  # a workload switch: one curve per mechanism
        self.session.feed(msg.sample)
        if self.metrics is not None:
            self.metrics(msg.sample, self.info, self.session)
        # Each warning rides in one sample (the source adds the engine's), so once each.
        for event in msg.sample.events:
            self.notify(event, severity="error", timeout=8, markup=False)  # "[Errno 43]" is text
        if self._screen_steps():
            self._schedule_redraw()
        else:
            self._dirty = True  # drawn at the next step, or at the next key's redraw

    def _screen_steps(self) -> bool:
        """Whether this sample is drawn. Above PACED_ROWS threads the whole screen steps
        with the long tables, every 1 s, or 2 s above LONG_ROWS (table_pace.py): there
        the frame, which every panel's moving figures make a whole-screen one, was most
        of what the monitor cost beyond the sampler. Every sample is still fed."""
        pace = self._table_pace.pace(self.session, self.info.interval)
        return pace.every_s is None or pace.at == self.session.count

    def _schedule_redraw(self) -> None:
        self._dirty = True
        if self._redraw_pending:
            return
        self._redraw_pending = True
        wait = self._last_redraw + 1.0 / REDRAW_HZ - time.monotonic()
        if wait > 0:
            self.set_timer(wait, self._redraw)
        else:
            self.call_later(self._redraw)

    def _typing_an_answer(self) -> bool:
        # Under the dimmed modal every redraw re-composites the whole screen: CPU
        # taken from the pairs while a path or B's options are typed. The figures
        # underneath wait until it is answered.
        from .screens.prompts import TextInputScreen

        return isinstance(self.screen, TextInputScreen)

    def redraw_now(self) -> None:
        """Draw the current session now, throttle or not (tests, screenshots)."""
        self._redraw(read_cpu=True)

    def _redraw(self, read_cpu: bool = False) -> None:
        self._redraw_pending = False
        if not self.is_running or self.run_header is None:
            return  # not mounted yet, or shutting down: the widgets are going
        if self._typing_an_answer():
            return  # _dirty stays: the next sample after the answer draws
        self._last_redraw = time.monotonic()
        self._dirty = False
        self._own_cpu.update(self.source.pair_tids, self._last_redraw, read_cpu)
        notes = []
        if self._paused:
            notes.append("PAUSED (space)")
        sweep = self.sweep_note()
        if sweep:
            notes.append(sweep)
        notes.extend(self._records_notes())
        notes.extend(self.story_notes())
        self.run_header.update_from(self.info, self.session, None, notes)
        if self._present is not None:
            self._present.update_from(self.info, self.session, self.baseline)
        s = self.session
        pace = self._table_pace.pace(s, self.info.interval)
        self.status_line.update_status(
            self._own_cpu.text(),
            self.source.monitor_cpu,
            self.info.interval,
            self._message,
            " · ".join(x for x in (self.source.monitor_note, self.profile_note()) if x),
            screen_every=pace.every_s,
        )
        if self._paused:
            return
        self.threads_panel.update_from(s, pace)
        cpus = self.cpus_panel
        if _shown(cpus):
            cpus.update_from(s, self.info.config.cpus)
        switches = self.switches_panel
        if _shown(switches):
            switches.update_from(s, self.info.config.cpus, cpus.show_all, pace)
        scaling = self.scaling_panel
        if self.baseline is not None:
            scaling.name_baseline(self.baseline.label_for(self.info))
        if _shown(scaling):
            pairs = s.latest.pairs if s.latest is not None else None
            scaling.update_from(s, pairs)
        self._profile_redraw()
        detail = self.detail_panel
        if self._detail_on and _shown(detail):
            live = self.source.controllable
            detail.update_from(s, "" if live else "these samples carry no detail")
        if self._latency_on and _shown(self.latency_panel):
            self.latency_panel.update_from(s)

    def story_notes(self) -> list[str]:
        """Header notes of a scripted demo (tui/demo_app.py); the monitor has none."""
        return []

    def on_resize(self) -> None:
        self._schedule_redraw()  # panels shown again by a larger size need their data

    def _theme_changed(self) -> None:
        self.scaling_panel.redraw()
        self._schedule_redraw()

    def _unnotify(self, notification: Any, refresh: bool = True) -> None:
        super()._unnotify(notification, refresh)
        # A toast that leaves must take its cells with it: in a real terminal the panels
        # that repaint only their changed lines (RowsView) kept its border and words
        # ("▌ detail on: extra /proc reads per"). One full repaint once it has gone.
        self.call_after_refresh(self.refresh, repaint=True)

    def _say(self, message: str, severity: str = "information") -> None:
        self._message = message
        self.notify(message, severity=severity, timeout=4)  # type: ignore[arg-type]
        self._schedule_redraw()

    # -- keys the app answers itself (the rest: the *_actions mixins) ----------------
    def action_help(self) -> None:
        # Each binding carries its help line as its tooltip (tui/keys.py).
        self.push_screen(HelpScreen(key_sections(self)))

    async def action_quit(self) -> None:
        self.exit(0)

    # -- command palette -------------------------------------------------------------
    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield from key_commands(self)


def _shown(widget: Widget) -> bool:
    """Displayed, and so are all its ancestors (a collapsed column hides its panels)."""
    node: Any = widget
    while isinstance(node, Widget):
        if not node.display:
            return False
        node = node.parent
    return True


if TYPE_CHECKING:

    def _host(app: IpctopApp) -> AppHost:
        return app  # mypy: the app has everything its mixins use (tui/host.py)
