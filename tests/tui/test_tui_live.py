"""Pilot tests of the app on the real engine: keys change what the kernel runs."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from conftest import sysv_objects, two_cpus

from ipctop.engine.config import RunConfig
from ipctop.engine.workloads import WORKLOADS
from ipctop.live.sources import LiveSource
from ipctop.tui.app import IpctopApp
from ipctop.tui.widgets.threads_panel import ThreadsPanel

ALLOWED = sorted(os.sched_getaffinity(0))
CPUS = tuple(ALLOWED[:2])
TIMEOUT = 20.0  # seconds to wait for the engine or the screen; generous for a busy box


def run(coro: Awaitable[None]) -> None:
    asyncio.run(coro)  # type: ignore[arg-type]


async def wait_for(pilot, what: Callable[[], bool], why: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {why}")
        await pilot.pause(0.05)


def live(pairs: int = 1, **config: object) -> LiveSource:
    source = LiveSource(RunConfig(cpus=CPUS, **config), interval=0.2)  # type: ignore[arg-type]
    source.open(pairs)
    return source


def rounds(source: LiveSource, pair: int) -> list[int]:
    p = source.engine.pairs[pair]
    return [source.engine.counters.read(e.slot).rounds for e in p.ends]


def queue_ids(source: LiveSource, pair: int) -> set[str]:
    return {str(o.id) for o in source.engine.pairs[pair].res.objects}


def live_msg_ids() -> set[str]:
    return {ident for kind, _key, ident in sysv_objects() if kind == "msg"}


def pair_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("ipctop-pair")]


def test_plus_adds_a_pair_the_engine_runs_and_the_screen_shows() -> None:
    source = live(1)

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("plus")
            await wait_for(pilot, lambda: len(source.engine.pairs) == 2, "the second pair")
            pair = source.engine.pairs[1]
            assert pair.active and all(e.tid for e in pair.ends)
            before = rounds(source, 1)
            await wait_for(
                pilot,
                lambda: all(a > b for a, b in zip(rounds(source, 1), before)),
                "pair 1 to count rounds",
            )
            panel = app.query_one(ThreadsPanel)
            await wait_for(pilot, lambda: panel.row_count() == 4, "four thread rows")
            assert app.session.latest is not None and app.session.latest.pairs == 2

    run(go())
    assert source.engine._closed, "closing the app stops the engine"


def test_minus_removes_the_last_pair_and_its_objects() -> None:
    source = live(2)
    gone = queue_ids(source, 1)
    kept = queue_ids(source, 0)
    assert gone <= live_msg_ids()

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("minus")
            await wait_for(pilot, lambda: len(source.engine.pairs) == 1, "the pair to go")
            ids = live_msg_ids()
            assert not (gone & ids), "pair 1's queue is still in /proc/sysvipc/msg"
            assert kept <= ids, "pair 0 lost its queue"
            before = rounds(source, 0)
            await wait_for(
                pilot,
                lambda: all(a > b for a, b in zip(rounds(source, 0), before)),
                "pair 0 to keep counting",
            )
            assert len(pair_threads()) == 2

    run(go())


def test_workload_switch_restarts_cleanly_with_the_same_pair_count() -> None:
    source = live(2)
    old_engine = source.engine
    old_ids = queue_ids(source, 0) | queue_ids(source, 1)
    names = list(WORKLOADS)
    target = "sysv-sem"

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.5)
            await pilot.press("w")
            await wait_for(pilot, lambda: type(app.screen).__name__ == "ChoiceScreen", "chooser")
            for _ in range(names.index(target) - names.index("sysv-msg")):
                await pilot.press("down")
            await pilot.press("enter")
            await wait_for(
                pilot,
                lambda: source.engine is not old_engine and len(source.engine.pairs) == 2,
                "the restart",
            )
            assert old_engine._closed
            assert source.engine.config.workload == target
            assert source.engine.config.placement == old_engine.config.placement
            assert not (old_ids & {i for _k, _key, i in sysv_objects()})
            before = rounds(source, 1)
            await wait_for(
                pilot,
                lambda: all(a > b for a, b in zip(rounds(source, 1), before)),
                "the new pairs to run",
            )
            await wait_for(
                pilot,
                lambda: app.info.config.workload == target and app.session.latest,
                "new samples",
            )
            assert len(pair_threads()) == 4

    run(go())


def test_mode_switch_runs_the_pairs_as_processes() -> None:
    source = live(1)

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("m")
            await wait_for(
                pilot,
                lambda: source.engine.config.mode == "processes" and len(source.engine.pairs) == 1,
                "processes mode",
            )
            ends = source.engine.pairs[0].ends
            assert all(e.child and e.pid != os.getpid() for e in ends)
            assert all(Path(f"/proc/{e.pid}").exists() for e in ends)

    run(go())


def test_q_leaves_nothing_behind() -> None:
    before = sysv_objects()
    source = live(2)
    made = sysv_objects() - before
    assert made, "the pairs made no objects?"

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.5)
            await pilot.press("q")
            await wait_for(pilot, lambda: not app.is_running, "the app to exit")

    run(go())
    assert source.engine._closed
    assert not (made & sysv_objects())
    assert pair_threads() == []
    assert os.sched_getaffinity(0) == set(ALLOWED), "the monitor pin outlived the app"


@two_cpus
def test_monitor_moves_off_the_pairs_cpus() -> None:
    source = live(1)  # pair 0 on CPUS[0]

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.3)
            assert source.monitor_cpu == CPUS[1]
            assert os.sched_getaffinity(0) == {CPUS[1]}  # this (the UI) thread
            for end in source.engine.pairs[0].ends:
                assert os.sched_getaffinity(end.tid) == {CPUS[0]}
            await pilot.press("plus")
            await wait_for(pilot, lambda: len(source.engine.pairs) == 2, "the second pair")
            await wait_for(pilot, lambda: source.monitor_cpu is None, "the monitor to share")
            assert os.sched_getaffinity(0) == set(ALLOWED)

    run(go())


@two_cpus
def test_auto_sweep_adds_pairs_until_every_cpu_is_used() -> None:
    source = live(1)

    async def go() -> None:
        app = IpctopApp(source, sweep_step=0.5)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("s")
            assert app.sweeping
            await wait_for(pilot, lambda: len(source.engine.pairs) == len(CPUS), "the sweep")
            await wait_for(pilot, lambda: not app.sweeping, "the sweep to finish")
            assert {p.pairs for p in app.session.points()} >= {len(CPUS)}
            assert len(source.engine.pairs) == len(CPUS)  # it stopped at one pair per CPU

    run(go())
