"""What `ipctop serve` runs for each browser: the monitor, unless a live session already runs.

textual-serve starts one process per browser connection. The first one
takes the live-session lock and runs the monitor; any other, while that
holds, shows a notice and starts no pair, so a second viewer can never
disturb the numbers of the first.

    python -m ipctop.served [monitor options]

An entry point beside cli.py, not part of the TUI: it runs the CLI, and the
TUI never imports the CLI.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli import main as cli_main
from .live.live_lock import LiveSessionLock


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    lock = LiveSessionLock()
    holder = lock.acquire()
    if holder is not None:
        from .tui.busy_notice import BusyNotice

        return int(BusyNotice(holder).run() or 0)
    try:
        # The monitor's own try for the lock fails harmlessly: this process holds it.
        return cli_main(["tui", *args])
    finally:
        lock.release()


if __name__ == "__main__":
    sys.exit(main())
