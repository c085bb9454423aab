"""What a failed write to stdout means: a reader that left, or a full disk.

`ipctop run --jsonl | head -1` must behave as Unix tools do: the reader has
gone, so stop quietly (128 + SIGPIPE, as if the signal had ended us). A full
disk or an I/O error is one line on stderr and exit 1.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
from typing import TextIO

from ipctop.errors import EXIT_FAILED

# Errors a write to a pipe, file or terminal can give; anything else is a bug.
WRITE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS)


def _silence(stream: TextIO | None = None) -> None:
    # Python flushes stdout and stderr at exit; that flush would fail again and print.
    stream = sys.stdout if stream is None else stream
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass  # the stream is already closed or not a file: nothing left to flush


def say(line: str) -> None:
    """One line on stderr. A terminal that has gone (EIO) takes nothing; then
    stderr goes to /dev/null, so the exit status stays the one the line was for."""
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:
        _silence(sys.stderr)


def output_failed(exc: OSError) -> int | None:
    """The exit code for a write error (after saying so), or None if exc is not one."""
    if exc.errno == errno.EPIPE:
        _silence()
        return 128 + signal.SIGPIPE
    if exc.errno not in WRITE_ERRORS:
        return None
    _silence()
    # A file ipctop writes besides stdout (a session file in /run/ipctop) names itself.
    what = f"{exc.filename}" if exc.filename else "the output"
    try:
        print(f"ipctop: cannot write {what}: {exc.strerror}", file=sys.stderr, flush=True)
    except OSError:
        pass  # stderr is on the same full disk: the exit code has to say it
    return EXIT_FAILED
