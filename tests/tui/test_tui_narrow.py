"""At 60x20 every line is whole (issue 28): the real monitor on real pairs, a replay
of a real recording and the demo, which share the run header.

The header shortens its words and drops its lower fields in run_header.ORDER
rather than end in "…"; the fake fixed run's 60x20 is in test_tui_layout.
"""

from __future__ import annotations

import asyncio

import pytest
from conftest import two_cpus
from test_tui_layout import screen_lines
from test_tui_records import live, wait_for

from ipctop.live.replay_source import ReplaySource
from ipctop.output.records.record_io import read_record
from ipctop.output.records.session_recorder import default_record_path
from ipctop.tui.app import IpctopApp
from ipctop.tui.demo_app import DemoApp
from ipctop.tui.widgets.run_header import ORDER, WORDS, Piece, fit

SIZE = (60, 20)
LOOKS = 12  # redraws looked at per pair count, 0.2 s apart: the header changes as it settles


def whole(app: IpctopApp, header_only: bool = False) -> list[str]:
    """The screen's lines, after asserting that none is cut and the header fits its band."""
    lines = screen_lines(app)
    looked = lines[:2] if header_only else lines
    assert not [line for line in looked if "…" in line], "\n".join(lines)
    header = app.run_header
    assert header is not None
    assert all(len(x) <= header.size.width for x in header.text.plain.splitlines()), lines
    return lines


def pairs_of(app: IpctopApp) -> int:
    s = app.session.latest
    return s.pairs if s is not None else 0


async def look(pilot, app: IpctopApp, seen: list[str]) -> None:
    for _ in range(LOOKS):
        app.redraw_now()
        await pilot.pause(0.2)
        seen.append(whole(app)[1])


def test_fit_shortens_in_the_stated_order_and_never_cuts() -> None:
    pieces: list[Piece] = [
        ("pairs 2/4 CPUs", "", 99),
        (" · scalability 240 %", "", 99, ((WORDS, " · scal 240 %"),)),
        (" (linear 200 %)", "", ORDER[3]),
    ]
    assert fit(pieces, 80).plain == "pairs 2/4 CPUs · scalability 240 % (linear 200 %)"
    assert fit(pieces, 34).plain == "pairs 2/4 CPUs · scalability 240 %"  # a field goes first
    assert fit(pieces, 27).plain == "pairs 2/4 CPUs · scal 240 %"  # then the word shortens
    # Narrower than the shortest form: full words, for the band to cut.
    assert fit(pieces, 10).plain == "pairs 2/4 CPUs · scalability 240 %"


@two_cpus
def test_real_monitor_at_60x20_every_line_whole() -> None:
    """1 pair, then + to 2: the header as it settles, each redraw whole."""
    source = live(1)

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.session.count >= 2, "a first reading")
            seen: list[str] = []
            await look(pilot, app, seen)
            await pilot.press("plus")
            await wait_for(pilot, lambda: pairs_of(app) == 2, "the second pair")
            await look(pilot, app, seen)
            assert any(line.lstrip().startswith("pairs 2/") for line in seen), seen
            assert any(" scal" in line for line in seen), seen  # named, shortened or not

    asyncio.run(go())


@two_cpus
def test_real_monitor_started_at_two_pairs_says_why_no_scalability_whole() -> None:
    source = live(2)

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.session.count >= 2, "a first reading")
            seen: list[str] = []
            await look(pilot, app, seen)
            # No 1-pair reading: "scal -" stays, its reason as far as it fits.
            assert all("scal -" in line or "scalability -" in line for line in seen), seen

    asyncio.run(go())


@two_cpus
def test_replay_of_a_real_recording_at_60x20_every_line_whole(tmp_path) -> None:
    # The recorder's own file name, as a user's replay would carry it.
    path = default_record_path(tmp_path, "sysv-msg")
    source = live(1)

    async def record() -> None:
        app = IpctopApp(source, record=str(path))
        async with app.run_test(size=SIZE) as pilot:
            rec = app.recording.recorder
            assert rec is not None
            await wait_for(pilot, lambda: rec.samples >= 6, "six recorded samples")
            app.redraw_now()
            await pilot.pause(0.2)
            # The header with its REC note; the status line's "recording to <path>" is
            # a message with a temporary directory's path, longer than 60 columns.
            assert "REC" in whole(app, header_only=True)[1]
            await pilot.press("R")
            await wait_for(pilot, lambda: not app.recording.active, "the recording to stop")

    asyncio.run(record())
    replay = ReplaySource(read_record(path), speed=20.0)

    async def play() -> None:
        app = IpctopApp(replay)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: replay.finished, "the end of the replay")
            app.redraw_now()
            await pilot.pause(0.2)
            # Header and panels; the status line's "replay finished: N samples of <file>"
            # is a message longer than 60 columns with the recorder's file name (not
            # shortened yet: reported on issue 28).
            lines = whole(app, header_only=True)
            assert not [x for x in lines[2:-2] if "…" in x], "\n".join(lines)
            assert "REPLAY" in lines[0], lines

    asyncio.run(play())


@two_cpus
def test_demo_at_60x20_every_line_whole() -> None:
    source = live(1)

    async def go() -> None:
        app = DemoApp(source, pace=600.0)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.session.count >= 2, "a first reading")
            seen: list[str] = []
            await look(pilot, app, seen)
            await pilot.press("n")  # the next step: a pair added
            await wait_for(pilot, lambda: pairs_of(app) == 2, "the second pair")
            await look(pilot, app, seen)

    asyncio.run(go())


@pytest.mark.parametrize("width", range(14, 121))
def test_the_cpus_border_is_whole_at_every_width_and_keeps_what_matters(width: int) -> None:
    # At 80x24 in tmux it read "CPUs of this run (c: all)…" with PSI beside it.
    from ipctop.tui.widgets.cpus_panel import cpus_subtitle

    for show_all in (False, True):
        for psi in (None, 100.0):
            for stolen in ("", "cpu0,cpu1"):
                text = cpus_subtitle(show_all, psi, stolen, width)
                if len(text) > width:  # too narrow for any form: the shortest one
                    assert text == cpus_subtitle(show_all, psi, stolen, 1) and width < 30
                    continue
                if stolen:
                    assert "! steal" in text
                if psi is not None and width >= (60 if stolen else 40):
                    assert "PSI 100 %" in text  # a full steal warning comes first
                if width >= 80:
                    assert "CPUs" in text and (not stolen or "cpu0,cpu1" in text)
