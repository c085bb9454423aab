"""The profile panel's keys: f shows it (and starts perf), n selects, g shows callers.

perf starts on a worker thread (the probe runs `perf --version`), its windows
arrive on the recorder's thread and reach the UI as messages, like samples.
"""

from __future__ import annotations

from textual.message import Message

from ..engine.profile import ProfileWindow
from ..live.profile_feed import ProfileFeed
from .host import AppHost
from .widgets.profile_panel import ProfilePanel


class ProfileWindowArrived(Message):
    def __init__(self, window: ProfileWindow) -> None:
        super().__init__()
        self.window = window


class ProfileActions:
    """Uses the app's source, session, _say, _schedule_redraw, run_worker, query_one."""

    profile_feed: ProfileFeed | None = None
    _profile_on = False
    _profile_sel = 0
    _profile_callers = False

    def action_toggle_profile(self: AppHost) -> None:
        panel = self.query_one(ProfilePanel)
        self._profile_on = not self._profile_on
        panel.display = self._profile_on
        self.query_one("#main").set_class(self._profile_on, "-profile")  # the side column
        if not self._profile_on:
            self.run_worker(self._profile_stop, thread=True, group="profile")
            self._say("profile off: perf stopped")
            return
        self.profile_feed = ProfileFeed(self.source)
        self.run_worker(self._profile_start, thread=True, group="profile")
        self._schedule_redraw()

    def _profile_start(self: AppHost) -> None:
        feed = self.profile_feed
        if feed is None:
            return

        def arrived(window: ProfileWindow) -> None:
            self.post_message(ProfileWindowArrived(window))

        line = feed.start(arrived)
        try:
            if line:
                self.call_from_thread(self._say, line, "warning")
            self.call_from_thread(self._schedule_redraw)
        except RuntimeError:
            feed.stop()  # the app closed while perf started

    def _profile_stop(self: AppHost) -> None:
        feed, self.profile_feed = self.profile_feed, None
        if feed is not None:
            feed.stop()

    def on_profile_window_arrived(self: AppHost, msg: ProfileWindowArrived) -> None:
        self._schedule_redraw()

    def action_next_symbol(self: AppHost) -> None:
        self._profile_sel += 1
        self._schedule_redraw()

    def action_callers(self: AppHost) -> None:
        self._profile_callers = not self._profile_callers
        self._schedule_redraw()

    def _profile_redraw(self: AppHost) -> None:
        if not self._profile_on or self.profile_feed is None:
            return
        latest = self.session.latest
        self.query_one(ProfilePanel).update_from(
            self.profile_feed,
            latest.pairs if latest is not None else None,
            self._profile_sel,
            self._profile_callers,
        )

    def profile_note(self: AppHost) -> str:
        """For the status line: what the profile costs while it runs."""
        feed = self.profile_feed
        if not self._profile_on or feed is None or not feed.live:
            return ""
        cost = feed.cost_pct
        return "perf: measuring" if cost is None else f"perf: {cost:.1f} % CPU"

    def _profile_unmount(self: AppHost) -> None:
        self._profile_stop()
