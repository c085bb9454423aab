"""The monitor on a load workload: groups and rooms added and removed live,
one threads row per unit, and the curve's flat ideal (real engine, real ends)."""

from __future__ import annotations

import asyncio
import os
import time

import psutil
import pytest
import scipy.stats  # noqa: F401  numpy's and scipy's BLAS each start a pool thread on import
from conftest import two_cpus

from ipctop.analysis.load_curve import flat_line, hold_pct
from ipctop.analysis.scaling import ScalingPoint
from ipctop.engine.config import RunConfig
from ipctop.engine.objects import _native
from ipctop.live.sources import LiveSource
from ipctop.tui.app import IpctopApp
from ipctop.tui.widgets.scaling_panel import ScalingPanel
from ipctop.tui.widgets.threads_panel import ThreadsPanel

CPUS = tuple(sorted(os.sched_getaffinity(0))[:2])
TIMEOUT = 30.0  # a loaded box starts 80 threads a room slowly, never wrongly

needs_native = pytest.mark.skipif(_native is None, reason="the native extension is not built")


async def wait_for(pilot, what, why: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {why}")
        await pilot.pause(0.05)


def test_the_flat_ideal_and_hold_are_the_seeds_volanomark_shape() -> None:
    # 2.6.4: 5850 messages/s at 15 rooms, 2857 at 60, 1024 at 75
    pts = [ScalingPoint(15, 5850.0), ScalingPoint(60, 2857.0), ScalingPoint(75, 1024.0)]
    assert flat_line(pts) == [(15, 5850.0), (60, 5850.0), (75, 5850.0)]
    assert round(hold_pct(pts, 60) or 0) == 49 and round(hold_pct(pts, 75) or 0) == 18
    # the lightest settled load is the base, not a settling one, and not load 1
    moving = [ScalingPoint(2, 9000.0, settled=False), *pts]
    assert flat_line(moving) == [(2, 5850.0), (15, 5850.0), (60, 5850.0), (75, 5850.0)]
    assert hold_pct(moving, 99) is None and flat_line([]) is None


@needs_native
@two_cpus
@pytest.mark.parametrize(
    ("workload", "extra", "ends", "unit"),
    [("hackbench", {"fds": 2}, 4, "group"), ("chat", {}, 80, "room")],
)
def test_plus_and_minus_add_and_remove_a_unit_shown_as_one_row(
    workload: str, extra: dict, ends: int, unit: str
) -> None:
    me = psutil.Process()
    threads_before = me.num_threads()
    fds_before = me.num_fds()
    config = RunConfig(workload=workload, cpus=CPUS, placement="cross", **extra)
    source = LiveSource(config, interval=0.2)
    source.open(1)

    def delivered(i: int) -> int:
        pair = source.engine.pairs[i]
        return sum(source.engine.counters.read(e.slot).rounds for e in pair.ends)

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            panel = app.query_one(ThreadsPanel)
            await pilot.press("plus")
            await wait_for(pilot, lambda: len(source.engine.pairs) == 2, f"the second {unit}")
            assert [len(p.ends) for p in source.engine.pairs] == [ends, ends]
            await wait_for(pilot, lambda: delivered(1) > 0, f"{unit} 1 to deliver")
            await wait_for(pilot, lambda: panel.row_count() == 2, f"one row a {unit}")
            assert panel.heading(100).split()[:2] == [unit, "cpus"]
            assert f"2 {unit}s, {2 * ends} threads" in str(panel.border_subtitle)
            scaling = app.query_one(ScalingPanel)
            assert scaling.unit == unit and f"by {unit}s" in str(scaling.border_subtitle)
            await pilot.press("minus")
            await wait_for(pilot, lambda: len(source.engine.pairs) == 1, f"the {unit} to go")
            still = delivered(0)
            await wait_for(pilot, lambda: delivered(0) > still, f"{unit} 0 to go on")
            await wait_for(pilot, lambda: panel.row_count() == 1, "one row again")
            await pilot.press("q")
            await wait_for(pilot, lambda: not app.is_running, "the app to exit")

    asyncio.run(go())
    assert source.engine._closed
    deadline = time.monotonic() + TIMEOUT
    while me.num_threads() > threads_before + 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert me.num_threads() <= threads_before + 1, (me.num_threads(), threads_before)
    assert me.num_fds() <= fds_before + 2  # the counter block's mapping holds none
    assert not [c for c in me.children() if c.status() != psutil.STATUS_ZOMBIE]
