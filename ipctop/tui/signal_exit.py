"""Quit cleanly on SIGTERM, SIGHUP and an outside SIGINT.

Mixed into IpctopApp: the app's loop takes the signals while it runs (and
gives the old handlers back on unmount); the first one writes the record,
stops the pairs on a thread and exits 128 + signal. After a hangup the
terminal is gone and Textual's shutdown can block forever on its writer
queue, so that thread leaves the process after EXIT_GRACE if the UI never
finishes.

The loop sees a signal only when it runs, and a terminal that stops reading
blocks it: Textual's writer thread waits in write() (or died of EIO), its
queue of 30 fills, and the loop waits in put() for good, deaf to SIGTERM. So
each signal also has a Python-level handler, which runs in the main thread
inside that wait; if the loop has not taken the signal within LOOP_GRACE and
has run nothing at all for STUCK_AFTER (a loaded box only makes it slow: it
still runs, and takes the signal when it comes to it), a thread writes the
record, stops the pairs and leaves.
watch_terminal turns a terminal that went away (its master closed, which
sends no SIGHUP to a process it is not the controlling terminal of) into a
SIGHUP, so the same path ends that process too.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..live.sources import SampleSource
from ..signals import HANDLED
from .host import AppHost

EXIT_GRACE = 5.0  # seconds the UI gets to shut down after a signal
LOOP_GRACE = 1.0  # seconds the loop gets to take a signal before the rescue looks
STUCK_AFTER = 3.0  # seconds in which a loop that runs nothing is taken as blocked
WATCH_TICK = 2.0  # seconds between checks that the terminal is still one


class SignalExit:
    """Uses the app's source, exit and _records_finish."""

    #: the signal that ended the app, for run_app to re-raise as Interrupted
    signalled: int | None = None
    _old_signals: dict[int, Any] | None = None  # each caught signal's handler before
    _rescue: threading.Thread | None = None
    _signal_loop: asyncio.AbstractEventLoop | None = None

    def _catch_signals(self: AppHost) -> None:
        self._old_signals = {}
        try:
            loop = asyncio.get_running_loop()
            self._signal_loop = loop
            for sig in HANDLED:
                self._old_signals[sig] = signal.getsignal(sig)
                loop.add_signal_handler(sig, self._on_signal, sig)
                # After add_signal_handler: the loop's wake-up fd stays, the handler is ours.
                signal.signal(sig, self._on_signal_anywhere)
        except (RuntimeError, ValueError):
            # Not the main thread (an embedding test harness): the caller's handlers stay.
            self._old_signals.clear()

    def _on_signal(self: AppHost, signum: int) -> None:
        if self.signalled is not None:
            return
        self.signalled = signum
        self._records_finish(interrupted=True)  # first: the exit below may never complete
        threading.Thread(
            target=_clean_then_leave, args=(self.source, signum), name="ipctop-exit", daemon=True
        ).start()
        self.exit(128 + signum)

    def _on_signal_anywhere(self: AppHost, signum: int, _frame: object) -> None:
        if self._rescue is None:
            self._rescue = threading.Thread(
                target=_rescue_if_stuck, args=(self, signum), name="ipctop-rescue", daemon=True
            )
            self._rescue.start()

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


def _rescue_if_stuck(app: AppHost, signum: int) -> None:
    time.sleep(LOOP_GRACE)
    while app.signalled is None and _loop_runs(app._signal_loop):
        time.sleep(0.1)  # slow, not blocked: it takes the signal when it comes to it
    if app.signalled is not None:
        return  # the loop took it: the record is written and the exit is under way
    # The loop is blocked, so nothing adds to the record now: it can be written here.
    # Its message is not printed: the terminal that blocked the loop would block us.
    try:
        app._records_finish(interrupted=True)
    finally:
        app.source.stop()
        os._exit(128 + signum)


def _loop_runs(loop: asyncio.AbstractEventLoop | None) -> bool:
    """Whether the loop runs a callback within STUCK_AFTER (False: blocked or gone)."""
    if loop is None or loop.is_closed():
        return False
    ran = threading.Event()
    try:
        loop.call_soon_threadsafe(ran.set)
    except RuntimeError:  # closed between the two questions: nothing will take the signal
        return False
    return ran.wait(STUCK_AFTER)


def watch_terminal(fds: tuple[int, ...] | None = None) -> None:
    """Send ourselves SIGHUP when the terminal goes away: one of `fds` (by
    default those of stdin, stdout and stderr that are terminals) hangs up,
    errs, or stops being a terminal. A thread mostly blocked in poll.

    stdin counts as much as the screen: Textual draws on stderr, so a monitor
    started with `2>/dev/null >log &` holds its terminal only as stdin, and
    one that watched stdout and stderr alone ran on for hours after its tmux
    server was killed (issue 27, finding 7). The isatty check each
    WATCH_TICK is the belt to poll's braces: a hung-up tty answers every
    ioctl with EIO, so it stops being a terminal even if no HUP is seen.
    """
    if fds is None:
        if any(_hung_up(fd) for fd in (0, 1, 2)):  # it went while we started
            os.kill(os.getpid(), signal.SIGHUP)
            return
        fds = tuple(fd for fd in (0, 1, 2) if _is_tty(fd))
    watched = fds
    if not watched:
        return

    def watch() -> None:
        poller = select.poll()
        for fd in watched:
            poller.register(fd, 0)  # no events asked: only hang-up, error, invalid
        while True:
            try:
                ready = poller.poll(WATCH_TICK * 1000)
            except InterruptedError:
                continue
            gone = any(ev & (select.POLLHUP | select.POLLERR) for _, ev in ready)
            if gone or not all(_is_tty(fd) for fd in watched):
                os.kill(os.getpid(), signal.SIGHUP)
                return
            if ready:
                return  # POLLNVAL: an fd was closed; nothing left to watch

    threading.Thread(target=watch, name="ipctop-terminal-watch", daemon=True).start()


def _hung_up(fd: int) -> bool:
    """A terminal device that no longer answers as one: its other end closed."""
    try:
        st = os.fstat(fd)
    except OSError:
        return False
    major = os.major(st.st_rdev)
    terminal = stat.S_ISCHR(st.st_mode) and (major in (4, 5) or 136 <= major <= 143)
    return terminal and not _is_tty(fd)


def _is_tty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:  # closed: not a terminal, and nothing to watch
        return False


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Cleanup must finish: hold signals off while the engine stops."""
    old = {sig: signal.signal(sig, signal.SIG_IGN) for sig in HANDLED}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
