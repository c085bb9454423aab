"""Start perf so that it cannot outlive ipctop, however ipctop ends."""

from __future__ import annotations

import signal
import subprocess
import threading
from typing import IO, Any

from ..forker import Forker
from ..parent_death import tied_to_me

# Lives as long as the process, by design (not an engine's; tests/conftest.py knows it).
SPAWNER = "ipctop-perf-spawner"
_spawner: Forker | None = None
_spawner_lock = threading.Lock()


def spawn_tied(cmd: list[str], stderr: IO[Any]) -> subprocess.Popen[bytes]:
    """perf, with a parent-death signal so a killed ipctop takes it along.

    PR_SET_PDEATHSIG fires when the forking *thread* exits, and the TUI starts
    perf from short-lived workers: so every perf is forked by one thread that
    lives as long as the process.
    """
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = Forker(name=SPAWNER)

    def popen() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            preexec_fn=tied_to_me(signal.SIGINT),  # SIGINT: perf closes its file
        )

    return _spawner.call(popen)
