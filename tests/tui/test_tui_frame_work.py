"""What a frame costs beyond what it shows (issue 29): a table line is one segment per
style and its frame is read once a render pass; a sample's feed makes no objects it
throws away. The pictures themselves are the snapshot tests'; here, that the cells
are the same ones.

Fixed samples (no engine): the figures do not matter, only how the lines are made.
"""

from __future__ import annotations

import asyncio
import time

from screen_waits import drawn

import ipctop.live.columns as columns_module
import ipctop.live.session as session_module
from ipctop.engine.sample import CpuSample, Sample, ThreadSample
from ipctop.live.fixed_run import INFO, fixed_samples
from ipctop.live.session import Session
from ipctop.live.sources import FixedSource
from ipctop.tui.app import IpctopApp
from ipctop.tui.widgets.cpus_panel import CpusPanel
from ipctop.tui.widgets.rows_view import RowsView
from ipctop.tui.widgets.switches_panel import SwitchesPanel
from ipctop.tui.widgets.threads_panel import ThreadsPanel

TIMEOUT = 20.0


async def _all_in(pilot, app: IpctopApp) -> None:
    deadline = time.monotonic() + TIMEOUT
    while app.session.count < len(fixed_samples()):
        assert time.monotonic() < deadline, "the fixed samples never all arrived"
        await pilot.pause(0.05)
    app.redraw_now()
    await drawn(pilot, app)


def _cells(panel: RowsView, y: int) -> list[tuple[str, object]]:
    """Line y as the pieces say it: each character with its piece's style, then padding."""
    frame = panel._frame_now()
    pieces, row_style = panel._line(y, frame) or ([], None)
    cells = [(ch, panel._style(name, row_style)) for text, name in pieces for ch in text]
    pad = panel._style(None, row_style)
    return cells + [(" ", pad)] * (frame[0] - len(cells))


def test_a_table_line_is_one_segment_per_style_with_the_same_cells() -> None:
    async def go() -> None:
        app = IpctopApp(FixedSource(fixed_samples(), INFO), own_cpu=lambda _tids: 1.0)
        async with app.run_test(size=(120, 40)) as pilot:
            await _all_in(pilot, app)
            checked = 0
            for panel in (app.query_one(ThreadsPanel), app.query_one(CpusPanel)):
                width, height, _ = panel._frame_now()
                for y in range(min(height, panel.row_count() + 1)):
                    strip = panel.render_line(y)
                    segments = list(strip)
                    assert strip.cell_length == width
                    got = [(ch, s.style) for s in segments for ch in s.text]
                    assert got == _cells(panel, y), (type(panel).__name__, y)
                    styles = [s.style for s in segments]
                    # A run of one style is one segment (styles are kept per piece and row).
                    assert all(a is not b for a, b in zip(styles, styles[1:])), segments
                    checked += 1
            # Every thread row of the fixed run's 3 pairs, both CPUs, and the headings.
            assert checked >= 6 + 2 + 2, checked

    asyncio.run(go())


def test_a_render_pass_reads_the_table_frame_once() -> None:
    # Textual works out a widget's size, gutter and scrollbars afresh on every read:
    # a pass of N lines reads them once, not N times.
    async def go() -> None:
        app = IpctopApp(FixedSource(fixed_samples(), INFO), own_cpu=lambda _tids: 1.0)
        async with app.run_test(size=(120, 40)) as pilot:
            await _all_in(pilot, app)
            panel = app.query_one(SwitchesPanel)
            # No redraw of the app's own between the refresh and the count: its 4 Hz timer
            # would read the frame outside any pass, now and then (as a paused screen does not).
            app._paused = True
            await drawn(pilot, app)  # nothing pending from before the spies
            reads: list[int] = []
            passes: list[int] = []
            painted: list[int] = []
            real_frame, real_lines, real_line = (
                panel._frame_now,
                panel.render_lines,
                panel.render_line,
            )

            def frame_now():
                reads.append(1)
                return real_frame()

            def render_lines(crop):
                passes.append(1)
                return real_lines(crop)

            def render_line(y: int):
                painted.append(y)
                return real_line(y)

            panel._frame_now = frame_now  # type: ignore[method-assign]
            panel.render_lines = render_lines  # type: ignore[method-assign]
            panel.render_line = render_line  # type: ignore[method-assign]
            panel.refresh()  # every line, no redraw: only the compositor reads the frame
            await drawn(pilot, app)
            assert len(painted) >= 8, painted
            # Once a pass (another widget's repaint may walk this one again, drawing nothing).
            assert len(reads) == len(passes) >= 1, (len(reads), len(passes), len(painted))
            assert len(passes) < len(painted)
            assert panel._pass_frame is None  # a line rendered outside a pass reads it anew

    asyncio.run(go())


class _CountedDeque(session_module.deque):
    made = 0

    def __init__(self, *args, **kwargs) -> None:
        type(self).made += 1
        super().__init__(*args, **kwargs)


def _sample(i: int, pairs: int) -> Sample:
    threads = tuple(
        ThreadSample(
            pair=p,
            role=r,
            tid=100 + 2 * p + (r == "B"),
            bound_cpu=0,
            last_cpu=0,
            rounds=i,
            ops_per_s=1000.0 + i + p,
        )
        for p in range(pairs)
        for r in ("A", "B")
    )
    total = sum(t.ops_per_s for t in threads)
    cpus = (CpuSample(0, 10.0, 80.0, 1.0, 9.0), CpuSample(1, 10.0, 80.0, 1.0, 9.0))
    return Sample(t=0.5 * i, dt=0.5, pairs=pairs, threads=threads, total_ops_per_s=total, cpus=cpus)


def _made(monkeypatch, samples: list[Sample]) -> list[int]:
    """Deques made by the session (and its columns) after each of the samples."""
    # Counted, not mocked: the modules' own deque class, every construction tallied.
    monkeypatch.setattr(session_module, "deque", _CountedDeque)
    monkeypatch.setattr(columns_module, "deque", _CountedDeque)
    s = Session()
    _CountedDeque.made = 0  # the session's own, made once, are not the point
    out = []
    for sample in samples:
        s.feed(sample)
        out.append(_CountedDeque.made)
    return out


def test_a_feed_makes_no_object_per_thread(monkeypatch) -> None:
    # Was one deque per new thread (this test poked at them); the histories are
    # columns now (live/columns.py): a change of threads costs a segment, whatever
    # their number, and the same threads again cost nothing.
    few = _made(monkeypatch, [_sample(i, 4) for i in range(1, 12)] + [_sample(12, 5)])
    many = _made(monkeypatch, [_sample(i, 40) for i in range(1, 12)] + [_sample(12, 41)])
    assert few == many, (few, many)
    assert few[0] <= 2 + 2, few  # a history per CPU, and the threads' first segment
    assert few[10] == few[0]  # ten samples of the same threads: none more
    assert few[11] - few[10] <= 2  # a pair more: one segment, not a history per thread


def test_a_feed_keeps_each_threads_history(monkeypatch) -> None:
    s = Session()
    for i in range(1, 12):
        s.feed(_sample(i, 4))
    assert [len(h) for h in s.threads.values()] == [11] * 8
    assert list(s.threads[(3, "B", 107)])[-2:] == [1013.0, 1014.0]  # 1000 + sample + pair
    s.feed(_sample(12, 5))  # a pair more: its two threads start theirs, the others go on
    assert len(s.threads[(4, "A", 108)]) == 1 and len(s.threads[(3, "B", 107)]) == 12
