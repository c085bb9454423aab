"""The notice a second browser of `ipctop serve` gets while a live session runs.

ipctop/served.py decides which of the monitor and this notice a served
process shows.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static


def busy_text(holder: int) -> str:
    who = f"pid {holder}" if holder else "its pid is not known yet"
    return f"a live session is already running ({who}); this view is read-only"


class BusyNotice(App[int]):
    """Shown to a second browser: no engine, no pairs, just why."""

    TITLE = "ipctop"
    BINDINGS = [Binding("q", "quit", "close")]
    DEFAULT_CSS = """
    #busy-header { height: 2; background: $primary 25%; padding: 0 1; }
    #busy-body { padding: 1 2; }
    """

    def __init__(self, holder: int) -> None:
        super().__init__()
        self.holder = holder

    def compose(self) -> ComposeResult:
        header = Text()
        header.append("ipctop ", "bold")
        header.append(busy_text(self.holder), "bold reverse")
        yield Static(header, id="busy-header")
        yield Static(
            "Another browser or terminal is driving the benchmark on this box. A second "
            "benchmark on the same CPUs would change its numbers, so none was started.\n\n"
            "Watch that screen, or come back when it has quit.",
            id="busy-body",
        )
        yield Footer()

    async def action_quit(self) -> None:
        self.exit(0)
