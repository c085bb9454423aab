"""The `ipctop` command's entry point: a ^C before ipctop's own handlers is a quiet exit.

The console script imports this module, not ipctop.cli: cli's imports (every
command, textual's parser, the engine) take up to a second on a loaded box,
and a SIGINT while the script's `from ipctop.cli import main` ran was a
KeyboardInterrupt traceback. Here the handler is set before any of them.
Until the command installs its own handlers (ipctop.signals.interruptible)
nothing has been created, so exiting 128+N at once is all that is needed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys


def _early_exit(signum: int, frame: object) -> None:
    # os._exit, not SystemExit: raised inside an import lock's callback, SystemExit is
    # printed as "Exception ignored" with its traceback. Nothing exists yet to clean up.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed or gone terminal: no matter
            stream.flush()
    os._exit(128 + signum)


def main() -> int:
    """Install the early handler (unless SIGINT is ignored or handled), then run the CLI."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _early_exit)
    from .cli import main as cli_main

    return cli_main()
