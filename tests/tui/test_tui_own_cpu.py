"""The footer's "ipctop: X % CPU" never covers a window too short to mean anything.

screenshots/scaling.svg once said 54 %: the screenshot's redraw read the
meter a few ms after the throttled redraw had, and a few ms of redraw work
over a few ms of window is a large share. A reading covers 0.5 s or more.
"""

from __future__ import annotations

import asyncio
import re
import time

import pytest
from test_tui_snapshots import settle

from ipctop.analysis.stats import summarize
from ipctop.live.fixed_run import fixed_source
from ipctop.tui.app import IpctopApp
from ipctop.tui.own_cpu import (
    OWN_CPU_BLOCK,
    OWN_CPU_EVERY,
    OWN_CPU_MIN_BLOCKS,
    OWN_CPU_MIN_WINDOW,
    OWN_CPU_SPAN,
    TICK_S,
    OwnCpu,
    span_figure,
)


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


def _fed(values: list[float], every: float = 1.0) -> OwnCpu:
    """An OwnCpu fed `values` one reading per `every` seconds of a planted clock."""
    it = iter([None, *values])  # prime() reads once, as the meter's first read primes it
    meter = OwnCpu(lambda _tids: next(it))
    meter.prime(set, 0.0)
    for i in range(len(values)):
        meter.update(set, (i + 1) * every)
    return meter


def test_the_footer_figure_is_the_median_of_3_s_blocks_over_the_span() -> None:
    # 1 s readings of 0, 3, 6 % repeating: every 3 s block is 3 % (ticks too coarse
    # to say more in one second), so the span's figure is 3 % with a tight interval.
    readings = [0.0, 3.0, 6.0] * 5
    meter = _fed(readings)
    fig = meter.figure()
    assert fig is not None
    assert fig.summary.n == len(readings) // OWN_CPU_BLOCK == 5
    assert fig.summary.median == pytest.approx(3.0)
    assert fig.span_s == pytest.approx(15.0)
    assert meter.text() == "3.0 % [3.0, 3.0] of a CPU over 15 s, n=5 × 3 s"
    # The same blocks through summarize directly: the interval the footer prints.
    direct = summarize([3.0] * 5)
    assert (fig.summary.low, fig.summary.high) == (direct.low, direct.high)


def test_before_enough_blocks_the_footer_gives_the_last_reading() -> None:
    meter = _fed([2.0] * (OWN_CPU_BLOCK * OWN_CPU_MIN_BLOCKS - 1))
    assert meter.figure() is None and meter.text() == "2.0 % CPU"
    assert OwnCpu(lambda _t: None).text() == "measuring"


def test_the_span_drops_readings_older_than_it_and_weights_by_seconds() -> None:
    # 20 readings at 10 %, then OWN_CPU_SPAN seconds at 4 %: the 10s are gone.
    n = int(OWN_CPU_SPAN)
    meter = _fed([10.0] * 20 + [4.0] * n)
    fig = meter.figure()
    assert fig is not None and fig.summary.median == pytest.approx(4.0)
    assert fig.span_s <= OWN_CPU_SPAN and fig.summary.n == n // OWN_CPU_BLOCK
    # A block's value is its CPU over its seconds: 0.5 s at 8 % + 2 x 1 s at 2 %.
    got = span_figure([(0.5, 8.0), (1.0, 2.0), (1.0, 2.0)] * OWN_CPU_MIN_BLOCKS)
    assert got is not None
    assert got.summary.median == pytest.approx((0.5 * 8 + 2 * 2) / 2.5)


def test_a_spread_span_gets_a_wide_interval_around_its_median() -> None:
    # Blocks of 5 and 15 %: the interval must say the figure is unsure.
    readings = [5.0] * 9 + [15.0] * 9 + [5.0] * 9
    fig = _fed(readings).figure()
    assert fig is not None and fig.summary.n == 9
    assert fig.summary.low is not None and fig.summary.high is not None
    assert fig.summary.low <= 5.0 + 1e-9 and fig.summary.high >= 10.0


def test_live_footer_states_the_span_once_it_has_one() -> None:
    # The app's own OwnCpu, fed planted readings: the status line prints its text.
    async def go() -> None:
        a = IpctopApp(fixed_source(), own_cpu=lambda _t: 2.0)
        async with a.run_test(size=(160, 40)) as pilot:
            await settle(pilot)
            t0 = a._own_cpu._at
            for i in range(OWN_CPU_BLOCK * OWN_CPU_MIN_BLOCKS):
                a._own_cpu.update(set, t0 + (i + 1) * OWN_CPU_EVERY)
            a._own_cpu._at = time.monotonic()  # the app's next reading is a second away
            a.redraw_now()
            await pilot.pause(0.1)
            line = str(a.status_line.render())
            assert "ipctop: 2.0 % [2.0, 2.0] of a CPU over 15 s, n=5 × 3 s" in line, line

    asyncio.run(go())


def test_a_block_without_a_tick_reads_as_half_a_tick_not_as_no_log() -> None:
    # An idle monitor: most 3 s blocks get no 10 ms tick at all. The interval
    # stays finite and the figure is at /proc's resolution, not 0 with no log.
    half_tick_pct = 50.0 * TICK_S / (OWN_CPU_BLOCK * OWN_CPU_EVERY)
    readings = [0.0] * (OWN_CPU_BLOCK * 8) + [100.0 * TICK_S] * OWN_CPU_BLOCK
    fig = _fed(readings).figure()
    assert fig is not None and fig.summary.median == pytest.approx(half_tick_pct)
    # Nine correlated blocks (AR(1)-corrected at the prior r): the interval may reach
    # past the one block that saw a tick, but stays finite and near it.
    assert fig.summary.high is not None and fig.summary.high <= 2 * 100.0 * TICK_S


def test_the_footer_figure_lies_inside_its_interval_and_says_its_span() -> None:
    # Skewed blocks (2, 2, 2, 2, 9 %, twice): their median (2) is not the estimate
    # summarize builds the interval around; the figure printed is that estimate.
    readings = ([2.0] * 12 + [9.0] * 3) * 2
    fig = _fed(readings).figure()
    assert fig is not None and fig.summary.low is not None and fig.summary.high is not None
    assert fig.summary.median != pytest.approx(fig.summary.figure)
    assert fig.summary.low <= fig.summary.figure <= fig.summary.high
    m = re.fullmatch(
        r"(\d+\.\d) % \[(\d+\.\d), (\d+\.\d)\] of a CPU over (\d+) s, n=(\d+) × 3 s", fig.text()
    )
    assert m is not None, fig.text()
    figure, low, high, span, n = (float(g) for g in m.groups())
    assert low <= figure <= high and figure == round(fig.summary.figure, 1)
    assert span == 30 and n == 10


def test_the_footer_figure_is_worked_out_once_per_reading_not_per_redraw() -> None:
    meter = OwnCpu(lambda _tids: 3.0)
    meter.prime(set, 0.0)
    for i in range(OWN_CPU_BLOCK * OWN_CPU_MIN_BLOCKS):
        meter.update(set, (i + 1) * OWN_CPU_EVERY)
    first = meter.figure()
    assert first is not None and meter.figure() is first  # no reading between: the same
    meter.update(set, meter._at + OWN_CPU_EVERY)  # a new reading: worked out again
    assert meter.figure() is not first
