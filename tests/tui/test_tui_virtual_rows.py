"""The TUI at scale (issue 29): tables build and draw only the rows on screen, and
sparklines share a scale kept per sample instead of walking every history.

The threads case runs the real engine (6 pairs: more threads than a 24-row
terminal shows); the CPUs case needs 64 CPUs, which a 2-CPU box cannot
produce, so its samples are the fixed run's with a fake 64-CPU topology.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from dataclasses import replace

from conftest import two_cpus
from screen_waits import drawn

from ipctop.engine.config import RunConfig
from ipctop.engine.latency import LatencySummary, PairLatency
from ipctop.engine.sample import Sample
from ipctop.live.fixed_run import INFO, fixed_samples
from ipctop.live.session import Session
from ipctop.live.sources import FixedSource, LiveSource
from ipctop.tui.app import IpctopApp
from ipctop.tui.widgets.cpus_panel import CpusPanel
from ipctop.tui.widgets.rows_view import RowsView
from ipctop.tui.widgets.spark import spark
from ipctop.tui.widgets.switches_panel import SwitchesPanel
from ipctop.tui.widgets.threads_panel import ThreadsPanel

CPUS = tuple(sorted(os.sched_getaffinity(0))[:2])
PAIRS = 6  # 12 thread rows; a 24-row terminal shows about 4 of them
SIZE = (120, 24)
TIMEOUT = 20.0


async def _wait(pilot, what, why: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {why}")
        await pilot.pause(0.05)


def _visible(panel: RowsView) -> int:
    """Table rows on screen: the content's height less the heading line."""
    return min(panel.row_count(), panel.scrollable_content_region.height - 1)


def _spy_rows(panel: RowsView) -> list[int]:
    """Record the index of every row the panel formats (an instance attribute
    shadows the class's row(); RowsView calls self.row)."""
    asked: list[int] = []
    real = panel.row

    def row(index: int, width: int):
        asked.append(index)
        return real(index, width)

    panel.row = row  # type: ignore[method-assign]
    return asked


def _spy_refresh(panel: RowsView) -> list[object]:
    calls: list[object] = []
    real = panel.refresh

    def refresh(*regions, **kw):
        calls.append(regions)
        return real(*regions, **kw)

    panel.refresh = refresh  # type: ignore[method-assign]
    return calls


@two_cpus
def test_threads_table_builds_only_the_rows_on_screen_real_engine() -> None:
    source = LiveSource(RunConfig(cpus=CPUS), interval=0.2)
    source.open(PAIRS)

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=SIZE) as pilot:
            panel = app.query_one(ThreadsPanel)
            await _wait(pilot, lambda: panel.row_count() == 2 * PAIRS, "12 thread rows")
            await pilot.pause(0.2)
            visible = _visible(panel)
            assert 0 < visible < 2 * PAIRS, f"the layout shows {visible} rows: pick a smaller size"
            asked = _spy_rows(panel)
            app.redraw_now()
            table = panel._rows
            # One redraw: the rows on screen, each built once, none of the others.
            assert sorted(asked) == list(range(visible)), asked
            assert table.built == visible and len(table) == 2 * PAIRS
            # Scrolled to the end, the last rows are the ones built.
            panel.scroll_end(animate=False, immediate=True)
            await pilot.pause(0.1)
            asked.clear()
            app.redraw_now()
            first = 2 * PAIRS - visible
            assert sorted(set(asked)) == list(range(first, 2 * PAIRS)), asked
            assert panel._rows.built == visible
            # The subtitle's counts still cover every thread, built or not.
            assert len(panel._rows.threads) == 2 * PAIRS
            # The switches panel reads the same sorted threads by index.
            switches = app.query_one(SwitchesPanel)
            switches.update_from(app.session, app.info.config.cpus, False)
            assert switches.row_count() == len(switches._rows) + 2 * PAIRS
            last = switches.row(switches.row_count() - 1, 60)[0][0][0]
            assert last.startswith(f"{PAIRS - 1:>4}B"), last

    asyncio.run(go())


@two_cpus
def test_a_table_whose_rows_did_not_change_is_not_repainted_real_engine() -> None:
    source = LiveSource(RunConfig(cpus=CPUS), interval=0.2)
    source.open(2)

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=SIZE) as pilot:
            panel = app.query_one(ThreadsPanel)
            await _wait(pilot, lambda: panel.row_count() == 4, "4 thread rows")
            await _wait(pilot, lambda: app.session.count >= 3, "three samples")
            calls = _spy_refresh(panel)
            # Same session twice, no sample between (both on the event loop):
            # the second formats the same lines and repaints none of them.
            panel.update_from(app.session)
            n = len(calls)
            panel.update_from(app.session)
            assert len(calls) == n, calls[n:]
            # The next sample moves the rates: the app's own redraw repaints lines.
            calls.clear()
            await _wait(pilot, lambda: bool(calls), "a repaint after the next sample")

    asyncio.run(go())


def test_cpus_table_at_64_cpus_builds_only_the_rows_on_screen_fake_topology() -> None:
    # Fake: 64 CPUs (this box has 2); every one a copy of the fixed run's cpu0.
    samples = []
    for s in fixed_samples():
        base = s.cpus[0]
        samples.append(replace(s, cpus=tuple(replace(base, cpu=c) for c in range(64))))
    source = FixedSource(samples, INFO.changed(cpus=tuple(range(64))), monitor_cpu=3)
    app = IpctopApp(source, own_cpu=lambda _tids: 1.0)

    async def go() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await _wait(pilot, lambda: app.session.count >= len(samples), "every sample")
            panel = app.query_one(CpusPanel)
            app.redraw_now()
            await pilot.pause(0.1)
            assert panel.row_count() == 64
            visible = _visible(panel)
            assert 0 < visible < 64
            asked = _spy_rows(panel)
            app.redraw_now()
            assert sorted(asked) == list(range(visible)), asked

    asyncio.run(go())


