"""In a lab guest: the monitor on every CPU of the guest, at 120x40 and 80x24 (Pilot).

Every CPU row must be reachable by scrolling the CPUs panel, and no row may
be wider than the panel. A screenshot of each size goes to the lab's out
folder (screenshots/), taken on the guest's kernel; its rates are emulation.
"""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from labguest import in_guest, lab_out

from ipctop.engine.config import RunConfig
from ipctop.live.sources import LiveSource
from ipctop.tui.app import IpctopApp
from ipctop.tui.widgets.cpus_panel import CpusPanel

pytestmark = [
    in_guest,
    pytest.mark.skipif(
        os.environ.get("IPCTOP_LAB_SCOPE") == "short",
        reason="full lab run only: under TCG on a loaded 2-CPU host one size took over 15 min",
    ),
    pytest.mark.timeout(1800),
]
TIMEOUT = 300.0  # seconds for the screen to fill: an emulated CPU is slow, never wrong


async def _wait(pilot, what, why: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not what():
        assert time.monotonic() < deadline, f"timed out waiting for {why}"
        await pilot.pause(0.2)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_every_cpu_row_is_reachable_and_fits(size: tuple[int, int]) -> None:
    cpus = tuple(sorted(os.sched_getaffinity(0)))
    source = LiveSource(RunConfig(cpus=cpus), interval=0.5)
    source.open(2)
    shots = lab_out("screenshots")

    async def go() -> None:
        app = IpctopApp(source, screenshot_dir=str(shots))
        async with app.run_test(size=size) as pilot:
            await _wait(pilot, lambda: app.session.latest is not None, "the first sample")
            await pilot.press("c")  # every CPU, not only the pairs'
            panel = app.query_one(CpusPanel)
            await _wait(pilot, lambda: panel.row_count() == len(cpus), "a row per CPU")
            assert panel.display and panel.size.height > 1, "the CPUs panel is hidden"
            width = panel.scrollable_content_region.width
            for i in range(panel.row_count()):
                pieces, _ = panel.row(i, width)
                text = "".join(t for t, _ in pieces)
                assert len(text) <= width, (i, text, width)
                assert text.startswith(f"cpu{cpus[i]:>3}"), text
            panel.scroll_end(animate=False)
            await pilot.pause(0.5)
            # What the panel draws now (line 0 is its heading): the last CPU's row is among it.
            frame = panel._frame_now()
            drawn = [
                "".join(t for t, _ in ln[0])
                for y in range(frame[1])
                if (ln := panel._line(y, frame))
            ]
            assert any(d.startswith(f"cpu{cpus[-1]:>3}") for d in drawn), drawn
            panel.scroll_home(animate=False)
            await pilot.pause(0.5)
            app.save_screenshot(f"monitor-{len(cpus)}cpu-{size[0]}x{size[1]}.svg", str(shots))

    asyncio.run(go())
    assert source.engine._closed, "closing the app stops the engine"
