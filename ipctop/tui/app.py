"""The live monitor: add cores and watch scalability degrade.

Threads: the sampler thread posts each Sample as a message (post_message is
thread-safe); engine control runs in thread workers that report back with
call_from_thread. Only the UI thread touches widgets, and it redraws at most
REDRAW_HZ times a second however fast samples arrive.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from typing import Any

from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.filter import LineFilter
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from ..engine.placement import MODES, PLACEMENTS
from ..engine.sample import Sample
from ..engine.workloads import WORKLOADS
from ..errors import IpctopError
from ..live.baseline import Baseline
from ..live.live_lock import live_session
from ..live.mechanisms import comparable, next_mechanism
from ..live.monitor import MonitorCpuMeter
from ..live.session import Session
from ..live.sources import LiveSource, SampleSource
from ..live.sweep import AutoSweep
from ..signals import HANDLED, Interrupted
from . import ab_actions, profile_actions
from .ab_actions import AbActions
from .contrast_floor import AA, ContrastFloor
from .crash_report import CrashReport
from .profile_actions import ProfileActions
from .record_actions import RecordActions
from .screens.choice import ChoiceScreen
from .screens.help import HelpScreen
from .screens.key_list import key_sections
from .screens.present import AAA as PRESENT_CONTRAST
from .screens.present import PresentScreen
from .widgets.ab_panel import AbPanel
from .widgets.baseline_bar import BaselineBar
from .widgets.cpus_panel import CpusPanel
from .widgets.detail_panel import DetailPanel
from .widgets.latency_panel import LatencyPanel
from .widgets.profile_panel import ProfilePanel
from .widgets.run_header import RunHeader
from .widgets.scaling_panel import ScalingPanel
from .widgets.status_line import StatusLine
from .widgets.switches_panel import SwitchesPanel
from .widgets.threads_panel import ThreadsPanel
from .widgets.too_small import MIN_SIZE, TooSmall

REDRAW_HZ = 4
OWN_CPU_EVERY = 1.0  # seconds between readings of the monitor's own CPU use
OWN_CPU_MIN_WINDOW = 0.5  # seconds: the shortest window a reading may cover
EXIT_GRACE = 5.0  # seconds the UI gets to shut down after a signal

PLACEMENT_HELP = {
    "same": "both ends on one CPU (the seeds' layout)",
    "cross": "A on one CPU, B on the next: every wake-up crosses CPUs",
    "free": "unpinned: the scheduler decides",
}


class SampleArrived(Message):
    """A sample from the source's thread; generation tells restarts apart."""

    def __init__(self, sample: Sample, generation: int) -> None:
        super().__init__()
        self.sample = sample
        self.generation = generation


