"""In a lab guest: the monitor on every CPU of the guest, at 120x40 and 80x24 (Pilot).

Every CPU row must be reachable by scrolling the CPUs panel, and no row may
be wider than the panel; the same for the IPI rows of the context switches
panel where the size shows it. A screenshot of each size goes to the lab's out
folder (screenshots/), taken on the guest's kernel; its rates are emulation.
"""

from __future__ import annotations

import asyncio
import os
import re
import time

import pytest
from labguest import in_guest, lab_out

from ipctop.engine.config import RunConfig
from ipctop.live.sources import LiveSource
from ipctop.tui.app import IpctopApp
from ipctop.tui.widgets.cpus_panel import CpusPanel
from ipctop.tui.widgets.rows_view import RowsView
from ipctop.tui.widgets.switches_panel import SwitchesPanel

pytestmark = [
    in_guest,
    pytest.mark.skipif(
        os.environ.get("IPCTOP_LAB_SCOPE") == "short",
        reason="full lab run only: under TCG on a loaded 2-CPU host one size took over 15 min",
    ),
    pytest.mark.timeout(1800),
]
TIMEOUT = 300.0  # seconds for the screen to fill: an emulated CPU is slow, never wrong
SHOT_AFTER = 6  # readings (3 s at 0.5 s) before the screenshot
IPI_ROW = re.compile(r"cpu(\d+) ")  # the switches panel's "cpu12      3.1k   20" rows


async def _wait(pilot, what, why: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not what():
        assert time.monotonic() < deadline, f"timed out waiting for {why}"
        await pilot.pause(0.2)


def _texts(panel: RowsView, width: int) -> list[str]:
    """Every row of the panel as its text, scrolled into view or not."""
    return ["".join(t for t, _ in panel.row(i, width)[0]) for i in range(panel.row_count())]


def _drawn(panel: RowsView) -> list[str]:
    """What the panel draws now (line 0 is its heading)."""
    frame = panel._frame_now()
    return ["".join(t for t, _ in ln[0]) for y in range(frame[1]) if (ln := panel._line(y, frame))]


async def _ipi_rows_reach_every_cpu(pilot, panel: SwitchesPanel, cpus: tuple[int, ...]) -> None:
    """The context switches panel's IPI rows: one per CPU, in order, each whole, the last
    one drawn once scrolled to."""
    width = panel.scrollable_content_region.width

    def ipis() -> list[str]:
        return [t for t in _texts(panel, width) if IPI_ROW.match(t)]

    await _wait(pilot, lambda: len(ipis()) == len(cpus), "an IPI row per CPU")
    rows = ipis()
    assert [int(IPI_ROW.match(r)[1]) for r in rows] == list(cpus), rows
    assert all(len(r) <= width for r in rows), (width, rows)
    panel.scroll_to(y=_texts(panel, width).index(rows[-1]), animate=False)
    await pilot.pause(0.5)
    drawn = _drawn(panel)
    assert any(d.startswith(f"cpu{cpus[-1]} ") for d in drawn), drawn


@pytest.mark.parametrize(
    "size",
    [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")],
)
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
            # A few readings more, so that the screenshot's histories say something.
            seen = app.session.count
            await _wait(pilot, lambda: app.session.count >= seen + SHOT_AFTER, "more readings")
            # Taken before any check: a screen that fails one is the evidence of how.
            app.save_screenshot(f"monitor-{len(cpus)}cpu-{size[0]}x{size[1]}.svg", str(shots))
            assert panel.display and panel.size.height > 1, "the CPUs panel is hidden"
            width = panel.scrollable_content_region.width
            for i, text in enumerate(_texts(panel, width)):
                assert text.startswith(f"cpu{cpus[i]:>3}"), text
                assert len(text) <= width, (i, text, width)
            panel.scroll_end(animate=False)
            await pilot.pause(0.5)
            drawn = _drawn(panel)
            assert any(d.startswith(f"cpu{cpus[-1]:>3}") for d in drawn), drawn
            switches = app.query_one(SwitchesPanel)
            # 120x40 shows it beside the CPUs; 80x24 has no room for it (a layout rule).
            if switches.display and switches.size.height > 1:
                await _ipi_rows_reach_every_cpu(pilot, switches, cpus)

    asyncio.run(go())
    assert source.engine._closed, "closing the app stops the engine"
