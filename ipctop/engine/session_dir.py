"""Where ipctop keeps its session files, and why it may trust what is there.

A session file says which pid owns a tag, so which objects are in use: a
forged one makes `ipctop clean` remove a live run's objects. So the directory
must be the user's own, a real directory (not a symlink) and private (0700);
another user's /tmp/ipctop-UID made 0777 first is refused in one line, as is
one the user cannot enter. A file in it is read only when it is a regular
file, without blocking and a few bytes at most: a FIFO or a folder named like
a tag neither hangs nor breaks `run` and `clean`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import IpctopError, UsageError


class SessionDirError(UsageError):
    """The session directory is not the user's own and private (exit 2)."""


class NoSessionDir(IpctopError):
    """No directory for session files can be made (read-only /run and /tmp; exit 3)."""

    exit_code = 3


def candidates() -> list[Path]:
    out = []
    for base in ("/run", os.environ.get("XDG_RUNTIME_DIR"), "/tmp"):
        if base and os.access(base, os.W_OK):
            suffix = "" if base != "/tmp" else f"-{os.getuid()}"
            out.append(Path(base) / f"ipctop{suffix}")
    return out


def session_dir() -> Path:
    """The first usable directory of candidates(), made 0700 if missing and checked."""
    tried = []
    for d in candidates():
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
        except OSError as e:  # e.g. a read-only mount that access() did not see
            tried.append(f"{d} ({e.strerror or e})")
            continue
        return check_private(d)
    where = "; ".join(tried) or "/run, $XDG_RUNTIME_DIR and /tmp are not writable"
    raise NoSessionDir(f"no writable directory for ipctop's session files: {where}")


def check_private(d: Path) -> Path:
    """d, when it is a directory of this user's with no access for anyone else."""
    st = os.lstat(d)
    fix = "remove it, or set XDG_RUNTIME_DIR to a private directory of yours"
    if not stat.S_ISDIR(st.st_mode):
        raise SessionDirError(f"session directory {d} is not a directory; {fix}")
    if st.st_uid != os.geteuid():
        raise SessionDirError(
            f"session directory {d} belongs to uid {st.st_uid}, not to you; {fix}"
        )
    if st.st_mode & 0o077:
        raise SessionDirError(
            f"session directory {d} is mode {stat.S_IMODE(st.st_mode):04o}; ipctop trusts only "
            f"a private one (chmod 700 {d})"
        )
    if not os.access(d, os.R_OK | os.W_OK | os.X_OK):
        raise SessionDirError(f"session directory {d} is not writable by you; {fix}")
    return d


def read_small(path: Path, limit: int = 256) -> bytes | None:
    """The first `limit` bytes of a regular file; None for anything else or an error."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
