"""What the key mixins (*_actions.py, signal_exit.py) use of the app they are mixed into.

IpctopApp is the one host. The mixins annotate `self: AppHost`, so mypy checks each
mixin against this list, and checks IpctopApp against it wherever the app calls one
of their methods. The list holds the app's panels and helpers, the mixins' own state
and methods one of them calls on another, and the few Textual calls they make
(their signatures narrowed to the way the mixins call them).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

if TYPE_CHECKING:
    from textual.message import Message
    from textual.screen import Screen
    from textual.theme import Theme
    from textual.timer import Timer
    from textual.widget import Widget

    from ..live.ab_live import AbProgress, LiveAB
    from ..live.auto_sweep import AutoSweep
    from ..live.baseline import Baseline
    from ..live.profile_feed import ProfileFeed
    from ..live.record_switch import RecordSwitch
    from ..live.session import Session
    from ..live.source_protocol import RunInfo, SampleSource
    from .contrast_floor import ContrastFloor
    from .screens.present import PresentScreen
    from .widgets.ab_panel import AbPanel
    from .widgets.bands import BaselineBar
    from .widgets.cpus_panel import CpusPanel
    from .widgets.detail_panel import DetailPanel
    from .widgets.latency_panel import LatencyPanel
    from .widgets.scaling_panel import ScalingPanel

_W = TypeVar("_W", bound="Widget")
_R = TypeVar("_R")


class AppHost(Protocol):
    # -- the app's (app.py) ------------------------------------------------------------
    source: SampleSource
    info: RunInfo
    session: Session
    sweep_step: float
    screenshot_dir: str
    _generation: int
    cpus_panel: CpusPanel
    detail_panel: DetailPanel
    latency_panel: LatencyPanel
    scaling_panel: ScalingPanel
    baseline_bar: BaselineBar

    @property
    def contrast_floor(self) -> ContrastFloor: ...
    def _say(self, message: str, severity: str = "information") -> None: ...
    def _schedule_redraw(self) -> None: ...

    # -- the mixins' own state and what one calls of another -----------------------------
    # view_actions.py
    _paused: bool
    _detail_on: bool
    _latency_on: bool
    _present: PresentScreen | None

    def _open_matrix(self, path: str | None) -> None: ...
    def _switch_detail(self) -> None: ...
    def save_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str: ...

    # ab_actions.py
    ab_timing: dict[str, float]
    _ab: LiveAB | None
    _ab_finished: threading.Event | None
    _ab_progress: AbProgress | None
    _ab_sides: tuple[str, str]
    _ab_last_b: str

    @property
    def ab_running(self) -> bool: ...
    def _ab_start(self, text: str | None) -> None: ...
    def _ab_run(self) -> None: ...
    def _ab_show(self, p: AbProgress | None) -> None: ...
    def _ab_panel(self) -> AbPanel: ...

    # control_actions.py
    _busy: int

    def _control(self, what: str, fn: Callable[..., str], *args: Any, **kwargs: Any) -> None: ...
    def _control_done(self, result: str, error: str) -> None: ...
    def _restart(self, **change: str | None) -> None: ...
    def action_add_pair(self) -> None: ...

    # sweep_actions.py
    _sweep: AutoSweep | None
    _sweep_timer: Timer | None

    @property
    def sweeping(self) -> bool: ...
    def _start_sweep(self, target: int, pairs: int, message: str) -> None: ...
    def _sweep_tick(self) -> None: ...
    def _end_sweep(self, message: str) -> None: ...

    # profile_actions.py
    profile_feed: ProfileFeed | None
    _profile_on: bool
    _profile_sel: int
    _profile_callers: bool

    def _profile_start(self) -> None: ...
    def _profile_stop(self) -> None: ...

    # record_actions.py
    baseline: Baseline | None
    recording: RecordSwitch
    record_message: str
    _record_at_start: str | None
    _baseline_path: str | None
    _interrupted: bool
    _end_told: bool

    def _start_recording(self, path: str | None) -> None: ...
    def _load_baseline(self, path: str | None) -> None: ...
    def _show_baseline(self, baseline: Baseline | None) -> None: ...
    def _records_finish(self, interrupted: bool) -> None: ...

    # signal_exit.py
    signalled: int | None
    _old_signals: dict[int, Any] | None
    _rescue: threading.Thread | None
    _signal_loop: asyncio.AbstractEventLoop | None

    def _on_signal(self, signum: int) -> None: ...
    def _on_signal_anywhere(self, signum: int, _frame: object) -> None: ...

    # -- Textual's App, as the mixins call it ---------------------------------------------
    theme: str
    title: str

    @property
    def screen(self) -> Screen[Any]: ...
    @property
    def screen_stack(self) -> list[Screen[Any]]: ...
    @property
    def current_theme(self) -> Theme: ...
    @overload
    def query_one(self, selector: str) -> Widget: ...
    @overload
    def query_one(self, selector: type[_W]) -> _W: ...
    def push_screen(
        self, screen: Screen[_R], callback: Callable[[_R | None], None] | None = None
    ) -> object: ...
    def pop_screen(self) -> object: ...
    def run_worker(
        self,
        work: Callable[[], object],
        name: str | None = "",
        group: str = "default",
        *,
        thread: bool = False,
    ) -> object: ...
    def call_from_thread(self, callback: Callable[..., object], *args: Any) -> object: ...
    def post_message(self, message: Message) -> bool: ...
    def set_interval(self, interval: float, callback: Callable[[], object]) -> Timer: ...
    def exit(self, result: int | None = None) -> None: ...
    def refresh(self) -> object: ...
    def export_screenshot(self) -> str: ...
