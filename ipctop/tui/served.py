"""What `ipctop serve` runs for each browser: the monitor, unless a live session already runs.

textual-serve starts one process per browser connection. The first one
takes the live-session lock and runs the monitor; any other, while that
holds, shows a notice and starts no pair, so a second viewer can never
disturb the numbers of the first.

    python -m ipctop.tui.served [monitor options]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from .live_lock import LiveSessionLock


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


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    lock = LiveSessionLock()
    holder = lock.acquire()
    if holder is not None:
        return int(BusyNotice(holder).run() or 0)
    try:
        from ..cli import main as cli_main

        # The monitor's own try for the lock fails harmlessly: this process holds it.
        return cli_main(["tui", *args])
    finally:
        lock.release()


if __name__ == "__main__":
    sys.exit(main())
