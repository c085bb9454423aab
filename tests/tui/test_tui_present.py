"""Presentation mode: key F and --present, large figures, the curve, a verdict, 7:1 contrast."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import two_cpus
from handmade_records import handmade_sweep
from screen_waits import all_taken, drawn, screen_up
from test_tui_contrast import THEMES, app_pane, assert_readable, needs_tmux
from test_tui_snapshots import app, settle
from tmux_pane import TEST_TIMEOUT

from ipctop.analysis.scaling import ScalingPoint
from ipctop.live.baseline import Baseline, load_baseline
from ipctop.live.fixed_run import fixed_source as fixed_source_
from ipctop.live.replay_source import ReplaySource
from ipctop.output.records.record import Sessions
from ipctop.output.records.record_io import read_record, write_record
from ipctop.tui.app import IpctopApp
from ipctop.tui.contrast_floor import AA
from ipctop.tui.screens.present import AAA, Figure, PresentScreen, baseline_verdict, split_si
from ipctop.tui.widgets.block_digits import digits_width, render_digits


def figure(a: IpctopApp, wid: str) -> str:
    digits = a.screen.query_one(f"#{wid}", Figure).query_one("BlockDigits")
    return str(digits.value)


def test_fake_fixed_run_F_shows_the_figures_and_raises_the_contrast_floor() -> None:
    async def go() -> None:
        a = app()
        async with a.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("F")
            await screen_up(pilot, PresentScreen)
            a.redraw_now()
            await drawn(pilot, a)
            assert isinstance(a.screen, PresentScreen)
            assert figure(a, "fig-pairs") == "3"
            head = a.session.headline()
            assert figure(a, "fig-scal") == f"{head.scal:.0f}"
            # The header's and the table's figure: the settled point when there is one.
            shown = head.settled.total_ops_per_s if head.settled else head.now
            total, _unit = split_si(shown)
            assert figure(a, "fig-total") == total
            assert "engine native" in str(a.screen.query_one("#present-title").render())
            assert a._contrast_floor.minimum == AAA
            await pilot.press("F")
            await pilot.pause(0.2)
            assert not isinstance(a.screen, PresentScreen)
            assert a._contrast_floor.minimum == AA

    asyncio.run(go())


def test_fake_fixed_run_presentation_snapshot(snap_compare) -> None:
    async def present(pilot) -> None:
        await settle(pilot)
        await pilot.press("F")
        await screen_up(pilot, PresentScreen)
        pilot.app.redraw_now()
        await drawn(pilot, pilot.app)

    assert snap_compare(app("textual-light"), terminal_size=(120, 40), run_before=present)


def test_present_replay_of_a_record_without_a_curve_says_so(tmp_path: Path) -> None:
    path = tmp_path / "nocurve.json"
    rec = handmade_sweep()
    write_record(
        path, rec.model_copy(update={"steps": rec.steps[1:]})
    )  # 2 pairs only: no 1-pair reading
    source = ReplaySource(read_record(path), speed=1000.0)

    async def go() -> None:
        a = IpctopApp(source, present=True)
        async with a.run_test(size=(100, 30)) as pilot:
            await all_taken(pilot)
            a.redraw_now()
            await pilot.pause(0.3)
            assert isinstance(a.screen, PresentScreen)
            assert figure(a, "fig-scal") == "-"  # no 1-pair reading: no scalability
            # Nothing settled at 1 pair: the screen says what is missing, and stays up.
            text = " ".join(str(w.render()) for w in a.screen.query("Static"))
            assert "no scalability %: the curve has no settled 1-pair reading" in text
            assert a.is_running

    asyncio.run(go())
    source.stop()


def _baseline(points: tuple[ScalingPoint, ...], tmp_path: Path) -> Baseline:
    path = tmp_path / "base.json"
    write_record(path, handmade_sweep())
    base = load_baseline(path)
    return replace(base, points=points)


def test_verdict_names_a_baseline_without_a_curve(tmp_path: Path) -> None:
    base = _baseline((), tmp_path)
    digits, line = baseline_verdict(base, [], 1)
    assert digits == "" and "has no scaling curve" in line.plain


def test_verdict_says_no_difference_shown_when_the_intervals_overlap(tmp_path: Path) -> None:
    wobble = (0.99, 1.01, 1.0, 0.98, 1.02, 1.0)
    theirs = ScalingPoint.from_repeats(1, [1e5], windows=[1e5 * w for w in wobble])
    mine = ScalingPoint.from_repeats(1, [1.002e5], windows=[1.002e5 * w for w in wobble[::-1]])
    digits, line = baseline_verdict(_baseline((theirs,), tmp_path), [mine], 1)
    assert "no difference shown" in line.plain
    slower = ScalingPoint.from_repeats(1, [0.8e5], windows=[0.8e5 * w for w in wobble])
    digits, line = baseline_verdict(_baseline((theirs,), tmp_path), [slower], 1)
    assert line.plain.startswith("regression") and digits.startswith("-2")
    # Words apart ("regressionvs baseline" was one), and the baseline named by its record.
    assert line.plain.startswith("regression against baseline ")


def test_verdict_names_the_baseline_by_what_differs_from_the_run(tmp_path: Path) -> None:
    wobble = (0.99, 1.01, 1.0, 0.98, 1.02, 1.0)
    theirs = ScalingPoint.from_repeats(1, [1e5], windows=[1e5 * w for w in wobble])
    slower = ScalingPoint.from_repeats(1, [0.8e5], windows=[0.8e5 * w for w in wobble])
    base = _baseline((theirs,), tmp_path)
    same = base.record.config.placement
    info = app().info.changed(placement="cross", workload=base.record.config.workload)
    info = info.changed(mode=base.record.config.mode, engine=base.record.config.engine)
    info = info.changed(kernel=base.kernel)
    _digits, line = baseline_verdict(base, [slower], 1, info)
    assert f"against baseline placement {same}:" in line.plain, line.plain
    assert "kernel" not in line.plain  # the same kernel is not what the comparison is about
    alike = info.changed(placement=same)
    assert base.label_for(alike) == f"baseline {base.name} (same settings)"


def test_block_digits_are_solid_and_tell_every_glyph_apart() -> None:
    drawn = {c: render_digits(c) for c in "0123456789+-."}
    assert len({tuple(rows) for rows in drawn.values()}) == len(drawn)
    for c, rows in drawn.items():
        assert len(rows) == 3 and set("".join(rows)) <= set("▀▄█ "), c  # blocks, no strokes
    assert digits_width("1.25") == len(render_digits("1.25")[0]) == 13


def test_verdict_without_windows_gives_the_figure_and_says_why(tmp_path: Path) -> None:
    theirs = ScalingPoint.from_repeats(1, [1e5])
    mine = ScalingPoint.from_repeats(1, [1.1e5])
    digits, line = baseline_verdict(_baseline((theirs,), tmp_path), [mine], 1)
    assert digits == "+10" and "no interval" in line.plain


@needs_tmux
@two_cpus
@pytest.mark.timeout(TEST_TIMEOUT)
@pytest.mark.parametrize("theme", THEMES)
def test_tmux_presentation_mode_is_readable_at_7_to_1(theme: str) -> None:
    pane = app_pane(theme, "256", "--pairs", "2", "--present")
    try:
        pane.wait_for("scalability %")
        pane.wait_for("engine native")
        time.sleep(1.5)
        assert_readable(pane, f"{theme} 256, presentation", minimum=AAA)
        pane.quit()
    finally:
        pane.kill()


def test_fake_fixed_run_with_a_baseline_without_a_curve_draws_and_says_so(tmp_path: Path) -> None:
    """A record with no points as --baseline: the chart and presentation stay up and say so."""
    base = _baseline((), tmp_path)

    async def go() -> None:
        a = IpctopApp(fixed_source_(), own_cpu=lambda _t: 1.4, baseline=base, present=True)
        async with a.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            a.redraw_now()
            await pilot.pause(0.3)
            verdict = str(a.screen.query_one("#present-verdict").render())
            assert "has no scaling curve" in verdict
            await pilot.press("F")
            await drawn(pilot, a)
            a.redraw_now()
            await drawn(pilot, a)
            assert a.is_running

    asyncio.run(go())


def test_fake_fixed_run_presentation_too_small_says_so_and_recovers() -> None:
    """Below the size its figures need, presentation mode says so instead of cutting a figure."""

    async def go() -> None:
        a = IpctopApp(fixed_source_(), present=True, own_cpu=lambda _t: 1.0)
        async with a.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert isinstance(a.screen, PresentScreen)
            for size in ((40, 10), (20, 6), (60, 24), (100, 15)):
                await pilot.resize_terminal(*size)
                await drawn(pilot, a)
                note = a.screen.query_one("#present-too-small")
                assert note.region.height > 0, size
                assert f"terminal {size[0]}x{size[1]}: presentation mode needs" in str(
                    note.render()
                )
                assert all(f.region.height == 0 for f in a.screen.query(Figure)), size
            await pilot.resize_terminal(80, 24)  # the figures by what each needs, 16 lines
            await drawn(pilot, a)
            assert a.screen.query_one("#present-too-small").region.height == 0
            assert figure(a, "fig-pairs") != "-"
            assert all(f.region.width >= f.needed() for f in a.screen.query(Figure))
            assert a.is_running

    asyncio.run(go())


def test_verdict_counts_the_live_run_as_a_new_session(tmp_path: Path) -> None:
    runs = [1e5 * w for w in (0.99, 1.0, 1.01)]
    theirs = ScalingPoint.from_repeats(1, runs)
    mine = ScalingPoint.from_repeats(1, [0.97e5])
    base = _baseline((theirs,), tmp_path)
    # The record measured no session spread: the runs' own stands in, and the line says so.
    _digits, line = baseline_verdict(base, [mine], 1)
    assert "n=3/1 runs, session spread unmeasured" in line.plain, line.plain
    # Measured (check --sessions): it joins the interval, and the line needs no caveat.
    spread = Sessions(sessions=5, runs_per_session=3, session_sd_pct=4.0, run_sd_pct=1.0,
                      session_df=4.0)  # fmt: skip
    measured = replace(base, record=base.record.model_copy(update={"sessions": spread}))
    _digits, wide = baseline_verdict(measured, [mine], 1)
    assert "unmeasured" not in wide.plain and wide.plain.startswith("no difference shown")
    assert (
        base.difference(theirs, mine).half_width_pct
        < measured.difference(theirs, mine).half_width_pct
    )
