"""The monitor's A/B (key a) on the real engine: ABBA slots on the live pairs,
the running verdict on screen, and A put back however it ends."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from conftest import two_cpus
from test_tui_live import CPUS, live, pair_threads
from textual.events import Paste
from textual.widgets import Input

from ipctop.analysis.stats import IMPROVEMENT, NO_DIFFERENCE, REGRESSION, Difference, fmt_diff
from ipctop.engine.config import RunConfig
from ipctop.engine.outside_cpu import BUSY_PCT
from ipctop.errors import IpctopError, UsageError
from ipctop.live.ab_busy import BUSY_VERDICT
from ipctop.live.ab_live import ORDER, AbProgress, LiveAB, parse_change
from ipctop.tui.app import IpctopApp
from ipctop.tui.screens.prompts import AbInputScreen
from ipctop.tui.widgets.ab_panel import AbPanel, progress_bar

TIMEOUT = 180.0  # an A/B of three blocks restarts the pairs 12 times; a busy box is slow
# Stops after the Stein pilot (6 blocks) on any box: the precision asked for is no constraint.
# (A restart of the pairs took seconds on the loaded box: time for 2 blocks at least.)
QUICK = {"window": 0.5, "settle": 0.2, "precision_pct": 1e12, "max_seconds": 120.0}


async def wait_for(pilot, what: Callable[[], bool], why: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {why}")
        await pilot.pause(0.05)


def spy_placements(source) -> list[str]:
    """The placement of every restart, in order (the real reconfigure runs)."""
    seen: list[str] = []
    real = source.reconfigure

    def reconfigure(**changes):
        seen.append(changes.get("placement", source.engine.config.placement))
        return real(**changes)

    source.reconfigure = reconfigure
    return seen


async def answer_b(pilot, app: IpctopApp, b: str) -> None:
    """Key a, then B's options pasted over what the prompt offers, then enter.

    Pasted, not typed key by key: after every key Textual's pilot waits up to 1 s,
    twice, for the process's CPU time to stop advancing, and the live pairs' ends
    are threads of this process that never idle, so each typed character cost 2 s.
    A paste reaches the focused input as one event, as a terminal's bracketed
    paste does."""
    await pilot.press("a")
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, AbInputScreen) and isinstance(app.focused, Input),
        "the B prompt to take the keys",
    )
    field = app.screen.query_one(Input)
    assert field.value == app._ab_last_b  # the last B is offered again
    field.select_all()  # a paste replaces the selection
    app.post_message(Paste(b))
    await wait_for(pilot, lambda: field.value == b, "the pasted B")
    await pilot.press("enter")


async def start_ab(pilot, app: IpctopApp, b: str) -> None:
    await answer_b(pilot, app, b)
    await wait_for(pilot, lambda: app.ab_running, "the A/B to start")


@two_cpus
def test_key_a_runs_abba_shows_the_verdict_and_puts_a_back() -> None:
    source = live(1, placement="same")
    seen = spy_placements(source)
    done: list[int] = []

    async def go() -> None:
        app = IpctopApp(source)
        app.ab_timing = QUICK
        async with app.run_test(size=(120, 40)) as pilot:
            await start_ab(pilot, app, "--placement cross")
            await pilot.press("plus")  # refused while it runs: it would change A and B
            said = [str(n.message) for n in app._notifications]
            assert any("an A/B is running: cannot add a pair" in m for m in said), said
            assert len(source.engine.pairs) <= 1  # 0 while a slot restarts them, never 2
            await wait_for(pilot, lambda: app._ab_progress.done, "the A/B to finish")
            p = app._ab_progress
            if "did not start within" in p.why:  # the engine's start timeout, not the A/B's
                assert source.engine.config.placement == "same", "A is back even then"
                pytest.skip(f"the box was too loaded to restart the pairs: {p.why}")
            assert p.why in ("precision reached", "time up") and p.blocks >= 2, p
            done.append(p.blocks)
            assert p.difference is not None
            # ops/s on a busy box is not judged (test_a_busy_box_leaves_the_live_ab_unjudged...)
            assert p.verdict in (REGRESSION, IMPROVEMENT, NO_DIFFERENCE, BUSY_VERDICT)
            text = app.query_one(AbPanel).text.plain
            assert "A: --placement same · B: --placement cross" in text
            assert f"B/A: {fmt_diff(p.difference)} · {p.verdict}" in text
            assert f"{p.blocks} blocks" in text and "A is back" in text
            # A is back, with the pair it had, and it runs.
            assert source.engine.config.placement == "same"
            assert len(source.engine.pairs) == 1
            before = source.engine.counters.read(source.engine.ends()[0].slot).rounds
            await wait_for(
                pilot,
                lambda: source.engine.counters.read(source.engine.ends()[0].slot).rounds > before,
                "A's pair to count rounds again",
            )
            await pilot.press("escape")  # hides the result
            await wait_for(pilot, lambda: app._ab_progress is None, "the panel to hide")

    asyncio.run(go())
    # ABBA blocks, then A restored (the last restart is a no-op: A is already on).
    (blocks,) = done
    assert seen[: blocks * len(ORDER)] == ["same", "cross", "cross", "same"] * blocks, seen
    assert seen[-1] == "same"
    assert source.engine._closed and not pair_threads()


# An A/B that would run until stopped: these tests stop it in a B slot.
ENDLESS = {**QUICK, "precision_pct": 0.001, "max_seconds": 600.0}


async def in_a_b_slot(pilot, app: IpctopApp, source) -> None:
    await start_ab(pilot, app, "--placement cross")
    await wait_for(pilot, lambda: source.engine.config.placement == "cross", "a B slot to run")


@two_cpus
def test_escape_stops_the_ab_in_a_b_slot_and_puts_a_back() -> None:
    source = live(1, placement="same")

    async def go() -> None:
        app = IpctopApp(source)
        app.ab_timing = ENDLESS
        async with app.run_test(size=(120, 40)) as pilot:
            await in_a_b_slot(pilot, app, source)
            await pilot.press("escape")
            await wait_for(pilot, lambda: not app.ab_running, "the A/B to stop")
            assert app._ab_progress.done and app._ab_progress.why == "stopped"
            assert source.engine.config.placement == "same"
            assert "stopped after" in app.query_one(AbPanel).text.plain

    asyncio.run(go())
    assert source.engine._closed and not pair_threads()


@two_cpus
def test_quitting_during_an_ab_leaves_nothing_running() -> None:
    source = live(1, placement="same")

    async def go() -> None:
        app = IpctopApp(source)
        app.ab_timing = ENDLESS
        async with app.run_test(size=(120, 40)) as pilot:
            await in_a_b_slot(pilot, app, source)
            await pilot.press("q")

    asyncio.run(go())
    assert source.engine._closed and not pair_threads()


@two_cpus
def test_b_cpus_is_checked_against_the_box_not_the_pinned_monitor_thread() -> None:
    # Issue 27 #20: B "--cpus 0" was refused ("CPU 0 is not in the allowed set 1"): the
    # check read the affinity of the UI thread, which the monitor had pinned to CPU 1.
    source = live(1, placement="same")  # its pair on CPU 0, so the monitor moves to CPU 1

    async def go() -> None:
        app = IpctopApp(source)
        app.ab_timing = ENDLESS
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: source.monitor_cpu is not None, "the monitor to pin")
            pinned = os.sched_getaffinity(0)
            assert pinned == {source.monitor_cpu} and 0 not in pinned, pinned
            await answer_b(pilot, app, "--cpus 0")
            await pilot.pause(0.2)
            assert "not in the allowed set" not in (app._message or ""), app._message
            await wait_for(pilot, lambda: app.ab_running, "the A/B to start")
            assert app._ab.b == {"cpus": (0,)}
            await pilot.press("escape")
            await wait_for(pilot, lambda: not app.ab_running, "the A/B to stop")
            assert tuple(source.engine.config.cpus) == CPUS  # A is back

    asyncio.run(go())
    assert source.engine._closed and not pair_threads()


def test_bad_b_options_are_one_line_and_start_nothing() -> None:
    source = live(1)

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await start_ab_refused(pilot, app, "--placement nowhere")
            assert "nowhere" in app._message and not app.ab_running
            await start_ab_refused(pilot, app, "--placement same")
            assert "nothing to compare" in app._message
            assert app._ab_progress is None and source.engine.config.placement == "same"

    async def start_ab_refused(pilot, app, b: str) -> None:
        await answer_b(pilot, app, b)
        await pilot.pause(0.2)

    asyncio.run(go())


def test_b_options_become_changed_config_fields() -> None:
    c = RunConfig(cpus=(0,))
    assert parse_change("--placement free", c) == {"placement": "free"}
    assert parse_change("--think-ns=2000 -w sysv-msg", c) == {"think_ns": 2000}
    assert parse_change("--no-latency --size 64", c) == {"latency": False, "size": 64}
    for text, why in [
        ("--placement", "needs a value"),
        ("--pairs 2", "+ and - change the pairs"),
        ("--bogus 1", "unknown option '--bogus'"),
        ("--think-ns lots", "not a whole number"),
        ("--size 0", "must be 1 or more"),
        ("--think-ns 0", "nothing to compare"),
        ("--placement 'cross", "No closing quotation"),
        ("--mode sideways", "sideways"),
    ]:
        with pytest.raises(UsageError, match=re.escape(why)):
            parse_change(text, c)


def test_stop_rule_and_progress_bar() -> None:
    p = AbProgress(1, "B", 5, 15.0, 60.0, None, None, None)
    assert p.fraction == 0.25 and progress_bar(p.fraction, 8) == "██░░░░░░"
    assert AbProgress(3, "", 12, 20.0, 60.0, None, None, None, done=True).fraction == 1.0


def test_fake_failed_restart_ends_the_ab_and_puts_a_back_with_its_pairs() -> None:
    """A B restart that fails part way (faked: the real restart, then one pair
    removed and an error, as an overloaded box's start timeout leaves it)."""
    source = live(2, placement="same")
    real = source.reconfigure

    def reconfigure(**changes):
        out = real(**changes)
        if changes.get("think_ns"):
            source.remove_pair()
            raise IpctopError("fake: pair 1 A did not start")
        return out

    source.reconfigure = reconfigure
    seen: list[AbProgress] = []
    try:
        ab = LiveAB(source, parse_change("--think-ns 1000", source.engine.config), **QUICK,
                    on_progress=seen.append)  # fmt: skip
        last = ab.run()
        assert last.done and last.why == "error: fake: pair 1 A did not start"
        assert seen[-1] is last and [p.slot for p in seen[:2]] == ["A", "B"]
        assert source.engine.config.think_ns == 0 and source.pair_count() == 2
        assert all(p.active for p in source.engine.pairs)
    finally:
        source.stop()
    assert not pair_threads()


@contextmanager
def strangers(n: int) -> Iterator[None]:
    """n processes spinning on the CPUs that this one did not start (their parent, a
    shell, exits at once): the box's other load, which the A/B must not count as its own."""
    spin = f"{sys.executable} -c 'while True: pass' >/dev/null 2>&1 & echo $!"
    pids = [
        int(subprocess.run(["sh", "-c", spin], capture_output=True, text=True, check=True).stdout)
        for _ in range(n)
    ]
    try:
        time.sleep(0.3)
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGKILL)


