"""The profile panel on the real engine and the real perf: f, n, g, and n/a (why)."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from conftest import two_cpus

from ipctop.engine.config import EngineConfig
from ipctop.engine.profile import perf_status
from ipctop.live.sources import LiveSource
from ipctop.tui.app import IpctopApp
from ipctop.tui.widgets.profile_panel import ProfilePanel

CPUS = tuple(sorted(os.sched_getaffinity(0))[:2])
TIMEOUT = 30.0  # perf starts in a second or two, slower on a loaded box


async def wait_for(pilot, what, why: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {why}")
        await pilot.pause(0.1)


def live(workload: str) -> LiveSource:
    source = LiveSource(EngineConfig(workload=workload, cpus=CPUS), interval=0.25)
    source.open(1)
    return source


@two_cpus
@pytest.mark.skipif(not perf_status(list(CPUS)).ok, reason="perf cannot profile here")
def test_p_shows_sysv_sem_symbols_and_g_their_callers() -> None:
    async def scenario() -> None:
        app = IpctopApp(live("sysv-sem"))
        async with app.run_test(size=(140, 50)) as pilot:
            await pilot.press("f")
            panel = app.query_one(ProfilePanel)
            await wait_for(pilot, lambda: "semtimedop" in panel.text.plain, "a semop symbol")
            assert "samples of the pairs" in panel.text.plain
            await wait_for(pilot, lambda: "perf: " in app.status_line.text.plain, "perf's cost")
            await pilot.press("g")
            await wait_for(pilot, lambda: "callers of" in panel.text.plain, "the callers")
            await pilot.press("f")
            await wait_for(pilot, lambda: app.profile_feed is None, "perf to stop")
            await pilot.press("q")

    asyncio.run(scenario())


def test_p_without_perf_on_path_says_na_why(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no perf binary

    async def scenario() -> None:
        app = IpctopApp(live("sysv-msg"))
        async with app.run_test(size=(140, 50)) as pilot:
            await pilot.press("f")
            panel = app.query_one(ProfilePanel)
            await wait_for(pilot, lambda: "n/a (perf missing)" in panel.text.plain, "n/a")
            assert app.source.pair_count() == 1  # the rest of ipctop goes on
            await pilot.press("q")

    asyncio.run(scenario())
