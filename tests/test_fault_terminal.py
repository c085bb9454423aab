"""A monitor whose terminal stops reading, or goes away, still ends on time.

Real monitors on real ptys. A terminal that stops reading fills the pty, then
Textual's writer queue, and the app's loop blocks in it; SIGTERM must still
end the run (143) with every pair removed. A terminal whose other end closes
sends no SIGHUP to a process it is not the controlling terminal of; the
monitor must notice and end (129). The per-test census checks the objects.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from terminal import Terminal

from ipctop.output.record_io import read_record

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
