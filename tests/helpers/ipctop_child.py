"""`python -m ipctop ...` as a child a test drives: start it, read until a line,
send a signal, wait; on every way out a child still running is killed and reaped,
so no test leaves one (and its pairs' kernel objects) behind for the next.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

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
