"""Above 64 threads the threads and switches tables step once a second, above 256
every 2 s (issue 29, widgets/table_pace.py): whole samples' columns at a time,
nothing dropped, the titles saying so, and a pair added shows at once.

Made-up samples of 40 pairs (80 threads): a 2-CPU box runs 256 pairs, but the
tests are about what the screen shows of them, which must not depend on the box.
They are handed to the real app one at a time, as the sampler's message would.
"""

from __future__ import annotations

import asyncio
import math

from ipctop.engine.sample import CpuSample, IpiSample, Sample, ThreadSample
from ipctop.live.fixed_run import INFO
from ipctop.live.session import Session
from ipctop.live.sources import FixedSource
from ipctop.tui.app import IpctopApp, SampleArrived
from ipctop.tui.widgets.cpus_panel import CpusPanel
from ipctop.tui.widgets.rows_view import RowsView
from ipctop.tui.widgets.spark import si, spark
from ipctop.tui.widgets.switches_panel import SwitchesPanel
from ipctop.tui.widgets.table_pace import (
    LONG_ROWS,
    PACED_ROWS,
    TablePace,
    samples_a_step,
    step_s,
)
from ipctop.tui.widgets.threads_panel import ThreadsPanel

PAIRS = 40  # 80 threads: over PACED_ROWS


def sample(i: int, pairs: int = PAIRS) -> Sample:
    """Sample i (at 0.5 * i s): every thread's rate moves from one sample to the next."""
    threads = []
    for p in range(pairs):
        rate = 250_000.0 * (1.0 + 0.3 * math.sin(0.7 * i + p))
        for role in ("A", "B"):
            threads.append(
                ThreadSample(
                    pair=p,
                    role=role,
                    tid=1000 + 2 * p + (role == "B"),
                    bound_cpu=p % 4,
                    last_cpu=p % 4,
                    rounds=int(rate * i / 2),
                    ops_per_s=rate,
                    vcsw_per_s=rate * 0.98,
                    ivcsw_per_s=rate * 0.01 * (1 + i % 3),
                )
            )
    total = sum(t.ops_per_s for t in threads)
    cpus = tuple(CpuSample(c, 10.0, 70.0 + (i + c) % 7, 2.0, 18.0 - (i + c) % 7) for c in range(4))
    return Sample(
        t=0.5 * i,
        dt=0.5,
        pairs=pairs,
        threads=tuple(threads),
        total_ops_per_s=total,
        cpus=cpus,
        ctxt_per_s=2.0 * total * (1 + 0.1 * (i % 2)),
        ipis=tuple(IpiSample(c, 100.0 * (c + 1) + i, 3.0) for c in range(4)),
    )


# -- where the steps fall --------------------------------------------------------------


def test_a_table_of_more_than_64_threads_steps_every_second_sample() -> None:
    pace, s = TablePace(), Session()
    seen = []
    for i in range(1, 8):
        s.feed(sample(i))
        seen.append(pace.pace(s, 0.5))
    assert {p.every_s for p in seen} == {1.0}
    assert [p.at for p in seen] == [1, 1, 3, 3, 5, 5, 7]
    s.feed(sample(8, PAIRS + 1))  # a pair added: a step at once, not at the next second
    assert pace.pace(s, 0.5).at == 8
    s.feed(sample(9, PAIRS + 1))
    assert pace.pace(s, 0.5).at == 8
    s.feed(sample(10, PAIRS - 1))  # and one removed
    assert pace.pace(s, 0.5).at == 10
    fresh = Session()  # a restart's new session: a step
    fresh.feed(sample(11))
    assert pace.pace(fresh, 0.5).at == 1


def test_above_256_threads_a_step_is_2_s() -> None:
    assert [step_s(n) for n in (2, 64, 66, 256, 258, 2048)] == [None, None, 1.0, 1.0, 2.0, 2.0]
    pace, s = TablePace(), Session()
    at_256 = LONG_ROWS // 2  # pairs: 256 threads, still 1 s
    seen = []
    for i in range(1, 4):
        s.feed(sample(i, at_256))
        seen.append(pace.pace(s, 0.5))
    assert [(p.every_s, p.at) for p in seen] == [(1.0, 1), (1.0, 1), (1.0, 3)]
    seen = []
    for i in range(4, 14):  # one pair more: 258 threads, a step at once, then every 4th
        s.feed(sample(i, at_256 + 1))
        seen.append(pace.pace(s, 0.5))
    assert {p.every_s for p in seen} == {2.0}
    assert [p.at for p in seen] == [4, 4, 4, 4, 8, 8, 8, 8, 12, 12]
    s.feed(sample(14, at_256))  # back to 256 threads: a step at once, 1 s again
    assert pace.pace(s, 0.5) == (1.0, 14)
    assert samples_a_step(0.5, 2.0) == 4 and samples_a_step(2.0, 2.0) == 1


