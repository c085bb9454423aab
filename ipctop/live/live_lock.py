"""One live benchmark per box at a time, when it matters: a file lock naming its holder.

A second benchmark on the same CPUs would halve the first one's numbers.
The served monitor (`ipctop serve`) takes this lock and, when another live
session holds it, shows a notice instead of starting pairs; a monitor in a
terminal takes it too, so browsers see it, but runs either way.

flock, not a pid file alone: the kernel drops the lock when its holder dies,
however it dies, so a crash never leaves the box "busy".
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..engine.session_dir import session_dir

LOCK_NAME = "live-session.lock"
# A lock file of its own for a test or a CI job, so that a live session elsewhere
# on the box (someone's monitor) neither blocks it nor is blocked by it.
LOCK_ENV = "IPCTOP_LIVE_LOCK"


class LiveSessionLock:
    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        private = os.environ.get(LOCK_ENV)
        if directory:
            self.path = Path(directory) / LOCK_NAME
        elif private:
            self.path = Path(private)
        else:
            self.path = session_dir() / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> int | None:
        """Take the lock: None when taken, else the holder's pid (0 when it is not known yet)."""
        if self._fd is not None:
            return None
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_pid(fd)
                os.close(fd)
                return holder
            # The last holder may have unlinked the file between our open and our lock.
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            self._fd = fd
            return None

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        # Unlink while still locked, so nobody takes a file that is about to vanish.
        self.path.unlink(missing_ok=True)
        os.close(fd)


def remove_if_stale(path: Path, dry_run: bool = False) -> bool:
    """Unlink a lock file that nobody holds (its monitor was SIGKILLed); True if stale.

    Locked while it is judged and unlinked, as release() does: a monitor that
    opens it meanwhile finds it held for that instant and, like any second
    session, runs anyway (a served one shows the notice until its next try).
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False  # none, or not a file of ours to open
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # held: a live session
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same and not dry_run:
            path.unlink(missing_ok=True)
        return same
    finally:
        os.close(fd)


def _read_pid(fd: int) -> int:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else 0
    except OSError:
        return 0


@contextmanager
def live_session() -> Iterator[int | None]:
    """Hold the lock for a block if it is free; yields None when held, else the holder's pid."""
    lock = LiveSessionLock()
    holder = lock.acquire()
    try:
        yield holder
    finally:
        lock.release()
