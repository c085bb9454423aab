"""`ipctop demo`: the scripted story on the real engine, stepped and held by keys."""

from __future__ import annotations

import asyncio

from conftest import two_cpus
from test_tui_records import live, wait_for

from ipctop.tui.demo_app import DemoApp, story
from ipctop.tui.screens.present import PresentScreen
from ipctop.tui.widgets.bands import NarrationBand


def test_story_on_one_cpu_skips_adding_pairs() -> None:
    captions = [s.caption for s in story(1)]
    assert captions[0].startswith("1 pair")
    assert not any("add a pair" in c for c in captions)
    assert captions[-1].startswith("the verdict")


def test_story_adds_a_pair_per_cpu() -> None:
    adds = [s for s in story(4) if "add a pair" in s.caption]
    assert [a.caption.split(":")[1].split()[0] for a in adds] == ["2", "3", "4"]


@two_cpus
def test_demo_steps_through_the_story_on_the_real_engine() -> None:
    source = live(1)

    async def go() -> None:
        # A long pace: only the keys move the story, so each step can be checked.
        app = DemoApp(source, pace=600.0)
        async with app.run_test(size=(120, 40)) as pilot:
            assert app.step == 0
            await wait_for(pilot, lambda: app.session.count > 0, "a first sample")
            app.redraw_now()
            band = app.query_one("#narration", NarrationBand)
            assert "step 1 of 4" in band.said.plain
            assert "DEMO" not in app.run_header.text.plain  # the header is the run's alone
            assert "waiting for the 1-pair reading to settle" in band.said.plain or (
                "settled: the next step in" in band.said.plain
            )
            await pilot.press("space")
            assert app.held
            assert "held: space goes on" in band.said.plain
            app._tick()  # settled, but held: the story stays
            assert app.step == 0
            await pilot.press("space")
            await pilot.press("n")
            assert app.step == 1
            await wait_for(pilot, lambda: source.pair_count() == 2, "the second pair")
            # Settling depends on the box's load; the baseline is whatever settled so far.
            settled = [p.pairs for p in app.session.points() if p.settled]
            await pilot.press("n")  # cross placement, the same-core curve as the baseline
            await wait_for(pilot, lambda: app.info.config.placement == "cross", "cross placement")
            assert app.baseline is not None and app.baseline.name == "same-core"
            assert [p.pairs for p in app.baseline.points] == settled
            # Named by what differs from the run shown, not by its (same) kernel.
            assert app.baseline.label_for(app.info) == "baseline placement same"
            assert source.pair_count() == 2
            await pilot.press("n")

            def told() -> str:
                """What the presentation's own band says (the monitor has one too)."""
                if not isinstance(app.screen, PresentScreen):
                    return ""
                bands = app.screen.query(NarrationBand)
                return bands.first().said.plain if bands else ""

            # The presentation's band is told at the story's next tick once it is
            # mounted: a loaded box may run that later than a fixed 0.3 s.
            await wait_for(pilot, lambda: "step 4 of 4" in told(), "the story on the presentation")
            assert isinstance(app.screen, PresentScreen)
            assert "step 4 of 4" in told() and "the story is told" in told()
            await pilot.press("n")  # past the end: says so, stays
            assert app.step == 3 and app.is_running

    asyncio.run(go())
    source.stop()


@two_cpus
def test_demo_narration_is_whole_at_80_and_120_columns() -> None:
    """Every step's caption and what it waits for, word for word in its band, never cut."""

    async def go(size: tuple[int, int]) -> None:
        app = DemoApp(source, pace=600.0)
        async with app.run_test(size=size) as pilot:
            await wait_for(pilot, lambda: app.session.count > 0, "a first sample")
            for step in app.steps[:2]:
                app._tell()
                await pilot.pause(0.2)
                band = app.query_one("#narration", NarrationBand)
                update = app.screen._compositor.render_update(full=True)
                lines = ["".join(seg.text for seg in strip) for strip in update.strips]
                r = band.content_region
                shown = " ".join(line[r.x : r.right].strip() for line in lines[r.y : r.bottom])
                assert step.caption in " ".join(shown.split()), (size, shown)
                assert "…" not in shown
                assert " ".join(app.waiting().split()[:4]) in shown
                if step is app.steps[0]:
                    await pilot.press("n")
                    await wait_for(pilot, lambda: source.pair_count() == 2, "the second pair")

    for size in ((80, 24), (120, 40)):
        source = live(1)
        try:
            asyncio.run(go(size))
        finally:
            source.stop()
