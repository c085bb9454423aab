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

import ctypes
import os
import signal
import sys
from collections.abc import Sequence

from .cli import main as cli_main
from .live.live_lock import LiveSessionLock

PR_SET_PDEATHSIG = 1


def die_with_server() -> None:
    """SIGTERM when `ipctop serve` dies, however it dies (SIGKILL too).

    Without it a served monitor outlived a killed server, reparented to init,
    running its pairs at full speed and holding the live-session lock.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    server = os.getppid()
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != server:
        os.kill(os.getpid(), signal.SIGTERM)  # the server died before the prctl


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    die_with_server()
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