class _NoWalk(deque):
    """A history that fails when walked from its start (a full copy)."""

    def __iter__(self):
        raise AssertionError("the sparkline walked the whole history")


def test_a_sparkline_reads_only_its_tail() -> None:
    history = _NoWalk((float(i) for i in range(512)), maxlen=512)
    expected = spark([float(i) for i in range(504, 512)], 8, 511.0)
    assert spark(history, 8, 511.0) == expected and expected.endswith("█")
    assert spark(deque([1.0, 2.0]), 5, 2.0) == "   ▅█"


def _timed(t: float, p99s: dict[int, float]) -> Sample:
    """A planted sample whose pairs carry a round-trip p99 (ns) each."""

    def summary(p99: float) -> LatencySummary:
        return LatencySummary(10, p99 / 2, p99 / 2, p99, p99, p99)

    latency = tuple(PairLatency(p, summary(v), summary(v / 2)) for p, v in p99s.items())
    return Sample(t=t, dt=0.5, pairs=len(p99s), threads=(), total_ops_per_s=0.0, latency=latency)


def test_latency_sparklines_share_a_scale_kept_per_sample() -> None:
    s = Session()
    rows = [{0: 900.0, 1: 100.0}, {0: 200.0, 1: 300.0}, {0: 250.0, 1: 150.0}]
    for i, p99s in enumerate(rows):
        s.feed(_timed(0.5 * (i + 1), p99s))
    # Independently: the largest p99 of any pair over the last `width` samples.
    for width in (1, 2, 3, 24):
        want = max(v for r in rows[-width:] for v in r.values())
        assert s.latency_scale(width) == want, width
    # Pair 0 goes: its 900 no longer holds the scale up; pair 1's past still counts.
    s.feed(_timed(2.0, {1: 50.0}))
    assert s.latency_scale(24) == 300.0 and s.latency_scale(1) == 50.0


async def _at_final_size(pilot, app: IpctopApp) -> None:
    """Drawn at the panels' final size. A redraw made while the layout was still
    growing a panel kept its smaller frame, and the next redraw repaints that panel
    whole, once, as after any resize (seen in CI after the snapshot tests: frame
    height 2, panel height 7). Two redraws, each drawn, leave nothing of that."""
    for _ in range(2):
        app.redraw_now()
        await drawn(pilot, app)


def _spy_render_line(panel: RowsView) -> list[int]:
    """Record every line the compositor asks the panel to render (content lines)."""
    drawn: list[int] = []
    real = panel.render_line

    def render_line(y: int):
        drawn.append(y)
        return real(y)

    panel.render_line = render_line  # type: ignore[method-assign]
    return drawn


def test_rows_whose_figures_did_not_change_are_not_rendered_again() -> None:
    # Fixed samples: after they are all in, a redraw formats the same rows; the
    # compositor still walks the screen (the status line moves), but no threads
    # or CPUs line is rendered again. A row whose text changes is, and only it.
    async def go() -> None:
        app = IpctopApp(FixedSource(fixed_samples(), INFO))
        async with app.run_test(size=(120, 40)) as pilot:
            threads, cpus = app.query_one(ThreadsPanel), app.query_one(CpusPanel)
            await _wait(pilot, lambda: app.session.count == len(fixed_samples()), "all samples")
            await _at_final_size(pilot, app)
            drawn_threads, drawn_cpus = _spy_render_line(threads), _spy_render_line(cpus)
            app._message = "a status line that changed"  # something else on screen moves
            app.redraw_now()
            await drawn(pilot, app)
            assert drawn_threads == [] and drawn_cpus == [], (drawn_threads, drawn_cpus)
            # One row's figures change: its line alone is rendered again.
            real_row = threads.row

            def row(index: int, width: int):
                pieces, style = real_row(index, width)
                return ([*pieces[:-1], (" changed", None)] if index == 1 else pieces), style

            threads.row = row  # type: ignore[method-assign]
            app.redraw_now()
            await drawn(pilot, app)
            assert drawn_threads == [2], drawn_threads  # row 1 is line 2, under the heading

    asyncio.run(go())


def test_a_table_whose_every_row_moved_repaints_its_rows_not_its_border() -> None:
    # Every sparkline moves each sample at 256 pairs: all rows change. Their lines
    # are rendered again, the border's (title, subtitle) are not: they did not move.
    async def go() -> None:
        app = IpctopApp(FixedSource(fixed_samples(), INFO))
        async with app.run_test(size=(120, 40)) as pilot:
            threads = app.query_one(ThreadsPanel)
            await _wait(pilot, lambda: app.session.count == len(fixed_samples()), "all samples")
            await _at_final_size(pilot, app)
            styled: list[int] = []  # every line of the widget Textual styles (border included)
            cache = threads._styles_cache
            real_line = cache.render_line

            def render_line(styles, y, *rest):
                styled.append(y)
                return real_line(styles, y, *rest)

            cache.render_line = render_line  # type: ignore[method-assign]
            real_row = threads.row

            def row(index: int, width: int):
                pieces, style = real_row(index, width)
                return [*pieces[:-1], (" moved", None)], style

            threads.row = row  # type: ignore[method-assign]
            app.redraw_now()
            await drawn(pilot, app)
            rows = min(threads.row_count(), threads.scrollable_content_region.height - 1)
            bottom = threads.outer_size.height - 1  # the border's last line
            # Line 0 is the top border, line 1 the heading; rows follow it.
            assert sorted(set(styled)) == list(range(2, 2 + rows)), (styled, bottom)
            assert 0 not in styled and bottom not in styled and bottom == 2 + rows

    asyncio.run(go())
