"""The help screen (key ?) lists every key the monitor answers, generated from its bindings."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.binding import Binding
from textual.widgets import Static

import ipctop.tui.app
from ipctop.live.fixed_run import fixed_source
from ipctop.tui.app import IpctopApp
from ipctop.tui.screens.help import HelpScreen
from ipctop.tui.screens.key_list import SCREENS, key_display, own_bindings


async def help_text(a: IpctopApp) -> str:
    async with a.run_test(size=(120, 60)) as pilot:
        await pilot.pause(0.2)
        await pilot.press("question_mark")
        await pilot.pause(0.2)
        assert isinstance(a.screen, HelpScreen)
        text = str(a.screen.query_one(Static).render())
        bindings = [b for _, b in a._bindings]  # the app's, Textual's own (^q, ^p) too
        for node in a.screen_stack[0].walk_children():
            bindings += own_bindings(type(node))
        for _, screen in SCREENS:
            bindings += own_bindings(screen)
        assert len(bindings) > 30
        missing = [b.key for b in bindings if f" {key_display(a, b)} " not in text]
        assert not missing, f"keys missing from the help: {missing}\n{text}"
        await pilot.press("question_mark")
        await pilot.pause(0.1)
        assert not isinstance(a.screen, HelpScreen)
    return text


def test_fake_fixed_run_help_lists_every_binding_of_the_app_its_panels_and_screens() -> None:
    a = IpctopApp(fixed_source(), own_cpu=lambda _t: 1.0)
    text = asyncio.run(help_text(a))
    # the long texts, not just the footer's one word
    assert "add a pair on the next CPU" in text
    assert "previous pair" in text  # the latency panel's own keys
    assert "In presentation mode (F)" in text
    assert "F / esc  leave presentation" in text  # each key of "F,escape" as itself
    assert "^c  quit like q; a record being made is marked interrupted" in text  # its tooltip
    # What the scaling table's words and the baseline's colours mean (issue 23).
    assert "says rising or falling" in text
    assert "only where its verdict holds Holm-adjusted over every settled point judged" in text


def test_fake_fixed_run_a_binding_added_by_a_subclass_shows_in_the_help() -> None:
    """Generated, not listed: the demo's keys (n, space) arrive this way too."""

    class Extra(IpctopApp):
        # a relative CSS_PATH is read beside the subclass's module
        CSS_PATH = str(Path(ipctop.tui.app.__file__).with_name("app.tcss"))
        BINDINGS = [Binding("z", "bell", "bell", tooltip="ring the terminal bell")]

    text = asyncio.run(help_text(Extra(fixed_source(), own_cpu=lambda _t: 1.0)))
    assert "ring the terminal bell" in text
