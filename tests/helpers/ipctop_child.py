"""`python -m ipctop ...` as a child a test drives: start it, read until a line,
send a signal, wait; on every way out a child still running is killed and reaped,
so no test leaves one (and its pairs' kernel objects) behind for the next.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import psutil

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def ipctop(*args: str, **popen: Any) -> Iterator[subprocess.Popen[str]]:
    """Run `python -m ipctop ARGS` from the checkout; stdout and stderr are text
    pipes unless `popen` says otherwise (stdout=subprocess.DEVNULL, env=...)."""
    popen = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **popen}
    proc = subprocess.Popen([sys.executable, "-m", "ipctop", *args], cwd=ROOT, text=True, **popen)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


def read_until(stream: IO[str] | None, done: Callable[[str], bool], limit: int = 20) -> list[str]:
    """The lines up to and including the first that is `done`, at most `limit` of them
    (fewer when the stream ends first: the caller's assert says what was missing)."""
    assert stream is not None, "that stream is not a pipe"
    lines: list[str] = []
    while len(lines) < limit:
        line = stream.readline()
        if not line:
            break
        lines.append(line)
        if done(line):
            break
    return lines


def stop(
    proc: subprocess.Popen[str], sig: int = signal.SIGTERM, timeout: float = 30
) -> tuple[str, str]:
    """Send `sig` and wait for the child to end: what it wrote after (stdout, stderr)."""
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=timeout)
    return out or "", err or ""


def kill_reaper_then_engine(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the run's reaper, then the run: what is left is what `ipctop clean` is for."""
    me = psutil.Process(proc.pid)
    reapers = [c for c in me.children() if "ipctop.engine.reaper" in " ".join(c.cmdline())]
    assert len(reapers) == 1, reapers
    reapers[0].kill()
    # A zombie until the engine reaps it, which the engine (stopped next) never does.
    deadline = time.monotonic() + 10
    while reapers[0].is_running() and reapers[0].status() != "zombie":
        assert time.monotonic() < deadline, "the reaper outlived its SIGKILL"
        time.sleep(0.05)
    proc.kill()
    proc.wait(10)
