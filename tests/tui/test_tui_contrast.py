"""Readable on a real terminal: every visible character at WCAG AA (4.5:1) or better.

The real app runs in tmux on the real engine, in each theme and colour depth;
the test reads the pane's ANSI output (`tmux capture-pane -e -p`), as a
terminal would show it, not the SVG export, which paints the theme's
background for every cell.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import time

import pytest
from ansi_contrast import AA, describe, ratio, unreadable
from conftest import ROOT, two_cpus
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from tmux_pane import TEST_TIMEOUT, WAIT, Pane

from ipctop.tui.contrast_floor import ContrastFloor, contrast

THEMES = ("textual-dark", "textual-light")
DEPTHS = ("truecolor", "256", "standard")

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def app_pane(theme: str, depth: str, *args: str, size: tuple[int, int] = (120, 40)) -> Pane:
    # The app's colour depth is what a terminal of that depth makes rich choose;
    # inside tmux TERM is tmux's own, so the depth is named directly.
    # tmux may start the pane at its default size and resize it a moment
    # later; the app starts once the pane has the size asked for.
    wait = f'while [ "$(stty size)" != "{size[1]} {size[0]}" ]; do sleep 0.05; done'
    cmd = (
        f"{wait}; cd {ROOT}; TEXTUAL_COLOR_SYSTEM={depth} {sys.executable} -m ipctop --theme {theme}"
        f" {' '.join(args)}; echo ipctop-exited; sleep 30"
    )
    return Pane(cmd, size)


def assert_readable(pane: Pane, what: str, minimum: float = AA) -> None:
    ansi = pane.text(ansi=True)
    bad = unreadable(ansi, minimum)
    assert not bad, f"{what}: " + describe(bad, pane.text())


@needs_tmux
@two_cpus
@pytest.mark.timeout(TEST_TIMEOUT)
@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("theme", THEMES)
def test_tmux_every_character_readable(theme: str, depth: str) -> None:
    pane = app_pane(theme, depth, "--pairs", "2")
    try:
        pane.wait_for("pairs 2/")
        time.sleep(1.5)  # a few samples: sparklines, the band of pair 1, the chart
        assert_readable(pane, f"{theme} {depth}, 2 pairs")
        pane.keys("d")
        pane.wait_for("Where the time goes")
        time.sleep(1.0)
        assert_readable(pane, f"{theme} {depth}, detail panel")
        pane.keys("?")
        pane.wait_for("add a pair on the next CPU")
        assert_readable(pane, f"{theme} {depth}, help")
        pane.keys("?")  # not Escape: Escape then q reads as alt+q
        deadline = time.monotonic() + WAIT
        while "add a pair on the next CPU" in pane.text():
            assert time.monotonic() < deadline, "the help did not close"
            time.sleep(0.1)
        pane.quit()
    finally:
        pane.kill()


# -- the pieces, in process -------------------------------------------------------


def test_contrast_ratio_matches_wcag_examples() -> None:
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast((119, 119, 119), (255, 255, 255)) == pytest.approx(4.48, abs=0.01)
    assert ratio((118, 118, 118), (255, 255, 255)) >= AA  # the lightest AA grey on white


@pytest.mark.parametrize("depth", DEPTHS)
def test_floor_lifts_text_drawn_in_its_band_colour(depth: str) -> None:
    """The issue's case: colour 253 text on a colour-253 band, in every depth."""
    floor = ContrastFloor(depth)
    band = Style(color="#e0e0e0", bgcolor="#dadada")
    (seg,) = floor.apply([Segment("1A", band)], Color(18, 18, 18))
    assert seg.style.bgcolor.get_truecolor() == band.bgcolor.get_truecolor()
    shown = contrast(floor.shown(seg.style.color), floor.shown(seg.style.bgcolor))
    assert shown >= AA


@pytest.mark.parametrize("depth", DEPTHS)
def test_floor_gives_a_background_to_every_segment(depth: str) -> None:
    """No segment may fall through to the terminal's own background (dark text on dark)."""
    floor = ContrastFloor(depth)
    out = floor.apply(
        [Segment("pair", Style(color="#1f1f1f")), Segment(" ", None), Segment("x")],
        Color(224, 224, 224),
    )
    for seg in out:
        assert seg.style.bgcolor is not None and not seg.style.bgcolor.is_default
        assert seg.style.color is not None and not seg.style.color.is_default
        assert contrast(floor.shown(seg.style.color), floor.shown(seg.style.bgcolor)) >= AA


def test_floor_moves_a_background_no_text_colour_passes_on() -> None:
    """Presentation's 7:1 in 256 colours: white on grey 59 (a toast) is 6.4:1 at best."""
    floor = ContrastFloor("256")
    floor.set_minimum(7.0)
    (seg,) = floor.apply([Segment("contention", Style(color="#ffffff", bgcolor="#5f5f5f"))],
                         Color(18, 18, 18))  # fmt: skip
    assert contrast(floor.shown(seg.style.color), floor.shown(seg.style.bgcolor)) >= 7.0


def test_floor_keeps_readable_colours_as_they_are() -> None:
    floor = ContrastFloor("truecolor")
    style = Style(color="#ffffff", bgcolor="#121212", bold=True)
    (seg,) = floor.apply([Segment("ok", style)], Color(18, 18, 18))
    assert seg.style.color == style.color and seg.style.bold


def test_floor_resolves_reverse_into_plain_colours() -> None:
    floor = ContrastFloor("256")
    (seg,) = floor.apply([Segment("0≠1", Style(color="#b93c5b", reverse=True))], Color(18, 18, 18))
    assert not seg.style.reverse
    assert seg.style.bgcolor.get_truecolor() == (0xB9, 0x3C, 0x5B)
    assert contrast(floor.shown(seg.style.color), floor.shown(seg.style.bgcolor)) >= AA


@pytest.mark.parametrize("theme", THEMES)
def test_band_rows_resolve_their_alpha_background(theme: str) -> None:
    """Without the floor: the band's own style is readable (its alpha blended, not opaque)."""
    from ipctop.live.fixed_run import fixed_source
    from ipctop.tui.app import IpctopApp

    async def go() -> None:
        a = IpctopApp(fixed_source(), theme=theme, own_cpu=lambda _t: 1.0)
        async with a.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.3)
            panel = a.threads_panel
            for piece in (None, "spark", "dim", "heading"):
                for row in (None, "band"):
                    style = panel._style(piece, row)
                    fg = style.color.get_truecolor()
                    bg = style.bgcolor.get_truecolor()
                    assert fg != bg, (piece, row, style)
                    if piece != "spark":  # the accent is a colour, judged by the floor
                        assert ratio(tuple(fg), tuple(bg)) >= AA, (piece, row, style)

    asyncio.run(go())