class IpctopApp(CrashReport, RecordActions, ProfileActions, AbActions, App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "ipctop"
    # The first of each: below the smallest layout (widgets/too_small.py says so).
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

    QUIT_TIP = "quit like q; a record being made is marked interrupted"
    # Most used first: the footer cuts the tail on narrow terminals.
    BINDINGS = [
        Binding("q", "quit", "quit"),
        Binding("question_mark", "help", "help", key_display="?"),
        Binding("plus", "add_pair", "add", key_display="+"),
        Binding("minus", "remove_pair", "remove", key_display="-"),
        Binding("s", "sweep", "sweep"),
        Binding("w", "choose_workload", "workload"),
        Binding("W", "compare_next", "compare", key_display="W"),
        Binding("d", "toggle_detail", "detail"),
        Binding("p", "choose_placement", "placement"),
        Binding("m", "toggle_mode", "mode"),
        Binding("space", "pause", "pause"),
        Binding("r", "reset_curve", "reset"),
        Binding("c", "all_cpus", "cpus"),
        Binding("S", "screenshot", "svg", key_display="S"),
        Binding("t", "toggle_theme", "theme"),
        Binding("R", "toggle_record", "record", key_display="R"),
        Binding("b", "baseline", "baseline"),
        *profile_actions.BINDINGS,
        *ab_actions.BINDINGS,
        Binding("F", "present", "present", key_display="F"),
        Binding("l", "toggle_latency", "latency", show=False),
        Binding("h", "latency_histogram", "histogram", show=False),
        Binding("P", "toggle_curve_metric", "p99 curve", show=False),
        Binding("x", "show_matrix", "matrix", show=False),
        Binding("ctrl+c", "interrupt", "quit", show=False, priority=True, tooltip=QUIT_TIP),
    ]

    #: (key, action, what it does) for the help screen and the command palette
    KEYS = [
        ("+", "add_pair", "add a pair on the next CPU"),
        ("-", "remove_pair", "remove the last pair"),
        ("w", "choose_workload", "choose the workload (restarts the pairs)"),
        ("W", "compare_next", "compare: switch to the next mechanism, one curve each"),
        ("d", "toggle_detail", "where the time goes: per-round costs (extra /proc reads)"),
        ("p", "choose_placement", "choose the placement (restarts the pairs)"),
        ("m", "toggle_mode", "switch threads / processes (restarts the pairs)"),
        ("space", "pause", "pause / resume the display"),
        ("s", "sweep", "auto-sweep: one more pair every K s until every CPU is used"),
        ("r", "reset_curve", "reset the scaling curves"),
        ("c", "all_cpus", "show all CPUs / only this run's"),
        ("S", "screenshot", "save an SVG screenshot"),
        ("t", "toggle_theme", "switch light / dark theme"),
        ("R", "toggle_record", "record the session to a JSON file / stop and save it"),
        ("b", "baseline", "overlay a record's scaling curve and Diff % / hide it"),
        *profile_actions.KEYS,
        *ab_actions.KEYS,
        ("F", "present", "presentation: large figures and the curve, high contrast"),
        ("l", "toggle_latency", "latency panel: round-trip and one-way percentiles per pair"),
        ("h", "latency_histogram", "latency histogram of the pair selected in the latency panel"),
        ("P", "toggle_curve_metric", "scaling chart: total ops/s / round-trip p99 by pairs"),
        ("x", "show_matrix", "open a latency matrix record (ipctop matrix --json)"),
        ("?", "help", "this help"),
        ("q", "quit", "quit: stop the pairs and remove every object"),
    ]

    def __init__(
        self,
        source: SampleSource,
        *,
        sweep_step: float = 5.0,
        theme: str | None = None,
        screenshot_dir: str = ".",
        own_cpu: Callable[[set[int]], float | None] | None = None,
        record: str | None = None,
        baseline: Baseline | None = None,
        metrics: Callable[[Sample, Any, Session], None] | None = None,
        present: bool = False,
    ) -> None:
        super().__init__()
        self.metrics = metrics  # publishes each fed sample to --metrics
        self._present_at_start = present
        self._present: PresentScreen | None = None
        self.source = source
        self.info = source.info
        self.session = Session(workload=self.info.workload)
        self.sweep_step = sweep_step
        self.screenshot_dir = screenshot_dir
        self._initial_theme = theme
        self._own_cpu = own_cpu if own_cpu is not None else MonitorCpuMeter().read
        self._own_cpu_value: float | None = None
        self._own_cpu_at = 0.0
        self._generation = 0
        self._paused = False
        self._dirty = False
        self._redraw_pending = False
        self._last_redraw = 0.0
        self._busy = 0  # control operations in flight
        self._message = ""
        self._detail_on = False
        self._latency_on = False
        self._sweep: AutoSweep | None = None
        self._sweep_timer: Any = None
        self._old_signals: dict[int, Any] = {}
        self.signalled: int | None = None
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
        yield Footer()

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
            "latency": "Latency, last interval (l; up/down: pair)",
        }
        for wid, title in titles.items():
            self.query_one(f"#{wid}").border_title = title
        self.query_one("#scaling").border_subtitle = "total ops/s by pairs"
        # Kept, not queried: a help or chooser screen on top hides them from query_one.
        self.run_header = self.query_one(RunHeader)
        self.status_line = self.query_one(StatusLine)
        self.threads_panel = self.query_one(ThreadsPanel)
        self.cpus_panel = self.query_one(CpusPanel)
        self.switches_panel = self.query_one(SwitchesPanel)
        self.scaling_panel = self.query_one(ScalingPanel)
        self.detail_panel = self.query_one(DetailPanel)
        self.latency_panel = self.query_one(LatencyPanel)
        self.theme_changed_signal.subscribe(self, lambda _theme: self._theme_changed())
        self._own_cpu(self.source.pair_tids())  # prime: the first reading means nothing
        self._own_cpu_at = time.monotonic()
        self._catch_signals()
        self._records_mounted()
        self.source.start(self._deliver)
        if self._present_at_start:
            self.action_present()
        self._redraw()
        # The widgets, styles and engine live as long as the app: out of the
        # collector's sight, a full collection no longer walks them twice a second.
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
            self.session = Session(workload=self.info.workload)
            if comparable(old_info, self.info):
                self.session.carry_curves(old)  # a workload switch: one curve per mechanism
        self.session.feed(msg.sample)
        if self.metrics is not None:
            self.metrics(msg.sample, self.info, self.session)
        for event in msg.sample.events:
            self.notify(event, severity="error", timeout=8)
        self._schedule_redraw()

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

    def _typing_a_path(self) -> bool:
        # Under the dimmed modal every redraw re-composited the whole screen, about
        # 0.1 s of CPU up to 4 times a second: half a CPU taken from the pairs while
        # a path is typed. The figures underneath wait until it is answered.
        from .screens.path_input import PathInputScreen

        return isinstance(self.screen, PathInputScreen)

    def redraw_now(self) -> None:
        """Draw the current session now, throttle or not (tests, screenshots)."""
        self._redraw(read_cpu=True)

    def _redraw(self, read_cpu: bool = False) -> None:
        self._redraw_pending = False
        if not self.is_running or self.run_header is None:
            return  # not mounted yet, or shutting down: the widgets are going
        if self._typing_a_path():
            return  # _dirty stays: the next sample after the answer draws
        self._last_redraw = time.monotonic()
        self._dirty = False
        # Never over a short window: /proc counts CPU in 10 ms ticks, so one tick
        # in the 18 ms after a throttled redraw read as 54 % (screenshots/scaling.svg).
        since = self._last_redraw - self._own_cpu_at
        first = self._own_cpu_value is None  # "measuring" until a first reading
        if since >= OWN_CPU_EVERY or (read_cpu and (first or since >= OWN_CPU_MIN_WINDOW)):
            self._own_cpu_value = self._own_cpu(self.source.pair_tids())
            self._own_cpu_at = self._last_redraw
        notes = []
        if self._paused:
            notes.append("PAUSED (space)")
        if self._sweep is not None:
            notes.append(self._sweep.describe())
        notes.extend(self._records_notes())
        notes.extend(self.story_notes())
        self.run_header.update_from(self.info, self.session, None, notes)
        if self._present is not None:
            self._present.update_from(self.info, self.session, self.baseline)
        self.status_line.update_status(
            self._own_cpu_value,
            self.source.monitor_cpu,
            self.info.interval,
            self._message,
            # Only a live source raises its monitor; others have no such note.
            " · ".join(
                x for x in (getattr(self.source, "monitor_note", ""), self.profile_note()) if x
            ),
        )
        if self._paused:
            return
        s = self.session
        self.threads_panel.update_from(s)
        cpus = self.cpus_panel
        if _shown(cpus):
            cpus.update_from(s, self.info.cpus)
        switches = self.switches_panel
        if _shown(switches):
            switches.update_from(s, self.info.cpus, cpus.show_all)
        scaling = self.scaling_panel
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

    def _say(self, message: str, severity: str = "information") -> None:
        self._message = message
        self.notify(message, severity=severity, timeout=4)  # type: ignore[arg-type]
        self._schedule_redraw()

    # -- control: engine calls run in a thread worker ------------------------------
    def _control(self, what: str, fn: Callable[..., str], *args: Any, **kwargs: Any) -> None:
        if not self.source.controllable:
            self._say(f"{self.info.source} source: cannot {what}", "warning")
            return
        if self.ab_running:  # it would change A or B under the A/B
            self._say(f"an A/B is running: cannot {what} (escape stops it)", "warning")
            return
        self._busy += 1

        def work() -> None:
            error = ""
            result = ""
            try:
                result = fn(*args, **kwargs)
            except (IpctopError, OSError, RuntimeError) as exc:
                error = f"could not {what}: {exc}"
            try:
                self.call_from_thread(self._control_done, result, error)
            except RuntimeError:
                return  # the app closed while the engine worked: nobody to tell

        self.run_worker(work, thread=True, group="control", name=what)

    def _control_done(self, result: str, error: str) -> None:
        self._busy -= 1
        self.info = self.source.info
        if error:
            self._say(error, "error")
        elif result:
            self._say(result)

    def action_add_pair(self) -> None:
        self._control("add a pair", self.source.add_pair)

    def action_remove_pair(self) -> None:
        self._control("remove a pair", self.source.remove_pair)

    def action_choose_workload(self) -> None:
        choices = [(name, cls.summary or cls.original) for name, cls in WORKLOADS.items()]
        self.push_screen(
            ChoiceScreen("workload", choices, self.info.workload),
            lambda name: self._restart(workload=name),
        )

    def action_choose_placement(self) -> None:
        choices = [(p, PLACEMENT_HELP.get(p, "")) for p in PLACEMENTS]
        self.push_screen(
            ChoiceScreen("placement", choices, self.info.placement),
            lambda name: self._restart(placement=name),
        )

    def action_toggle_mode(self) -> None:
        other = [m for m in MODES if m != self.info.mode][0]
        self._restart(mode=other)

    def _restart(self, **change: str | None) -> None:
        ((key, value),) = change.items()
        if value is None or value == getattr(self.info, key):
            return
        self._control(f"switch {key} to {value}", self.source.reconfigure, **{key: value})

    def action_compare_next(self) -> None:
        name, skipped = next_mechanism(self.info)
        if name is None:
            why = "; ".join(f"{n}: {w}" for n, w in skipped)
            self._say(f"no other mechanism runs here ({why})", "warning")
            return
        note = f" (skipped {', '.join(n for n, _ in skipped)})" if skipped else ""

        def switch() -> str:
            return self.source.reconfigure(workload=name) + note

        self._control(f"compare with {name}", switch)

    # -- view actions ----------------------------------------------------------------
    def action_toggle_latency(self) -> None:
        self._latency_on = not self._latency_on
        self.latency_panel.display = self._latency_on
        self.query_one("#main").set_class(self._latency_on, "-latency")  # the side column
        self._schedule_redraw()
        self._say("latency panel on" if self._latency_on else "latency panel off")

    def action_show_matrix(self) -> None:
        from .screens.path_input import PathInputScreen

        self.push_screen(PathInputScreen("matrix record (ipctop matrix --json)"), self._open_matrix)

    def _open_matrix(self, path: str | None) -> None:
        import json

        from ..errors import RecordError
        from ..output.matrix_record import matrix_from_dict
        from .screens.matrix import MatrixScreen

        if not path:
            return
        try:
            with open(path, encoding="utf-8") as f:
                rec = matrix_from_dict(json.load(f), path)
        except (OSError, ValueError, RecordError) as exc:
            self._say(f"no matrix from {path}: {exc}", "error")
            return
        self.push_screen(MatrixScreen(rec))

    def action_toggle_curve_metric(self) -> None:
        panel = self.scaling_panel
        panel.metric = "p99" if panel.metric == "ops" else "ops"
        panel.redraw()
        what = "round-trip p99 by pairs (P)" if panel.metric == "p99" else "total ops/s by pairs"
        panel.border_subtitle = what
        self._schedule_redraw()
        self._say(f"scaling curve: {what}")

    def action_latency_histogram(self) -> None:
        from .screens.histogram import HistogramScreen

        pair = self.latency_panel.selected
        read = getattr(self.source, "latency_histogram", None)
        series = read(pair) if read is not None else None
        if not series:
            why = "not timed" if read is not None else "a record carries percentiles only"
            self._say(f"no histogram of pair {pair}: {why}", "warning")
            return
        note = "the ends' buckets (0.8 % wide), last interval, grouped on a log axis"
        self.push_screen(HistogramScreen(f"pair {pair}", series, note))

    def action_toggle_detail(self) -> None:
        self._detail_on = not self._detail_on
        self.detail_panel.display = self._detail_on
        # The layout gives it the side column (a class on #main: a screen on top changes self.screen).
        self.query_one("#main").set_class(self._detail_on, "-detail")
        # The sampler stops and starts to switch: a worker, and the latest wish wins.
        self.run_worker(self._switch_detail, thread=True, group="detail")
        self._say("detail on: extra /proc reads per sample" if self._detail_on else "detail off")

    def _switch_detail(self) -> None:
        try:
            self.source.set_detail(self._detail_on)
        except (IpctopError, OSError) as exc:
            try:
                self.call_from_thread(self._say, f"could not read the detail: {exc}", "error")
            except RuntimeError:
                return  # the app closed meanwhile: nobody to tell

    def action_pause(self) -> None:
        self._paused = not self._paused
        self._say("display paused" if self._paused else "display resumed")

    def action_reset_curve(self) -> None:
        self.session.reset_curve()
        self.scaling_panel.redraw()
        self._say("scaling curve reset")

    def action_all_cpus(self) -> None:
        cpus = self.cpus_panel
        cpus.show_all = not cpus.show_all
        self._schedule_redraw()

    def action_present(self) -> None:
        """Presentation mode on or off: its own screen, and a 7:1 contrast floor while shown."""
        floor = self.contrast_floor
        if self._present is None:
            self._present = PresentScreen()
            floor.set_minimum(PRESENT_CONTRAST)
            self.push_screen(self._present)  # it asks for a redraw once composed
        else:
            if self.screen is self._present:
                self.pop_screen()
            self._present = None
            floor.set_minimum(AA)
            self.refresh()
        self._schedule_redraw()

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    def action_screenshot(self) -> None:
        try:
            path = self.save_screenshot(path=self.screenshot_dir)
        except OSError as exc:
            self._say(f"could not save a screenshot in {self.screenshot_dir}: {exc}", "error")
            return
        self._say(f"screenshot saved to {os.path.abspath(path)}")

    def action_help(self) -> None:
        texts = {action: what for _, action, what in self.KEYS}
        self.push_screen(HelpScreen(key_sections(self, texts)))

    async def action_quit(self) -> None:
        self.exit(0)

    # -- auto-sweep ------------------------------------------------------------------
    def action_sweep(self) -> None:
        if self._sweep is not None:
            self._end_sweep("sweep stopped")
            return
        if not self.source.controllable:
            self._say(f"{self.info.source} source: cannot sweep", "warning")
            return
        target = len(self.info.cpus)
        pairs = self.source.pair_count()
        if pairs >= target:
            self._say(f"every CPU already has a pair ({pairs}/{target}); remove some first")
            return
        self._sweep = AutoSweep(target, self.sweep_step, time.monotonic(), pairs)
        self._sweep_timer = self.set_interval(0.25, self._sweep_tick)
        self._say(f"sweep: one pair every {self.sweep_step:g} s up to {target}")

    def _sweep_tick(self) -> None:
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

    def _end_sweep(self, message: str) -> None:
        if self._sweep_timer is not None:
            self._sweep_timer.stop()
        self._sweep = None
        self._sweep_timer = None
        self._say(message)

    @property
    def sweeping(self) -> bool:
        return self._sweep is not None

    # -- command palette -------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for key, action, what in self.KEYS:
            yield SystemCommand(f"{what} ({key})", f"key {key}", getattr(self, f"action_{action}"))

    # -- signals: quit cleanly on SIGTERM, SIGHUP and an outside SIGINT -----------------
    def _catch_signals(self) -> None:
        try:
            loop = asyncio.get_running_loop()
            for sig in HANDLED:
                self._old_signals[sig] = signal.getsignal(sig)
                loop.add_signal_handler(sig, self._on_signal, sig)
        except (RuntimeError, ValueError):
            # Not the main thread (an embedding test harness): the caller's handlers stay.
            self._old_signals.clear()

    def _on_signal(self, signum: int) -> None:
        if self.signalled is not None:
            return
        self.signalled = signum
        self._records_finish(interrupted=True)  # first: the exit below may never complete
        # After a hangup the terminal is gone and Textual's shutdown can block
        # forever on its writer queue; clean up now, and leave if it does.
        threading.Thread(
            target=_clean_then_leave, args=(self.source, signum), name="ipctop-exit", daemon=True
        ).start()
        self.exit(128 + signum)

    def _restore_signals(self) -> None:
        if not self._old_signals:
            return
        loop = asyncio.get_running_loop()
        for sig, old in self._old_signals.items():
            loop.remove_signal_handler(sig)
            signal.signal(sig, old)
        self._old_signals.clear()


