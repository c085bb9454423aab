"""How the app looks, fed by a fake fixed run (no engine): pictures are deterministic.

Update after a deliberate change with: pytest tests/tui/test_tui_snapshots.py --snapshot-update
"""

from __future__ import annotations

import asyncio

from screen_waits import all_taken, drawn

from ipctop.live.fixed_run import fixed_source
from ipctop.tui.app import IpctopApp


def app(theme: str | None = None) -> IpctopApp:
    # The monitor's CPU use is the one live figure on screen: pin it for the picture.
    return IpctopApp(fixed_source(), theme=theme, own_cpu=lambda _tids: 1.4)


async def settle(pilot) -> None:
    """Every fixed sample taken in, then one redraw, drawn: the picture no longer
    depends on timing (waited for, as a loaded box takes them in slowly)."""
    await all_taken(pilot)
    pilot.app.redraw_now()
    await drawn(pilot, pilot.app)


def test_fake_fixed_run_dark_120x40(snap_compare) -> None:
    assert snap_compare(app("textual-dark"), terminal_size=(120, 40), run_before=settle)


def test_fake_fixed_run_light_120x40(snap_compare) -> None:
    assert snap_compare(app("textual-light"), terminal_size=(120, 40), run_before=settle)


def test_fake_fixed_run_80x24(snap_compare) -> None:
    assert snap_compare(app(), terminal_size=(80, 24), run_before=settle)


def test_fake_fixed_run_collapses_at_60x20(snap_compare) -> None:
    assert snap_compare(app(), terminal_size=(60, 20), run_before=settle)


def test_fake_fixed_run_survives_20x10(snap_compare) -> None:
    assert snap_compare(app(), terminal_size=(20, 10), run_before=settle)


def test_fake_fixed_run_help_screen(snap_compare) -> None:
    async def help_open(pilot) -> None:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause(0.2)

    assert snap_compare(app(), terminal_size=(100, 36), run_before=help_open)


def test_fake_fixed_run_all_cpus_and_paused(snap_compare) -> None:
    async def keys(pilot) -> None:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("space")
        await settle(pilot)

    assert snap_compare(app(), terminal_size=(120, 40), run_before=keys)


def test_fake_fixed_run_resizes_without_crashing() -> None:
    async def go() -> None:
        a = app()
        async with a.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            for size in [(20, 10), (80, 24), (45, 12), (60, 20), (200, 60), (1, 1), (120, 40)]:
                await pilot.resize_terminal(*size)
                await pilot.pause(0.3)
            assert a.is_running
            rows = a.query_one("#threads").row_count()
            assert rows == 6  # 3 pairs x 2 ends of the last fixed sample

    asyncio.run(go())


def test_fake_fixed_source_refuses_control_and_says_so() -> None:
    async def go() -> None:
        a = app()
        async with a.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("plus")
            await pilot.pause(0.1)
            assert "cannot add a pair" in a._message
            await pilot.press("s")
            assert not a.sweeping

    asyncio.run(go())


def test_fake_fixed_run_screenshot_key_writes_an_svg(tmp_path) -> None:
    async def go() -> None:
        a = IpctopApp(fixed_source(), screenshot_dir=str(tmp_path), own_cpu=lambda _t: 1.4)
        async with a.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("S")
            await pilot.pause(0.1)

    asyncio.run(go())
    (svg,) = tmp_path.glob("*.svg")
    text = svg.read_text()
    assert text.startswith("<svg") and "sysv-msg" in text


def test_fake_fixed_run_partial_repaint_leaves_no_stale_line() -> None:
    """Only changed lines are repainted: the picture must equal a full repaint."""
    from dataclasses import replace

    from ipctop.live.fixed_run import fixed_samples
    from ipctop.tui.widgets.rows_view import RowsView

    async def go() -> None:
        a = app()
        async with a.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            last = fixed_samples()[-1]
            for k in range(6):
                slow = 0.3 if k % 2 else 1.0
                threads = tuple(replace(t, ops_per_s=t.ops_per_s * slow) for t in last.threads)
                a.session.feed(
                    replace(
                        last,
                        t=last.t + 0.5 * (k + 1),
                        threads=threads,
                        total_ops_per_s=sum(t.ops_per_s for t in threads),
                        ctxt_per_s=1000.0 * (k + 1),
                    )
                )
                a.redraw_now()
                await pilot.pause(0.05)
            partial = a.export_screenshot()
            for view in a.query(RowsView):
                view.refresh()
            await pilot.pause(0.1)
            assert a.export_screenshot() == partial

    asyncio.run(go())
