"""End to end in a real terminal: start ipctop in tmux, press keys, read tmux's cells, quit."""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from conftest import ROOT
from test_tui_records import live, wait_for
from tmux_pane import TEST_TIMEOUT, WAIT, Pane

from ipctop.tui.app import IpctopApp

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

TOAST_EDGE = "▌"  # the left edge Textual draws a notification (toast) with


def ipctop_queues_of(pid: int) -> list[str]:
    """Message queues with ipctop's key prefix that process `pid` sent or received on."""
    out = []
    lines = Path("/proc/sysvipc/msg").read_text().splitlines()
    head = lines[0].split()
    for line in lines[1:]:
        f = dict(zip(head, line.split()))
        key = int(f["key"])
        if (key & 0xFF000000) == 0x1C000000 and pid in (int(f["lspid"]), int(f["lrpid"])):
            out.append(f"{key:#x}")
    return out


@pytest.mark.timeout(TEST_TIMEOUT)
def test_tmux_start_add_pair_read_screen_quit(tmp_path: Path) -> None:
    rc_file = tmp_path / "rc"
    # The shell stays to record the exit code; ipctop runs in the foreground of the pane.
    pane = Pane(f"cd {ROOT}; {sys.executable} -m ipctop; echo $? > {rc_file}; sleep 30", (120, 40))
    try:
        pane.wait_for("pairs 1/")
        (app,) = [c for c in pane.shell().children() if "ipctop" in " ".join(c.cmdline())]
        pid = app.pid
        pane.keys("+")
        shown = pane.wait_for("pairs 2/")

        def thread_rows(shown: str) -> list[str]:
            return [
                ln
                for ln in shown.splitlines()
                if ln.lstrip("│ ").startswith(("0A", "0B", "1A", "1B"))
            ]

        # The header says 2 pairs once the pair is added; its rows come with a later
        # sample, which a loaded box may draw seconds after.
        deadline = time.monotonic() + WAIT
        while len(rows := thread_rows(shown)) < 4 and time.monotonic() < deadline:
            time.sleep(0.2)
            shown = pane.text()
        assert len(rows) >= 4, shown
        assert ipctop_queues_of(pid), "the running pairs own no queue?"
        pane.keys("q")
        deadline = time.monotonic() + WAIT
        while not rc_file.exists():
            assert time.monotonic() < deadline, f"ipctop did not quit:\n{pane.text()}"
            time.sleep(0.1)
        assert rc_file.read_text().strip() == "0"
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        assert ipctop_queues_of(pid) == []
        # The engine's watchdog (if any) leaves once the engine is gone.
        deadline = time.monotonic() + WAIT
        while True:
            left = [
                p.pid
                for p in psutil.process_iter(["cmdline", "ppid"])
                if p.info["ppid"] == pid
                or ("ipctop" in (cmd := " ".join(p.info["cmdline"] or [])) and str(pid) in cmd)
            ]
            if not left:
                break
            assert time.monotonic() < deadline, f"processes left behind: {left}"
            time.sleep(0.2)
    finally:
        pane.kill()


def record_a_session(path: Path) -> None:
    """Six samples of 1 real pair, recorded by the monitor (R stops and writes the file)."""
    app = IpctopApp(live(1), record=str(path))

    async def go() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            rec = app.recording.recorder
            assert rec is not None
            await wait_for(pilot, lambda: rec.samples >= 6, "six recorded samples")
            await pilot.press("R")
            await wait_for(pilot, lambda: not app.recording.active, "the recording to stop")

    asyncio.run(go())


@pytest.mark.timeout(TEST_TIMEOUT)
def test_tmux_a_notice_that_leaves_takes_its_cells_with_it(tmp_path: Path) -> None:
    """Issue 28, finding 8: a toast over the panels left its border (▌) and words behind.

    A finished replay at 80x24 is a still screen: the panels repaint only the lines
    that change, so in a real terminal a toast's cells stayed until the app repainted
    in full once the toast had gone (IpctopApp._unnotify). Read from tmux's own cells;
    without that repaint, 6 to 17 rows still showed ▌ 11 s after the keys.
    """
    path = tmp_path / "session.json"
    record_a_session(path)

    def until(what: Callable[[str], bool], why: str) -> str:
        deadline = time.monotonic() + WAIT
        while not what(shown := pane.text()):
            assert time.monotonic() < deadline, f"timed out waiting for {why}:\n{shown}"
            time.sleep(0.2)
        return shown

    pane = Pane(
        f"cd {ROOT}; {sys.executable} -m ipctop replay {path} --speed 20; sleep 30", (80, 24)
    )
    try:
        until(lambda shown: "replay finished" in shown, "the end of the replay")
        # Notices stacked high (a replay refuses + and -), then the layout changes under
        # them (d: the detail panel comes in): the panels under the toasts were drawn
        # while covered, and repaint only the lines that change.
        for key in ("+", "-", "+", "d"):
            pane.keys(key)
        until(lambda shown: "these samples carry no detail" in shown, "the detail panel")
        # A toast's left edge is ▌ (nothing else on this screen draws one): each notice
        # times out in 4 s, and must take its cells with it.
        shown = until(lambda shown: TOAST_EDGE not in shown, "every notice's cells to go")
        assert "these samples carry no detail" in shown, shown  # the panel they covered
    finally:
        pane.kill()