@two_cpus
def test_a_busy_box_leaves_the_live_ab_unjudged_and_the_panel_says_why() -> None:
    source = live(1, placement="same")
    seen: list[AbProgress] = []
    try:
        with strangers(2):
            ab = LiveAB(source, parse_change("--placement cross", source.engine.config),
                        **{**QUICK, "max_seconds": 20.0}, on_progress=seen.append)  # fmt: skip
            last = ab.run()
    finally:
        source.stop()
    assert not pair_threads()
    if "did not start within" in last.why:
        pytest.skip(f"the box was too loaded to restart the pairs: {last.why}")
    assert last.outside_pct is not None and last.outside_pct > BUSY_PCT, last
    assert "other processes used" in last.not_judged and "--metric cpu" in last.not_judged
    assert last.verdict == BUSY_VERDICT
    panel = AbPanel()
    panel.update_from("--placement same", "--placement cross", last)
    text = panel.text.plain
    assert BUSY_VERDICT in text and "others used" in text, text
    for verdict in (REGRESSION, IMPROVEMENT, NO_DIFFERENCE):
        assert verdict not in text, text


def test_a_quiet_progress_keeps_the_difference_verdict() -> None:
    d = Difference(3, 3, 0.9, 0.85, 0.95, 0.01)
    p = AbProgress(3, "", 12, 20.0, 60.0, d, 1.0, 0.9, done=True, outside_pct=2.0)
    assert p.verdict == REGRESSION and not p.not_judged
    panel = AbPanel()
    panel.update_from("a", "b", p)
    assert f"· {REGRESSION} ·" in panel.text.plain and "others used 2 %" in panel.text.plain
