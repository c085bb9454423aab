"""Key d: where the time goes, from the real engine and from a fake fixed run."""

from __future__ import annotations

import asyncio
import os
import time

from screen_waits import all_taken, drawn

from ipctop.engine.config import RunConfig
from ipctop.engine.costs import Costs, CpuCost, ThreadCost
from ipctop.live.fixed_run import fixed_samples, fixed_source
from ipctop.live.sources import LiveSource
from ipctop.tui.app import IpctopApp
from ipctop.tui.widgets.detail_panel import DetailPanel, detail_lines, fit_lines

CPUS = tuple(sorted(os.sched_getaffinity(0))[:2])
TIMEOUT = 30.0  # seconds to wait for the engine; generous for a busy box


async def wait_for(pilot, what, why: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {why}")
        await pilot.pause(0.05)


def panel_text(panel: DetailPanel) -> list[str]:
    n = len(panel._fit(200))
    return [panel.heading(200)] + [panel.row(i, 200)[0][0][0] for i in range(n)]


def test_d_shows_per_round_costs_of_the_real_engine_and_hides_them_again() -> None:
    source = LiveSource(RunConfig(cpus=CPUS), interval=0.2)
    source.open(1)

    def measured() -> Costs | None:
        s = app.session.latest
        c = s.costs if s is not None else None
        return c if c is not None and c.threads and c.cpu_us_per_round else None

    async def go() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.3)
            panel = app.query_one(DetailPanel)
            assert not panel.display
            assert source._sampler is not None and not source._sampler.detail
            await pilot.press("d")
            await wait_for(pilot, lambda: measured() is not None, "a detailed sample")
            assert panel.display and source._sampler.detail
            # No await between the redraw and the reads: the panel shows this very sample.
            app.redraw_now()
            costs = measured()
            assert costs is not None
            lines = panel_text(panel)
            by_role = {t.role: t for t in costs.threads}
            assert set(by_role) == {"A", "B"}
            for t in costs.threads:
                assert t.cpu_us_per_round is not None and t.cpu_us_per_round > 0
            head = next(line for line in lines if line.startswith("CPU per round"))
            assert head.startswith(f"CPU per round {costs.cpu_us_per_round:,.2f} µs")
            row_0a = next(line for line in lines if line.split()[:1] == ["0A"]).split()
            assert row_0a[1] == f"{by_role['A'].cpu_us_per_round:.2f}"
            assert row_0a[-1] == f"{dict(costs.rtt_us)[0]:.2f}"  # µs per round trip
            await pilot.press("d")
            await wait_for(pilot, lambda: not source._sampler.detail, "detail off")
            assert not panel.display
            n = app.session.count
            await wait_for(pilot, lambda: app.session.count >= n + 2, "two more samples")
            assert app.session.latest.costs is None, "detail off still reads the costs"

    app = IpctopApp(source)
    asyncio.run(go())
    assert source.engine._closed


def test_fake_missing_sources_read_na_with_why_never_zero() -> None:
    costs = Costs(
        threads=(ThreadCost(0, "A", 3.0, 1.0, 2.0, None, None, 1.0, 0.0),),
        cpus=(CpuCost(0, 0.001, 0.0, None, None, None),),
        rtt_us=((0, 4.0),),
        system_share_pct=None,
        cpu_us_per_round=3.0,
        cpu_pressure_avg10=None,
        missing={"run delay": "no /proc/<pid>/task/<tid>/schedstat (fake)"},
    )
    lines = [line.text for line in detail_lines(costs)]
    row = next(line for line in lines if line.split()[:1] == ["0A"])
    cells = row.split()
    assert cells[4] == "n/a" and cells[5] == "n/a"  # run delay and migrations
    assert cells[6] == "1.00" and cells[7] == "0.00"  # a real zero stays a zero
    cpu_row = next(line for line in lines if line.split()[:1] == ["0"])
    assert cpu_row.split()[3:] == ["n/a", "n/a", "n/a"]
    assert "run delay [delay]: n/a (no /proc/<pid>/task/<tid>/schedstat (fake))" in lines
    assert detail_lines(None)[0].text.startswith("waiting")


def test_fake_fixed_run_carries_costs_in_every_sample() -> None:
    for s in fixed_samples():
        c = s.costs
        assert c is not None and len(c.threads) == 2 * s.pairs
        assert "wake-ups" in c.missing and c.cpus[0].wakeups_per_s is None


def test_fake_fixed_run_detail_panel(snap_compare) -> None:
    async def detail_on(pilot) -> None:
        a = pilot.app
        await all_taken(pilot)
        await pilot.press("d")
        a.redraw_now()
        await drawn(pilot, a)
        text = panel_text(a.query_one(DetailPanel))
        assert any("n/a (" in line for line in text)

    app = IpctopApp(fixed_source(), own_cpu=lambda _tids: 1.4)
    assert snap_compare(app, terminal_size=(120, 40), run_before=detail_on)


def test_fake_narrow_detail_wraps_prose_and_hides_whole_columns_by_name() -> None:
    why = "no /proc/schedstat (kernel without CONFIG_SCHEDSTATS, or a fake one like this)"
    costs = Costs(
        threads=(ThreadCost(0, "A", 3.0, 1.0, 2.0, 0.5, 0, 1.0, 0.0),),
        cpus=(CpuCost(0, 0.001, 0.0, None, None, None),),
        rtt_us=((0, 4.0),),
        system_share_pct=None,
        cpu_us_per_round=3.0,
        cpu_pressure_avg10=None,
        missing={"wake-ups": why},
    )
    wide = fit_lines(detail_lines(costs), 200)
    for width in (44, 68):
        lines = fit_lines(detail_lines(costs), width)
        assert all(len(line.text) <= width for line in lines), width
        text = " ".join(" ".join(line.text.split()) for line in lines)
        assert why in text  # wrapped, whole
        row = next(line for line in lines if line.text.split()[:1] == ["0A"])
        full = next(line for line in wide if line.text.split()[:1] == ["0A"])
        assert full.text.startswith(row.text)  # whole cells, a prefix of the row
        if width == 44:
            assert "hidden at this width: vcsw, ivcsw, rtt µs" in text