def _shown(widget: Widget) -> bool:
    """Displayed, and so are all its ancestors (a collapsed column hides its panels)."""
    node: Any = widget
    while isinstance(node, Widget):
        if not node.display:
            return False
        node = node.parent
    return True


def _clean_then_leave(source: SampleSource, signum: int) -> None:
    source.stop()
    time.sleep(EXIT_GRACE)
    # Still here: the UI could not shut down (no terminal). The pairs are gone.
    os._exit(128 + signum)


@contextmanager
def _signals_deferred():
    """Cleanup must finish: hold signals off while the engine stops."""
    old = {sig: signal.signal(sig, signal.SIG_IGN) for sig in HANDLED}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def run_app(
    source: LiveSource,
    pairs: int,
    *,
    sweep_step: float = 5.0,
    theme: str | None = None,
    screenshot_dir: str = ".",
    record: str | None = None,
    baseline: Baseline | None = None,
    metrics: Callable[[Sample, Any, Session], None] | None = None,
    present: bool = False,
    make_app: Callable[..., IpctopApp] | None = None,
) -> int:
    """Start the pairs, run the app, always clean up. Options were checked by the caller."""
    app = (make_app or IpctopApp)(
        source,
        sweep_step=sweep_step,
        theme=theme,
        screenshot_dir=screenshot_dir,
        record=record,
        baseline=baseline,
        metrics=metrics,
        present=present,
    )
    with live_session():  # tells a served monitor that this box is busy
        try:
            source.open(pairs)
            code = app.run()
        finally:
            app._records_finish(interrupted=True)  # only if an exception got here first
            if app.record_message:
                print(f"ipctop: {app.record_message}", file=sys.stderr)
            with _signals_deferred():
                source.stop()
    if app.signalled is not None:
        raise Interrupted(app.signalled)
    crashed = app.crash_line()
    if crashed:
        raise IpctopError(f"{crashed}; every pair was stopped and removed")
    return int(code or 0)
