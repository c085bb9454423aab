"""Issue 16, part 2: the monitor never divides by a zero rate, a picker answered twice
does not pop the main screen, and a monitor that dies exits 1 with one line.

In a real pseudo-terminal where keys matter; the autouse fixture checks leaks.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest
from terminal import DOWN, ENTER, ESCAPE, ROOT, Terminal
from test_fault_records import make
from textual.app import App, ComposeResult

from ipctop.analysis.scaling import ScalingPoint
from ipctop.tui.widgets.scaling_panel import ScalingPanel

ANSI = re.compile(r"\x1b\[[0-9;?<>=$]*[a-zA-Z]|\x1b\][^\x07]*\x07|\x07")


def plain(text: str) -> str:
    return ANSI.sub("", text)


class ChartOnly(App):
    def compose(self) -> ComposeResult:
        yield ScalingPanel()


@pytest.mark.parametrize(
    "points",
    [
        [ScalingPoint(1, 0.0, settled=True)],
        [ScalingPoint(1, 0.0, settled=True), ScalingPoint(2, 0.0, settled=False)],
        [ScalingPoint(1, 0.0, settled=False)],
    ],
    ids=["one-zero", "zero-and-settling", "settling-zero"],
)
def test_zero_totals_are_drawn_not_divided_by(points: list[ScalingPoint]) -> None:
    async def go() -> None:
        app = ChartOnly()
        async with app.run_test(size=(100, 30)) as pilot:
            app.query_one(ScalingPanel)._draw(points, {}, "sysv-msg")
            await pilot.pause()
            await pilot.pause()  # the render, where plotext divided by the empty y range

    asyncio.run(go())


@pytest.mark.parametrize(
    "keys",
    [("p", DOWN, ENTER + ENTER), ("w", ENTER + ENTER), ("?", ESCAPE + ESCAPE)],
    ids=["placement-enter-twice", "workload-enter-twice", "help-escape-twice"],
)
def test_a_screen_answered_twice_leaves_the_monitor_running(
    tmp_path: Path, keys: tuple[str, ...]
) -> None:
    record = make(tmp_path / "rec.json", [1e6, 2e6])
    with Terminal("replay", str(record)) as term:
        assert term.wait_for_text("REPLAY"), plain(term.output)[-2000:]
        for k in keys:
            term.press(k)
            time.sleep(0.5)
        time.sleep(0.5)
        assert term.proc.poll() is None, plain(term.output)[-2000:]
        term.press("q")
        code = term.wait(90)  # a shared, loaded box can take its time to tear down
        out = plain(term.output)
    assert code == 0, out[-2000:]
    assert "Error" not in out, out[-2000:]


CRASH = """
import sys
from ipctop.tui.widgets.scaling_panel import ScalingPanel
def boom(self, *a, **k):
    raise RuntimeError("injected fault in the chart")
ScalingPanel.update_from = boom
from ipctop.cli import main
sys.exit(main(["--cpus", "0", "--pairs", "2"]))
"""


def test_fake_widget_fault_exits_1_with_one_line_and_nothing_left(tmp_path: Path) -> None:
    # FAKE: no known input crashes the app any more, so a widget is made to raise.
    script = tmp_path / "crash.py"
    script.write_text(CRASH)
    with Terminal(str(script), python_args=True, env={"PYTHONPATH": str(ROOT)}) as term:
        code = term.wait(60)
        out = plain(term.output)
    assert code == 1, out[-2000:]
    assert "Traceback" not in out, out[-3000:]
    line = next(ln for ln in out.splitlines() if ln.startswith("ipctop: the monitor failed"))
    assert "RuntimeError: injected fault in the chart" in line
    assert "every pair was stopped and removed" in line
    kept = Path(re.search(r"traceback in (\S+)\)", line).group(1))
    try:
        assert "injected fault in the chart" in kept.read_text()
    finally:
        kept.unlink()