def test_up_to_64_threads_or_a_slow_interval_every_sample_is_taken() -> None:
    pace, s = TablePace(), Session()
    for i in range(1, 5):
        s.feed(sample(i, PACED_ROWS // 2))  # 64 threads: not over
        assert pace.pace(s, 0.5) == (None, i)
    slow = Session()
    for i in range(1, 5):
        slow.feed(sample(i))
        assert pace.pace(slow, 1.0) == (None, i)  # a sample a second already
    assert [samples_a_step(x) for x in (0.25, 0.3, 0.5, 1.0, 2.0, 0.0)] == [4, 3, 2, 1, 1, 1]
    quick = Session()
    ats = []
    for i in range(1, 10):
        quick.feed(sample(i))
        got = pace.pace(quick, 0.25)
        assert got.every_s == 1.0
        ats.append(got.at)
    assert ats == [1, 1, 1, 1, 5, 5, 5, 5, 9]


def test_a_sparkline_drawn_late_ends_where_its_step_did() -> None:
    values = [float(v % 9) for v in range(100)]
    for lag in (0, 1, 2, 7):
        for width in (5, 40, 120):
            assert spark(values, width, 8.0, lag) == spark(values[: 100 - lag], width, 8.0)
    assert spark(values[:3], 6, 8.0, 5) == " " * 6  # less history than the lag: blank


# -- in the app ---------------------------------------------------------------------------


class QuietSource(FixedSource):
    """The fixed run's info; delivers nothing itself: the test hands the samples over."""

    def __init__(self) -> None:
        super().__init__([], INFO)


def quiet_app() -> IpctopApp:
    return IpctopApp(QuietSource(), own_cpu=lambda _tids: 1.4)


async def hand(app: IpctopApp, pilot, *samples: Sample) -> None:
    """Each sample as the sampler's message brings it, drawn at once (no throttle)."""
    for s in samples:
        app._redraw_pending = True  # drawn below: no timer is set for it
        app.on_sample_arrived(SampleArrived(s, 0))
        app.redraw_now()
        await pilot.pause()


def _ops_shown(panel: ThreadsPanel, index: int) -> str:
    pieces, _ = panel.row(index, panel.text_width)
    return pieces[-1][0].split()[0]


def test_between_steps_the_tables_keep_their_lines_and_the_rest_moves_on() -> None:
    async def go() -> None:
        app = quiet_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await hand(app, pilot, *(sample(i) for i in range(1, 46)))  # 45: a step
            threads, switches = app.query_one(ThreadsPanel), app.query_one(SwitchesPanel)
            assert threads.border_title == "Threads · every 1 s"
            assert switches.border_title == "Context switches · threads every 1 s"
            lines_before, switch_lines = list(threads._lines), list(switches._lines)
            cpu_lines = list(app.query_one(CpusPanel)._lines)
            assert _ops_shown(threads, 0) == si(sample(45).threads[0].ops_per_s)

            await hand(app, pilot, sample(46))  # between steps
            assert threads._lines == lines_before  # not one thread line moved
            assert _ops_shown(threads, 0) == si(sample(45).threads[0].ops_per_s)
            # A line made again now (a scroll, a toast gone) is the one shown: its
            # sparkline ends at sample 45 although the history holds 46 by now.
            frame = threads._frame_now()
            for y in range(1, frame[1]):
                assert threads._line(y, frame) == threads._lines[y], y
            # A real scroll between steps: the rows move up one, each as it was shown.
            shown = list(threads._lines)
            threads.scroll_to(y=1, animate=False)
            await pilot.pause()
            scrolled = threads._frame_now()
            assert scrolled[2] == 1
            for y in range(1, scrolled[1] - 1):
                assert threads._line(y, scrolled) == shown[y + 1], y
            threads.scroll_to(y=0, animate=False)
            await pilot.pause()
            row = threads._rows.row(0)
            width = threads._spark_width(frame[0])
            assert spark(row.history, width, threads._top) != spark(
                row.history, width, threads._top, 1
            )  # the lag is not a no-op here: the rates moved
            # The switches: the system-wide row and the IPIs moved, the thread rows did not.
            first_thread = 1 + len(switches._rows)  # the heading, then the rows above
            assert switches._lines[1] != switch_lines[1]
            assert switches._lines[first_thread:] == switch_lines[first_thread:]
            assert app.query_one(CpusPanel)._lines != cpu_lines  # the CPUs keep the sample rate

            await hand(app, pilot, sample(47))  # the next step: both samples' columns
            assert threads._lines != lines_before
            assert _ops_shown(threads, 0) == si(sample(47).threads[0].ops_per_s)
            assert switches._lines[first_thread:] != switch_lines[first_thread:]

            await hand(app, pilot, sample(48, PAIRS + 1))  # a pair added: at once
            assert threads.row_count() == 2 * (PAIRS + 1)
            assert switches.row_count() == len(switches._rows) + 2 * (PAIRS + 1)

    asyncio.run(go())


def test_a_paced_table_repainted_between_steps_shows_what_a_full_repaint_does() -> None:
    async def go() -> None:
        app = quiet_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await hand(app, pilot, *(sample(i) for i in range(1, 46)))
            await hand(app, pilot, sample(46))  # between steps
            partial = app.export_screenshot()
            for view in app.query(RowsView):
                view._lines = []  # none kept: each made again, thread rows with their lag
                view.refresh()
            await pilot.pause(0.1)
            assert app.export_screenshot() == partial

    asyncio.run(go())


def test_above_64_threads_the_screen_steps_with_the_tables() -> None:
    # The sampler's message alone (no redraw_now): a sample between steps is fed but
    # schedules no frame; a step's does, and so does a pair added. The status line says
    # so. Up to 64 threads every sample schedules one (below).
    async def go() -> None:
        app = quiet_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await hand(app, pilot, *(sample(i) for i in range(1, 46)))  # 45: a step
            scheduled = []
            for s in (sample(46), sample(47), sample(48), sample(49, PAIRS + 1)):
                await pilot.pause(0.3)  # past the 4 Hz throttle: a frame is never held back
                app.on_sample_arrived(SampleArrived(s, 0))
                scheduled.append(app._redraw_pending)
                assert app.session.latest is s  # fed, drawn or not
            assert scheduled == [False, True, False, True]
            await pilot.pause(0.3)
            assert "sample every 0.5 s, screen every 1 s" in str(app.status_line.render())
            assert _ops_shown(app.query_one(ThreadsPanel), 0) == si(
                sample(49, PAIRS + 1).threads[0].ops_per_s
            )

    asyncio.run(go())


def test_above_256_threads_the_screen_steps_every_2_s() -> None:
    pairs = LONG_ROWS // 2 + 1  # 258 threads

    async def go() -> None:
        app = quiet_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await hand(app, pilot, *(sample(i, pairs) for i in range(1, 42)))  # 41: a step
            scheduled = []
            for i in range(42, 50):
                await pilot.pause(0.3)  # past the 4 Hz throttle
                app.on_sample_arrived(SampleArrived(sample(i, pairs), 0))
                scheduled.append(app._redraw_pending)
            assert scheduled == [False, False, False, True] * 2
            await pilot.pause(0.3)
            assert "sample every 0.5 s, screen every 2 s" in str(app.status_line.render())
            assert app.query_one(ThreadsPanel).border_title == "Threads · every 2 s"

    asyncio.run(go())


def test_up_to_64_threads_the_screen_takes_every_sample() -> None:
    async def go() -> None:
        app = quiet_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await hand(app, pilot, *(sample(i, 32) for i in range(1, 12)))
            for i in (12, 13, 14):
                await pilot.pause(0.3)
                app.on_sample_arrived(SampleArrived(sample(i, 32), 0))
                assert app._redraw_pending
            await pilot.pause(0.3)
            text = str(app.status_line.render())
            assert "sample every 0.5 s" in text and "screen every" not in text

    asyncio.run(go())


def test_up_to_64_threads_the_tables_take_every_sample() -> None:
    async def go() -> None:
        app = quiet_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await hand(app, pilot, *(sample(i, 32) for i in range(1, 12)))
            threads = app.query_one(ThreadsPanel)
            assert threads.border_title == "Threads"
            assert app.query_one(SwitchesPanel).border_title == "Context switches"
            for i in (12, 13):
                await hand(app, pilot, sample(i, 32))
                assert _ops_shown(threads, 0) == si(sample(i, 32).threads[0].ops_per_s)

    asyncio.run(go())


def test_paced_tables_120x40(snap_compare) -> None:
    # The header and the CPUs at sample 46, the threads and their switches at 45
    # (the last step), both titles saying so.
    async def fed(pilot) -> None:
        await hand(pilot.app, pilot, *(sample(i) for i in range(1, 47)))

    assert snap_compare(quiet_app(), terminal_size=(120, 40), run_before=fed)
