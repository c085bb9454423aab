"""Read a record file without trusting it: a regular file, of bounded size and depth.

An unbounded read of `compare good.json /dev/zero` would go on until the OOM
killer came, and a FIFO would block for ever. A record
is a regular file of at most MAX_RECORD_BYTES; anything else is refused
before a byte is read, and the read goes in chunks so that a signal's
handler runs between them.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from ipctop.errors import RecordError

# A one-hour session at 2 samples/s with 64 threads is about 40 MB of JSON.
MAX_RECORD_BYTES = 256 * 1024 * 1024
# ipctop's own records nest 5 deep (record.timeline[i].threads[j].extra); JSON
# bombs nest thousands deep.
MAX_RECORD_DEPTH = 32
_CHUNK = 1 << 20


def read_bounded_text(path: str | os.PathLike[str], limit: int = MAX_RECORD_BYTES) -> str:
    """The UTF-8 text of a regular file of at most `limit` bytes, or RecordError."""
    shown = os.fspath(path)
    name = os.path.basename(shown) or shown
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise RecordError(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise RecordError(f"{shown} is a directory, not a record file") from None
    except PermissionError:
        raise RecordError(f"{shown}: permission denied") from None
    except OSError as e:
        raise RecordError(f"{shown}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise RecordError(f"{shown} is a directory, not a record file")
        if not stat.S_ISREG(st.st_mode):
            raise RecordError(f"{shown} is not a regular file (a device, pipe or socket)")
        if st.st_size > limit:
            raise RecordError(
                f"{name} is {st.st_size / 2**20:.0f} MiB; a record is at most "
                f"{limit / 2**20:.0f} MiB"
            )
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        size = 0
        while True:
            # A file that grows while it is read is held to the same bound.
            chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise RecordError(f"{name} grew past {limit / 2**20:.0f} MiB while being read")
    except OSError as e:
        raise RecordError(f"{shown}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{name} is not JSON (not even UTF-8 text)") from None


def json_depth_problem(value: Any, limit: int = MAX_RECORD_DEPTH) -> str | None:
    """A phrase when decoded JSON nests deeper than `limit`, else None (no recursion)."""
    if not isinstance(value, (dict, list)):
        return None
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > limit:
            return f"nested more than {limit} deep"
        items = v.values() if isinstance(v, dict) else v
        stack.extend((x, depth + 1) for x in items if isinstance(x, (dict, list)))
    return None
