"""The profile panel on the real engine and the real perf: f, n, g, and n/a (why)."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from conftest import run_cli, two_cpus

from ipctop.engine.config import RunConfig
from ipctop.engine.profile import perf_status
from ipctop.live.replay_source import ReplaySource
from ipctop.live.sources import LiveSource
from ipctop.output.records.record import Record, Step
from ipctop.output.records.record_io import read_record, write_record
from ipctop.tui.app import IpctopApp
from ipctop.tui.widgets.profile_panel import ProfilePanel

CPUS = tuple(sorted(os.sched_getaffinity(0))[:2])
TIMEOUT = 60.0  # perf starts in a second or two; on a loaded box its windows come late


async def wait_for(pilot, what, why: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {why}")
        await pilot.pause(0.1)


def live(workload: str) -> LiveSource:
    source = LiveSource(RunConfig(workload=workload, cpus=CPUS), interval=0.25)
    source.open(1)
    return source


@two_cpus
@pytest.mark.skipif(not perf_status(list(CPUS)).ok, reason="perf cannot profile here")
@pytest.mark.timeout(300)  # perf's windows come late on a loaded shared box
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


@two_cpus
@pytest.mark.skipif(not perf_status(list(CPUS)).ok, reason="perf cannot profile here")
@pytest.mark.timeout(300)  # perf's windows come late on a loaded shared box
def test_replay_of_a_sweep_record_shows_the_profile_its_step_kept(tmp_path) -> None:
    done = run_cli(
        "sweep", "-w", "sysv-sem", "--cpus", ",".join(map(str, CPUS)), "--max-pairs", "1",
        "--seconds", "2", "--repeat", "1", "--warmup", "0.5", "--profile", "-q",
        "--json", str(tmp_path / "sem.json"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = read_record(tmp_path / "sem.json")
    assert record.steps[0].profile and record.steps[0].profile.samples > 0

    async def scenario() -> None:
        source = ReplaySource(record, speed=50)
        app = IpctopApp(source)
        try:
            async with app.run_test(size=(140, 50)) as pilot:
                await pilot.press("f")
                panel = app.query_one(ProfilePanel)
                await wait_for(pilot, lambda: "recorded: " in panel.text.plain, "the profile")
                assert "semtimedop" in panel.text.plain, panel.text.plain
                await pilot.press("q")
        finally:
            source.stop()

    asyncio.run(scenario())


def test_replay_of_a_record_without_profiles_says_so(tmp_path) -> None:
    config = {"workload": "sysv-msg", "cpus": [0], "placement": "same", "mode": "threads"}
    config.update(engine="native", seconds=1.0, warmup=0.0, repeat=1, interval=None)
    rec = Record(kind="sweep", box={}, config=config)
    rec.steps.append(Step(pairs=1, total_ops_per_s=1000.0))
    write_record(tmp_path / "plain.json", rec)

    async def scenario() -> None:
        source = ReplaySource(read_record(tmp_path / "plain.json"), speed=50)
        app = IpctopApp(source)
        try:
            async with app.run_test(size=(140, 50)) as pilot:
                await pilot.press("f")
                panel = app.query_one(ProfilePanel)
                why = "n/a (this record carries no profile)"
                await wait_for(pilot, lambda: why in panel.text.plain, "n/a")
                await pilot.press("q")
        finally:
            source.stop()

    asyncio.run(scenario())
