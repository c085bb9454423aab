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


_depth = 0  # > 0 while the main thread is inside a critical section
_pending: int | None = None


def _raise(signum: int, frame: object) -> None:
    global _pending
    # Ignore repeats while the first one unwinds: cleanup must finish.
    for sig in HANDLED:
        signal.signal(sig, signal.SIG_IGN)
    if _depth:
        _pending = signum  # raised when the critical section ends
        return
    raise Interrupted(signum)


@contextmanager
def deferred() -> Iterator[None]:
    """Hold a signal's exception until a half-done add or remove has finished.

    An exception in the middle of creating or removing a pair would orphan
    the objects in between; deferring it keeps every pair whole.
    """
    global _depth, _pending
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _pending is not None:
            signum, _pending = _pending, None
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
