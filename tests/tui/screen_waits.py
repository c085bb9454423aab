"""Waits for the Pilot tests: on the state a test means, never on a fixed pause.

A fixed pause (or a fixed count of short ones) holds on a quiet box and not on
a loaded one: CI, running the whole suite, counted a repaint still pending from
before a spy was set (test_tui_virtual_rows), and a loop of 400 pauses of 10 ms
can run out before a slow loop has taken every sample in. Each wait here polls
with a deadline far beyond what a quiet box needs and says what never came.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen

TIMEOUT = 30.0  # seconds: generous, as a loaded box is slow, never wrong


async def until(
    pilot: Pilot[Any], what: Callable[[], object], why: str, timeout: float = TIMEOUT
) -> None:
    """Pause until what() holds; fail saying why after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, f"timed out waiting for {why}"
        await pilot.pause(0.02)


async def drawn(pilot: Pilot[Any], app: App[Any], timeout: float = TIMEOUT) -> None:
    """Wait until the screen has drawn everything asked of it: nothing to lay out,
    scroll or repaint, several polls in a row. A fixed pause is not enough under
    load (CI): the update timer may not have run yet, and a repaint still pending
    from before a spy was set would be counted against the step after it."""
    calm, deadline = 0, time.monotonic() + timeout
    while calm < 3:
        await pilot.pause(0.03)
        s = app.screen
        busy = s._layout_required or s._scroll_required or s._repaint_required or s._dirty_widgets
        calm = 0 if busy else calm + 1
        assert time.monotonic() < deadline, "the screen never finished drawing"


async def all_taken(pilot: Pilot[Any], want: int | None = None) -> None:
    """Until the app's session holds every sample its source delivered at start
    (a FixedSource's, or `want` of them): each is a message the loop takes in turn."""
    app: Any = pilot.app  # an IpctopApp: its session and source
    n = len(app.source.samples) if want is None else want
    await until(pilot, lambda: app.session.count >= n, f"{n} samples taken in")
    assert app.session.count == n


async def screen_up(pilot: Pilot[Any], kind: type[Screen[Any]]) -> None:
    """Until the app shows a screen of `kind` with every widget of it mounted, then
    drawn: a pushed screen composes and mounts over several turns of the loop, which
    a loaded box may not run within a fixed pause."""
    app = pilot.app

    def up() -> bool:
        s = app.screen
        return isinstance(s, kind) and s.is_mounted and all(w.is_mounted for w in s.walk_children())

    await until(pilot, up, f"the {kind.__name__} up")
    await drawn(pilot, app)
