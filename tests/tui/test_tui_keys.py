"""Every key is declared once (tui/keys.py) and every binding leads somewhere."""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App

from ipctop.live.fixed_run import fixed_source
from ipctop.tui.app import IpctopApp
from ipctop.tui.demo_app import DemoApp
from ipctop.tui.keys import keys_of
from ipctop.tui.screens.help import HelpScreen

APPS = [IpctopApp, DemoApp]


@pytest.mark.parametrize("cls", APPS, ids=lambda c: c.__name__)
def test_every_binding_has_a_description_and_an_action_that_exists(cls: type) -> None:
    # The bindings Textual merges for the app (its own and its bases'), not our list of them.
    merged = cls._merge_bindings()
    assert merged.key_to_bindings, "no bindings at all"
    for key, found in merged.key_to_bindings.items():
        for binding in found:
            assert binding.description, f"{key}: no description"
            assert callable(getattr(cls, f"action_{binding.action}", None)), (
                f"{key}: no action_{binding.action}"
            )


@pytest.mark.parametrize("cls", APPS, ids=lambda c: c.__name__)
def test_every_binding_is_a_declared_key_with_a_help_line(cls: type) -> None:
    specs = {k.key: k for k in keys_of(cls)}
    # Textual's own that we leave alone (ctrl+q quits) are not ours to declare.
    textuals = set(App._merge_bindings().key_to_bindings) - set(specs)
    ours = {k: b for k, b in cls._merge_bindings().key_to_bindings.items() if k not in textuals}
    assert set(ours) == set(specs)
    for key, found in ours.items():
        (binding,) = found  # one binding per key: a second would be a key declared twice
        assert binding.action == specs[key].action
        assert specs[key].what, f"{key}: nothing for the help screen"


def test_fake_fixed_run_help_and_palette_give_every_key_its_declared_line() -> None:
    async def go() -> None:
        app = IpctopApp(fixed_source(), own_cpu=lambda _t: 1.0)
        async with app.run_test(size=(100, 60)) as pilot:
            await pilot.pause(0.1)
            commands = [c.title for c in app.get_system_commands(app.screen)]
            await pilot.press("question_mark")
            await pilot.pause(0.1)
            assert isinstance(app.screen, HelpScreen)
            keys = app.screen.sections[0]  # the app's own keys come first
            lines = {row.what for row in keys.rows}
            # One row per action: q shares its row with Textual's ctrl+q, whose text leads.
            textuals = {b.action for _, b in App._merge_bindings()}
            for spec in keys_of(IpctopApp):
                assert spec.what in lines or spec.action in textuals, spec
                assert f"{spec.what} ({spec.shown_as})" in commands

    asyncio.run(go())
