"""A monitor whose terminal stops reading, or goes away, still ends on time.

Real monitors on real ptys. A terminal that stops reading fills the pty, then
Textual's writer queue, and the app's loop blocks in it; SIGTERM must still
end the run (143) with every pair removed. A terminal whose other end closes
sends no SIGHUP to a process it is not the controlling terminal of; the
monitor must notice and end (129). The per-test census checks the objects.
"""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

from terminal import Terminal

from ipctop.output.records.record_io import read_record

ARGS = ("--cpus", str(min(os.sched_getaffinity(0))), "--interval", "0.1")
HEADER = "pairs 1/"


def _gone(t: Terminal, timeout: float = 30.0) -> int | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if t.proc.poll() is not None:
            return t.proc.returncode
        time.sleep(0.05)
    return None


def test_sigterm_ends_a_monitor_whose_terminal_stopped_reading(tmp_path: Path) -> None:
    record = tmp_path / "session.json"
    with Terminal(*ARGS, "--record", str(record)) as t:
        assert t.wait_for_text(HEADER), t.output[-500:]
        t.reading.clear()
        time.sleep(8)  # ten frames a second fill the pty, then the writer's queue
        assert t.proc.poll() is None, "the monitor ended before the signal"
        t.signal(signal.SIGTERM)
        code = _gone(t)
        t.reading.set()
    assert code == 128 + signal.SIGTERM
    assert read_record(str(record)).timeline  # written by the rescue, the loop being stuck


def test_a_terminal_that_goes_away_ends_the_monitor() -> None:
    with Terminal(*ARGS) as t:
        assert t.wait_for_text(HEADER), t.output[-500:]
        t.hang_up()
        code = _gone(t)
    assert code == 128 + signal.SIGHUP


def _on_stdin_only(log: Path) -> tuple[subprocess.Popen, int]:
    """A monitor holding its terminal only as stdin, as `ipctop 2>/dev/null >log &`
    does: Textual draws on stderr (here a file, so the test can see the screen)."""
    master, slave = pty.openpty()
    with open(log, "wb") as screen:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ipctop", *ARGS],
            stdin=slave,
            stdout=subprocess.DEVNULL,
            stderr=screen,
            env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"},
            start_new_session=True,  # no controlling terminal: no SIGHUP from the kernel
        )
    os.close(slave)
    return proc, master


def _ended(proc: subprocess.Popen, timeout: float = 60.0) -> int | None:
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        return None


def test_a_monitor_whose_only_terminal_is_stdin_ends_when_it_goes(tmp_path: Path) -> None:
    # Issue 27, finding 7: such a monitor ran on for hours after its tmux server was killed.
    log = tmp_path / "screen"
    proc, master = _on_stdin_only(log)
    deadline = time.monotonic() + 60
    while HEADER not in log.read_text("utf-8", "replace") and time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text("utf-8", "replace")[-500:]
        time.sleep(0.1)
    assert HEADER in log.read_text("utf-8", "replace"), "the monitor never drew its screen"
    os.close(master)
    assert _ended(proc) == 128 + signal.SIGHUP


def test_a_terminal_gone_before_the_monitor_was_up_still_ends_it(tmp_path: Path) -> None:
    proc, master = _on_stdin_only(tmp_path / "screen")
    os.close(master)  # while Python still imports: nothing watches yet
    assert _ended(proc) == 128 + signal.SIGHUP
