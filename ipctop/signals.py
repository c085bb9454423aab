"""Turn SIGINT, SIGTERM and SIGHUP into an exception on the main thread.

The exception unwinds through the engine's `with` blocks, so the shutdown
order is always: stop flags, remove objects, join with a timeout, kill what
is left; the caller then exits with 128 + the signal number.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _raise(signum: int, frame: object) -> None:
    # Ignore repeats while the first one unwinds: cleanup must finish.
    for sig in HANDLED:
        signal.signal(sig, signal.SIG_IGN)
    raise Interrupted(signum)


@contextmanager
def interruptible() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {sig: signal.signal(sig, _raise) for sig in HANDLED}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
