"""Keys W and w: one scaling curve per mechanism, on the real engine and a fake fixed run."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from conftest import sysv_objects
from test_tui_layout import comparison_settled

from ipctop.engine.config import RunConfig
from ipctop.engine.sample import Sample, ThreadSample
from ipctop.live.fixed_run import INFO, fixed_comparison
from ipctop.live.mechanisms import comparable, next_mechanism, why_not
from ipctop.live.session import Session
from ipctop.live.sources import LiveSource
from ipctop.tui.app import IpctopApp

CPUS = tuple(sorted(os.sched_getaffinity(0))[:2])
TIMEOUT = 60.0  # seconds for a reading to settle (CV < 5 % over 3 s) on a busy box


def _sample(t: float, pairs: int, per_pair: float) -> Sample:
    threads = tuple(
        ThreadSample(p, role, 100 + 2 * p + (role == "B"), p, p, 0, per_pair)
        for p in range(pairs)
        for role in "AB"
    )
    return Sample(t, 0.5, pairs, threads, sum(x.ops_per_s for x in threads))


def _settle(s: Session, pairs: int, per_pair: float, t0: float) -> float:
    t = t0
    for _ in range(10):
        t += 0.5
        s.feed(_sample(t, pairs, per_pair))
    return t


def test_a_workload_switch_keeps_each_mechanisms_curve_and_r_resets_all() -> None:
    msg = Session(workload="sysv-msg")
    t = _settle(msg, 1, 100.0, 0.0)
    t = _settle(msg, 2, 90.0, t)
    assert [p.pairs for p in msg.points() if p.settled] == [1, 2]
    futex = Session(workload="futex")
    futex.carry_curves(msg)
    assert futex.points() == []  # futex starts its own curve
    assert [(p.pairs, p.total_ops_per_s) for p in futex.compared()["sysv-msg"]] == [
        (1, 200.0),
        (2, 360.0),
    ]
    _settle(futex, 1, 300.0, t)
    back = Session(workload="sysv-msg")
    back.carry_curves(futex)
    assert [p.pairs for p in back.points()] == [1, 2], "sysv-msg resumes its own curve"
    assert list(back.compared()) == ["futex"]
    back.reset_curve()
    assert back.points() == [] and back.compared() == {}


def test_fake_unsettled_points_are_not_compared() -> None:
    s = Session(workload="pipe")
    s.feed(_sample(0.5, 1, 10.0))
    s.feed(_sample(1.0, 1, 30.0))
    assert s.points() and not any(p.settled for p in s.points())
    other = Session(workload="socket")
    other.carry_curves(s)
    assert other.compared() == {}


def test_next_mechanism_skips_refusals_and_non_pairs_with_reasons() -> None:
    info = INFO.changed(workload="signal")  # next in the registry: spin, refused on one CPU
    name, skipped = next_mechanism(info)
    assert name == "spin-yield"
    assert [n for n, _ in skipped] == ["spin"]
    assert "placement same is refused" in skipped[0][1]
    assert why_not("sysv-lifecycle", INFO) == "not a ping-pong pair"
    assert why_not("sysv-sem-multi", INFO) == "not a ping-pong pair"
    assert why_not("spin", INFO.changed(placement="cross")) is None
    assert why_not("spin", INFO.changed(engine="python")) is not None
    assert comparable(INFO, INFO.changed(workload="futex"))
    assert not comparable(INFO, INFO.changed(workload="futex", placement="cross"))


# The real engine's part of W: the restart on the next mechanism and the old run's
# curve kept whole. Settled points are not waited for: on the 12-07 host one pair's
# rate jumps between 0.5M and 0.8M rounds/s as the other vCPU idles or not (the C
# reference loop does too), so this test skipped on every run when it waited for a
# CV under 5 %. Which points compare (settled ones) is the fake tests' part above.
@pytest.mark.timeout(4 * TIMEOUT)
def test_W_switches_mechanism_and_keeps_the_old_curve_on_the_real_engine() -> None:
    before = sysv_objects()
    source = LiveSource(RunConfig(cpus=CPUS[:1]), interval=0.2)
    source.open(1)
    old_engine = source.engine

    async def wait_for(pilot, what, why: str) -> None:
        start = time.monotonic()
        while not what():
            assert time.monotonic() < start + TIMEOUT, f"waited {TIMEOUT:.0f} s for {why}"
            await pilot.pause(0.05)

    async def go() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: len(app.session.points()) > 0, "a sysv-msg point")
            curve = app.session.curve
            assert [p.pairs for p in curve.points()] == [1]
            await pilot.press("W")
            await wait_for(
                pilot,
                lambda: source.engine is not old_engine and len(source.engine.pairs) == 1,
                "the restart",
            )
            assert source.engine.config.workload == "sysv-sem"  # next in the registry
            assert old_engine._closed
            # app.info follows the engine as soon as the restart returns; the
            # session changes with the first sample of the new run.
            await wait_for(pilot, lambda: app.session.workload == "sysv-sem", "sysv-sem samples")
            assert app.info.config.workload == "sysv-sem"
            assert app.session.others["sysv-msg"] is curve, "the old run's curve, kept whole"
            assert [p.pairs for p in curve.points()] == [1]
            assert app.session.curve is not curve
            await wait_for(pilot, lambda: len(app.session.points()) > 0, "a sysv-sem point")
            await pilot.press("r")
            # Every mechanism's curve is gone (the running one starts again with the
            # next sample, so its own points are not checked here: the fake test does).
            assert app.session.compared() == {} and app.session.others == {}

    app = IpctopApp(source)
    asyncio.run(go())
    assert source.engine._closed
    assert not (sysv_objects() - before), "either mechanism left an object behind"


def test_fake_fixed_comparison_two_curves(snap_compare) -> None:
    app = IpctopApp(fixed_comparison(), own_cpu=lambda _tids: 1.4)
    assert snap_compare(app, terminal_size=(120, 40), run_before=comparison_settled)
