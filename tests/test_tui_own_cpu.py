"""The footer's "ipctop: X % CPU" never covers a window too short to mean anything.

screenshots/scaling.svg once said 54 %: the screenshot's redraw read the
meter a few ms after the throttled redraw had, and a few ms of redraw work
over a few ms of window is a large share. A reading covers 0.5 s or more.
"""

from __future__ import annotations

import asyncio
import time

from test_tui_snapshots import settle

from ipctop.live.fixed_run import fixed_source
from ipctop.tui.app import IpctopApp
from ipctop.tui.own_cpu import OWN_CPU_MIN_WINDOW


def test_fake_redraw_now_keeps_the_last_reading_within_the_minimum_window() -> None:
    calls: list[float] = []

    def own_cpu(_tids: set[int]) -> float:
        calls.append(time.monotonic())
        return 1.0

    async def go() -> None:
        a = IpctopApp(fixed_source(), own_cpu=own_cpu)
        async with a.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.pause(OWN_CPU_MIN_WINDOW + 0.1)
            a.redraw_now()
            n = len(calls)
            a.redraw_now()  # moments later: the same reading, no new window
            a.redraw_now()
            assert len(calls) == n
            await pilot.pause(OWN_CPU_MIN_WINDOW + 0.1)
            a.redraw_now()
            assert len(calls) == n + 1
            gaps = [b - a for a, b in zip(calls[1:], calls[2:])]  # after the priming read
            assert all(g >= OWN_CPU_MIN_WINDOW for g in gaps), gaps

    asyncio.run(go())
