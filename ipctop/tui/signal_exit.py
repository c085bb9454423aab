"""Quit cleanly on SIGTERM, SIGHUP and an outside SIGINT.

Mixed into IpctopApp: the app's loop takes the signals while it runs (and
gives the old handlers back on unmount); the first one writes the record,
stops the pairs on a thread and exits 128 + signal. After a hangup the
terminal is gone and Textual's shutdown can block forever on its writer
queue, so that thread leaves the process after EXIT_GRACE if the UI never
finishes.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..live.sources import SampleSource
from ..signals import HANDLED

EXIT_GRACE = 5.0  # seconds the UI gets to shut down after a signal


class SignalExit:
    """Uses the app's source, exit and _records_finish."""

    #: the signal that ended the app, for run_app to re-raise as Interrupted
    signalled: int | None = None
    _old_signals: dict[int, Any] | None = None  # each caught signal's handler before

    def _catch_signals(self) -> None:
        self._old_signals = {}
        try:
            loop = asyncio.get_running_loop()
            for sig in HANDLED:
                self._old_signals[sig] = signal.getsignal(sig)
                loop.add_signal_handler(sig, self._on_signal, sig)
        except (RuntimeError, ValueError):
            # Not the main thread (an embedding test harness): the caller's handlers stay.
            self._old_signals.clear()

    def _on_signal(self: Any, signum: int) -> None:
        if self.signalled is not None:
            return
        self.signalled = signum
        self._records_finish(interrupted=True)  # first: the exit below may never complete
        threading.Thread(
            target=_clean_then_leave, args=(self.source, signum), name="ipctop-exit", daemon=True
        ).start()
        self.exit(128 + signum)

    def _restore_signals(self) -> None:
        if not self._old_signals:
            return
        loop = asyncio.get_running_loop()
        for sig, old in self._old_signals.items():
            loop.remove_signal_handler(sig)
            signal.signal(sig, old)
        self._old_signals.clear()


def _clean_then_leave(source: SampleSource, signum: int) -> None:
    source.stop()
    time.sleep(EXIT_GRACE)
    # Still here: the UI could not shut down (no terminal). The pairs are gone.
    os._exit(128 + signum)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Cleanup must finish: hold signals off while the engine stops."""
    old = {sig: signal.signal(sig, signal.SIG_IGN) for sig in HANDLED}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
