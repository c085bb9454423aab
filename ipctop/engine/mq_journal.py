"""The names of an engine's POSIX queues, kept where `ipctop clean` can find them.

A POSIX queue can only be listed through a mounted mqueue file system, and
many boxes (this one) mount none: after SIGKILL of an engine and its reaper,
`clean` once found nothing and the queues stayed. So each engine appends every
queue name it makes to a journal in its private session directory,
`mq-<pid>-<tag>`; the journal goes at a normal stop (or with the reaper's
sweep), and `clean` unlinks the names of a journal whose pid is gone.
mq_unlink needs only the name.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

JOURNAL = re.compile(r"mq-(\d+)-[0-9a-f]{3}")
MAX_BYTES = 4 << 20  # 2,048 queues of a 1,024-pair run are about 60 KiB


def journal_path(directory: Path, pid: int, tag: int) -> Path:
    return directory / f"mq-{pid}-{tag:03x}"


def note(path: Path, name: str) -> None:
    """Append one queue name (O_APPEND: one write per line, never interleaved)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, f"{name}\n".encode())
    except OSError as exc:  # os.write names no file: a full directory must be named
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    finally:
        os.close(fd)


def names(path: Path) -> list[str]:
    """The queue names a journal lists; a file that is not a regular one lists none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        data = os.read(fd, MAX_BYTES)
    finally:
        os.close(fd)
    out = []
    for line in data.decode("ascii", "replace").splitlines():
        if line.startswith("/ipctop-") and "/" not in line[1:]:
            out.append(line)
    return out


def dead_journals(directory: Path, alive: Callable[[int], bool]) -> list[Path]:
    """Journals in `directory` whose engine's pid is gone."""
    out: list[Path] = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return out
    for path in entries:
        m = JOURNAL.fullmatch(path.name)
        if m is not None and not alive(int(m.group(1))):
            out.append(path)
    return sorted(out)
