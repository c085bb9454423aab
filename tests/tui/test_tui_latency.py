"""The latency panel (key l) and a pair's histogram (key h) on the real engine."""

from __future__ import annotations

import pytest
from test_tui_live import live, run, wait_for

from ipctop.engine.objects import _native
from ipctop.tui.app import IpctopApp
from ipctop.tui.screens.histogram import HistogramScreen, log_bins
from ipctop.tui.widgets.latency_panel import LatencyPanel

native = pytest.mark.skipif(_native is None, reason="the native extension is not built")


@native
def test_l_shows_each_pairs_percentiles_and_h_its_histogram() -> None:
    source = live(2, workload="sysv-sem")

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            panel = app.query_one(LatencyPanel)
            assert not panel.display
            await pilot.press("l")
            assert panel.display
            await wait_for(pilot, lambda: len(panel._rows) == 3, "two pairs and all")
            await wait_for(
                pilot, lambda: all(p.rtt.n > 0 for p in panel._rows), "timed rounds in each"
            )
            assert [p.pair for p in panel._rows] == [0, 1, -1]
            for p in panel._rows:
                assert 0 < p.oneway.p50 < p.rtt.p50 <= p.rtt.p99
            await wait_for(pilot, lambda: len(app.session.latency_p99.get(0, ())) >= 2, "history")
            panel.action_move(1)
            assert panel.selected == 1
            await pilot.press("h")
            await wait_for(pilot, lambda: isinstance(app.screen, HistogramScreen), "histogram")
            series = app.screen._series
            assert sum(c for _, c in series["round trip (A)"]) > 0
            await pilot.press("escape")
            scaling = app.scaling_panel
            await pilot.press("P")
            assert scaling.metric == "p99"
            await wait_for(pilot, lambda: app.session.p99_curve() != [], "a p99 point")
            ((pairs, p99),) = app.session.p99_curve()
            assert pairs == 2 and p99 > 0
            await wait_for(pilot, lambda: scaling._drawn == ("p99", ((2, p99),)) or
                           scaling._drawn[0] == "p99", "the p99 curve drawn")  # fmt: skip
            await pilot.press("P")
            assert scaling.metric == "ops"

    run(go())
    assert source.engine._closed, "closing the app stops the engine"


@native
def test_above_256_ends_the_panel_keeps_the_last_reading_and_says_its_step() -> None:
    source = live(129)  # 258 ends: latency is read every 2 s (engine/latency_pace.py)

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("l")
            panel = app.query_one(LatencyPanel)
            await wait_for(pilot, lambda: len(panel._rows) == 130, "129 pairs and all")
            assert "read every 2 s" in str(panel.border_subtitle)
            # A sample between readings carries none; the panel still shows the last.
            await wait_for(pilot, lambda: app.session.latest is not None
                           and not app.session.latest.latency, "a sample between readings")  # fmt: skip
            panel.update_from(app.session)
            assert len(panel._rows) == 130 and panel._rows == list(app.session.latency)

    run(go())
    assert source.engine._closed


@native
def test_python_engine_panel_says_there_is_no_latency() -> None:
    source = live(1, engine="python")

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("l")
            panel = app.query_one(LatencyPanel)
            await wait_for(pilot, lambda: app.session.latest is not None, "a sample")
            # Drawn at the app's next (throttled) redraw, which a loaded box may run
            # later than a fixed 0.3 s after the sample.
            await wait_for(pilot, lambda: "no latency" in panel._note, "the panel's note")
            assert panel._rows == [] and "no latency" in panel._note
            await pilot.press("h")
            assert not isinstance(app.screen, HistogramScreen)

    run(go())


def test_log_bins_keep_every_count_on_a_log_axis() -> None:
    points = [(1000.0, 5), (2000.0, 3), (1e6, 1)]
    binned = log_bins(points, bins=10)
    assert sum(c for _, c in binned) == 9
    assert binned[0][1] == 5 and binned[-1][1] == 1


def test_x_shows_a_planted_matrix_record_in_the_monitor(tmp_path) -> None:
    from textual.widgets import Input

    from ipctop.engine.latency import LatencySummary
    from ipctop.engine.matrix_runs import Cell
    from ipctop.output.records.matrix_record import MatrixConfig, MatrixRecord, write_matrix
    from ipctop.output.records.record_box import Box
    from ipctop.tui.screens.matrix_view import MatrixScreen
    from ipctop.tui.screens.prompts import PathInputScreen

    s = LatencySummary(1000, 5000.0, 4000.0, 9000.0, 12000.0, 20000.0)
    cells = [Cell("sysv-sem", a, b, "same CPU" if a == b else "shared LLC", s, s, s, 1.0)
             for a in (0, 1) for b in (0, 1)]  # fmt: skip
    path = tmp_path / "m.json"
    write_matrix(path, MatrixRecord(Box(kernel_release="planted"), MatrixConfig(), cells))
    source = live(1)

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("x")
            await wait_for(pilot, lambda: isinstance(app.screen, PathInputScreen), "the prompt")
            # Not a key per character: after each key the pilot waits for the process
            # to go idle, which a process running pair threads never does (up to 2 s a
            # key, so a 70-character tmp path timed the test out).
            app.screen.query_one(Input).value = str(path)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, MatrixScreen), "the matrix")
            text = app.screen.shown
            assert "one-way p50" in text and "shared LLC" in text and "4µs" in text
            await pilot.press("9")
            assert "one-way p99" in app.screen.shown
            await pilot.press("escape")

    run(go())
    assert source.engine._closed


def test_latency_heading_is_whole_at_every_width() -> None:
    """The history column goes before its heading is cut ("rtt p9" at 120 columns)."""
    from ipctop.tui.widgets.latency_panel import TABLE, LatencyPanel, spark_width

    panel = LatencyPanel()
    for width in range(TABLE, TABLE + 40):
        head = panel.heading(width)
        assert len(head) <= width, (width, head)
        assert head.endswith(("p99.9", "rtt p99 history", "p99 hist")), (width, head)
        assert spark_width(width) == 0 or TABLE + 2 + spark_width(width) <= width
