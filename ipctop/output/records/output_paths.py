"""Output files are checked before the first pair starts, and a failed write keeps the data.

A sweep must not run for minutes and then fail to save (`sweep --json
/proc/x.json`). check_output_file() tries the real thing (a temporary file in the
target's folder), so /proc, a read-only mount or a missing folder is a usage
error at once; if the write still fails at the end (a full disk), write_or_keep()
puts the data in the temporary directory and says where.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from ipctop.errors import IpctopError, UsageError


def check_output_file(path: str | os.PathLike[str], option: str) -> Path:
    """The path, if a regular file can be written there; otherwise UsageError (exit 2)."""
    p = Path(path)
    shown = f"{option} {os.fspath(path)}"
    if os.fspath(path) == "" or p.name in ("", ".", ".."):
        raise UsageError(f"{shown}: not a file name")
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise UsageError(f"{shown}: {e.strerror or e}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{shown} is a directory; give a file name")
    if st is not None and not stat.S_ISREG(st.st_mode):
        # The write replaces the target by rename: never do that to a device.
        raise UsageError(f"{shown} is not a regular file")
    check_output_dir(p.parent if str(p.parent) else Path("."), option, shown)
    return p


def check_output_dir(directory: str | os.PathLike[str], option: str, shown: str = "") -> Path:
    """The directory, if a file can be created in it; otherwise UsageError (exit 2)."""
    d = Path(directory)
    shown = shown or f"{option} {os.fspath(directory)}"
    if not d.exists():
        raise UsageError(f"{shown}: no such directory {os.fspath(d)}")
    if not d.is_dir():
        raise UsageError(f"{shown}: {os.fspath(d)} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(dir=d, prefix=".ipctop-probe-")
    except OSError as e:
        raise UsageError(f"{shown}: cannot write in {os.fspath(d)} ({e.strerror or e})") from None
    os.close(fd)
    os.unlink(probe)
    return d


def write_or_keep(
    path: Path, write: Callable[[Path], Path], what: str = "record"
) -> tuple[str, bool]:
    """write(path); when that fails, write(a file in the temp dir) and say where.

    Returns one line for the user and whether the target was written. Raises
    IpctopError only when both fail.
    """
    try:
        written = write(path)
    except OSError as e:
        reason = e.strerror or str(e)
    else:
        return f"{what} written to {written}", True
    fd, kept = tempfile.mkstemp(prefix=f"ipctop-kept-{path.stem}-", suffix=path.suffix or ".json")
    os.close(fd)
    try:
        write(Path(kept))
    except OSError as e:
        os.unlink(kept)
        raise IpctopError(
            f"could not write {path} ({reason}), nor keep it in {kept} ({e.strerror or e})"
        ) from None
    return f"could not write {path} ({reason}); the {what} is kept in {kept}", False
