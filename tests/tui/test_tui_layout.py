"""The layout follows the terminal: snapshots at 80x24, 120x40, 200x60, and what must hold.

Fed by the fake fixed run (no engine), so each picture is the same on every
box. Update after a deliberate change: pytest tests/tui/test_tui_layout.py --snapshot-update
"""

from __future__ import annotations

import asyncio

import pytest
from screen_waits import drawn, until
from test_tui_snapshots import app, settle
from textual.widgets._footer import FooterKey

from ipctop.live.fixed_run import fixed_comparison
from ipctop.tui.app import IpctopApp
from ipctop.tui.widgets.scaling_panel import ScalingPlot
from ipctop.tui.widgets.text_block import TextBlock

SIZES = ((80, 24), (120, 40), (200, 60))


def both_runs_in(a: IpctopApp) -> bool:
    """The fixed comparison's second run (futex) taken in to its last sample, settled."""
    s = a.session
    return bool(
        s.count
        and a.info.config.workload == "futex"
        and s.settled
        and s.latest.t == a.source.samples[-1].t
    )


async def comparison_settled(pilot) -> None:
    a = pilot.app
    await until(pilot, lambda: both_runs_in(a), "the futex run's last sample")
    assert list(a.session.compared()) == ["sysv-msg"]
    a.redraw_now()
    await drawn(pilot, a)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_fake_fixed_run_layout(snap_compare, size) -> None:
    assert snap_compare(app(), terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_fake_fixed_run_detail_layout(snap_compare, size) -> None:
    async def detail(pilot) -> None:
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)

    assert snap_compare(app(), terminal_size=size, run_before=detail)


def test_fake_fixed_comparison_80x24(snap_compare) -> None:
    app80 = IpctopApp(fixed_comparison(), own_cpu=lambda _tids: 1.4)
    assert snap_compare(app80, terminal_size=(80, 24), run_before=comparison_settled)


def run(size, before, check, notifications: bool = False) -> None:
    async def go() -> None:
        a = before[0]()
        async with a.run_test(size=size, notifications=notifications) as pilot:
            await before[1](pilot)
            await check(a, pilot)

    asyncio.run(go())


def test_fake_comparison_table_header_fits_at_80x24() -> None:
    async def check(a, pilot) -> None:
        table = a.query_one("#scaling-table", TextBlock)
        head = table.text.plain.split("\n")[0]
        assert len(head) <= table.content_region.width, (head, table.content_region)
        # One screen line per table line: nothing wrapped.
        assert table.region.height == min(table.text.plain.count("\n") + 1, 4)

    fresh = (lambda: IpctopApp(fixed_comparison(), own_cpu=lambda _t: 1.4), comparison_settled)
    run((80, 24), fresh, check)


def test_fake_detail_leaves_the_chart_room_at_120x40() -> None:
    async def check(a, pilot) -> None:
        await pilot.press("d")
        await settle(pilot)
        plot = a.query_one(ScalingPlot)
        detail = a.query_one("#detail")
        assert detail.region.height > 10 and detail.region.width >= 70
        assert plot.region.height >= 15, plot.region  # was 3 with the detail panel docked below
        assert plot.region.width >= 40, plot.region

    run((120, 40), (app, settle), check)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_fake_chart_takes_the_room_the_threads_leave(size) -> None:
    """At 3 pairs (6 rows) the threads panel is as tall as its rows; the chart gets the rest."""

    async def check(a, pilot) -> None:
        threads = a.query_one("#threads")
        assert threads.region.height <= 6 + 1 + 2  # rows, heading, border
        plot = a.query_one(ScalingPlot)
        assert plot.region.height >= 6

    run(size, (app, settle), check)


def test_fake_notifications_never_cover_the_status_line_or_the_keys() -> None:
    async def check(a, pilot) -> None:
        a.notify("a long message " * 4, timeout=30)
        # Mounted and laid out, however long a loaded box takes: not a fixed 0.5 s.
        await until(pilot, lambda: a.screen.query("Toast"), "the toast")
        await drawn(pilot, a)
        toasts = list(a.screen.query("Toast"))
        assert toasts
        status_top = a.query_one("#status").region.y
        for toast in toasts:
            assert toast.region.bottom <= status_top, (toast.region, status_top)

    for size in ((80, 24), (120, 40)):
        run(size, (app, settle), check, notifications=True)


def test_fake_below_the_smallest_layout_says_so_and_recovers() -> None:
    async def check(a, pilot) -> None:
        await pilot.resize_terminal(20, 6)
        await drawn(pilot, a)
        note = a.query_one("#too-small")
        assert note.display and note.region.height > 0
        assert "ipctop needs 30x8" in str(note.render())  # the size it needs, on screen
        assert a.query_one("#main").region.height == 0
        await pilot.resize_terminal(120, 40)
        await drawn(pilot, a)
        assert a.query_one("#too-small").region.height == 0
        assert a.query_one(ScalingPlot).region.height > 10

    run((120, 40), (app, settle), check)


def screen_lines(a: IpctopApp) -> list[str]:
    """The screen as the terminal gets it, one string per row."""
    update = a.screen._compositor.render_update(full=True)
    return ["".join(seg.text for seg in strip) for strip in update.strips]


@pytest.mark.parametrize("size", ((60, 20), *SIZES[:2]), ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("detail", (False, True), ids=("plain", "detail"))
def test_fake_every_text_is_whole(size, detail) -> None:
    """No line ends in "…", a hidden thread row is named, a low chart's legend is off its plot."""

    async def check(a, pilot) -> None:
        if detail:
            await pilot.press("d")
            await settle(pilot)
        scaling = a.query_one("#scaling")
        for _ in range(100):  # a redraw for the size the layout settled on may be pending
            # ... and on a loaded box the footer's first paint too
            if scaling._drawn is not None and screen_lines(a)[-1].strip():
                break
            await pilot.pause(0.02)
        lines = screen_lines(a)
        cut = [line for line in lines if "…" in line]
        assert not cut, cut
        assert not any("^p" in line for line in lines[-1:])  # the palette key sat on the keys
        keys = list(a.screen.query(FooterKey))
        assert keys and all(k.region.right <= a.size.width for k in keys)  # each key whole
        assert lines[-1].rstrip().endswith(keys[-1].description)
        threads = a.query_one("#threads")
        rows = len(a.session.thread_rows())
        shown = threads.scrollable_content_region.height - 1
        if shown < rows:
            assert f"{shown}/{rows}" in str(threads.border_subtitle) or (
                f"{shown} of {rows} rows" in str(threads.border_subtitle)
            )
        plot = a.query_one(ScalingPlot)
        legend_out = plot.region.height < 12
        plot_text = "\n".join(
            line[plot.region.x : plot.region.right]
            for line in lines[plot.region.y : plot.region.bottom]
        )
        assert ("measured" in plot_text) != legend_out, plot_text
        if legend_out:
            assert "● measured" in str(a.query_one("#scaling").border_subtitle)

    run(size, (app, settle), check)
