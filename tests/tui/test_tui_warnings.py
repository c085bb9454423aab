"""Engine warnings reach the TUI user: each once, as a notification, or on stderr at the end."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable

import pytest

from ipctop.engine.config import RunConfig
from ipctop.live.sources import LiveSource
from ipctop.tui.app import IpctopApp

CPU = (sorted(os.sched_getaffinity(0))[0],)
TIMEOUT = 20.0


async def wait_for(pilot, what: Callable[[], object], why: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {why}")
        await pilot.pause(0.05)


def told(app: IpctopApp, text: str) -> int:
    """Notifications holding `text` that the app raised (Textual 8's store of them)."""
    return sum(text in str(n.message) for n in app._notifications)


def live(pairs: int = 1) -> LiveSource:
    source = LiveSource(RunConfig("sysv-msg", cpus=CPU), interval=0.1)
    source.open(pairs)
    return source


async def more_samples(pilot, app: IpctopApp, n: int) -> None:
    target = app.session.count + n
    await wait_for(pilot, lambda: app.session.count >= target, f"{n} more samples")


def test_an_engine_warning_outside_any_sample_is_a_notification_once() -> None:
    # What _join says when an end outlives its stop: logged by the engine, in no sample.
    planted = "pair 0 A: thread did not stop in time (planted)"
    source = live()

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await more_samples(pilot, app, 2)
            source.engine.events.append(planted)
            await wait_for(pilot, lambda: told(app, planted), "the notification")
            await more_samples(pilot, app, 5)
            assert told(app, planted) == 1
            assert app.session.count >= 7

    try:
        asyncio.run(go())
    finally:
        source.stop()


def test_a_queue_removed_with_ipcrm_is_a_notification_once() -> None:
    native = pytest.importorskip("ipctop._native", reason="needs the native engine")
    source = live()

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await more_samples(pilot, app, 2)
            victim = source.engine.pairs[0].res.objects[0]
            native.rmid("msg", victim.id)  # as `ipcrm -q` would
            await wait_for(pilot, lambda: told(app, "pair 0 failed"), "the failure notification")
            await more_samples(pilot, app, 5)
            assert told(app, "pair 0 failed") == 1
            assert told(app, "removed externally") == 1

    try:
        asyncio.run(go())
    finally:
        source.stop()


def test_warnings_of_the_final_stop_are_left_for_stderr_each_once() -> None:
    source = live()
    got = []
    source.start(lambda s, _g: got.append(s))
    try:
        early = "early warning (planted)"
        source.engine.events.append(early)
        deadline = time.monotonic() + TIMEOUT
        while not any(early in s.events for s in got) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sum(early in s.events for s in got) == 1
        source.detach()
        late = "pair 0 A: killed after 5 s (planted)"
        source.engine.events.append(late)
        source.engine.events.append(early)  # a stopping engine repeats its reaper's words
    finally:
        source.stop()
    assert source.unsaid_warnings() == [late]
    assert source.unsaid_warnings() == []


def test_a_restart_keeps_the_old_engines_last_warnings() -> None:
    source = live()
    got = []
    source.start(lambda s, _g: got.append(s))
    try:
        old = source.engine
        planted = "pair 0 B: thread did not stop in time (planted, old engine)"
        source.detach()  # no sample of the old engine can carry it now
        old.events.append(planted)
        source.reconfigure(placement="free")
        assert source.engine is not old
        source.start(lambda s, _g: got.append(s))  # the new engine's samples
        deadline = time.monotonic() + TIMEOUT
        while not any(planted in s.events for s in got) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sum(planted in s.events for s in got) == 1
    finally:
        source.stop()
