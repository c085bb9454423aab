"""Creating and removing ipctop's SysV objects.

Every object is created with IPC_CREAT|IPC_EXCL, mode 0600 and a key that
starts with KEY_PREFIX followed by random bits: nobody else can attach to it,
ipctop never attaches to anything it did not create, and `ipctop clean` can
recognise ipctop's leftovers by key.
"""

from __future__ import annotations

import errno
import importlib
import os
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import ResourceError, UnsupportedError
from .reaper import KEY_PREFIX, ReaperClient, key_of, live_objects

MODE = 0o600

# The reaper of the engine whose objects are being created (set by the engine).
_tracker: ReaperClient | None = None


@contextmanager
def tracking(client: ReaperClient | None) -> Iterator[None]:
    """Objects created inside are announced to `client` and keyed with its tag."""
    global _tracker
    previous, _tracker = _tracker, client
    try:
        yield
    finally:
        _tracker = previous


_native: Any  # the C extension's module, or None
try:
    _native = importlib.import_module("ipctop._native")
except ImportError:  # no compiler at install time: the Python engine still works
    _native = None

LIMIT_HINTS = {
    "msg": "message queues (kernel.msgmni)",
    "sem": "semaphore sets or semaphores (kernel.sem: semmni/semmns)",
}


def current_tracker() -> ReaperClient | None:
    """The reaper objects are announced to right now (native loops that make their own)."""
    return _tracker


def new_key() -> int:
    if _tracker is not None:
        return _tracker.new_key()
    return KEY_PREFIX | (secrets.randbits(24) or 1)


@dataclass
class SysvObject:
    """One created object. `id` is reset to -1 once removed: ids are recycled."""

    kind: str  # "msg" or "sem"
    id: int
    key: int
    handle: Any = None  # the sysv_ipc object on the Python engine
    tracker: ReaperClient | None = None

    def __post_init__(self) -> None:
        self.tracker = _tracker
        if self.tracker is not None:
            # Unflushed: a SIGKILL before the next flush is covered by the tag sweep.
            self.tracker.announce(f"+ {self.kind} {self.id} {self.key}", flush=False)

    def remove(self) -> bool:
        """IPC_RMID; False when it was already gone (EINVAL/EIDRM count as done).

        The id is checked to still carry our key first: an id removed from
        outside may already belong to someone else's new object.
        """
        if self.id < 0:
            return False
        ident, self.id = self.id, -1
        if self.tracker is not None:
            self.tracker.announce(f"- {self.kind} {ident}", flush=False)
        if _current_key(self.kind, ident) != self.key:
            return False
        if self.handle is not None:
            import sysv_ipc

            try:
                self.handle.remove()
            except sysv_ipc.ExistentialError:
                return False
            return True
        if _native is not None:
            removed: bool = _native.rmid(self.kind, ident)
            return removed
        raise RuntimeError("no way to remove an object without sysv_ipc or the native module")


_snapshot = threading.local()


@contextmanager
def keys_snapshot() -> Iterator[None]:
    """Check ids against one reading of /proc/sysvipc while many objects are removed.

    key_of reads every object on the box, so removing n pairs one by one read
    n^2 lines (BENCHMARKS.md, "Bulk start"); the ids of objects being removed by their
    own engine do not change meanwhile.
    """
    _snapshot.keys = {(k, i): key for k, i, key, _ in live_objects()}
    try:
        yield
    finally:
        _snapshot.keys = None


def _current_key(kind: str, ident: int) -> int | None:
    keys: dict[tuple[str, int], int] | None = getattr(_snapshot, "keys", None)
    if keys is None:
        return key_of(kind, ident)
    return keys.get((kind, ident))


def _create(kind: str, make: Any) -> tuple[Any, ...]:
    for _ in range(64):
        key = new_key()
        try:
            return key, *make(key)
        except FileExistsError:
            continue
        except OSError as exc:
            raise _translate(kind, exc) from exc
    raise ResourceError(f"no free {kind} key with ipctop's prefix after 64 tries")


def _translate(kind: str, exc: OSError) -> Exception:
    if exc.errno == errno.ENOSPC:
        return ResourceError(
            f"no more {LIMIT_HINTS[kind]}: {os.strerror(exc.errno)}; raise the sysctl or remove pairs"
        )
    if exc.errno == errno.ENOSYS:
        return UnsupportedError("this kernel has no SysV IPC (ENOSYS)")
    if exc.errno in (errno.EINVAL,) and kind == "sem":
        return ResourceError(
            "semaphore array larger than kernel.sem semmsl allows; raise kernel.sem"
        )
    return exc


def create_queue(python: bool = False, max_size: int | None = None) -> SysvObject:
    """A new queue; max_size is the largest message sysv_ipc's receive must take."""
    if python or _native is None:
        import sysv_ipc

        size = max(max_size or 0, 2048)
        return _create_by_sysv_ipc(
            "msg",
            lambda key: sysv_ipc.MessageQueue(
                key, sysv_ipc.IPC_CREX, mode=MODE, max_message_size=size
            ),
        )
    key, ident = _create("msg", lambda k: (_native.msg_create(k, MODE),))
    return SysvObject("msg", ident, key)


def create_sem_array(values: list[int]) -> SysvObject:
    """A real array of len(values) semaphores (native only: sysv_ipc makes sets of one)."""
    if _native is None:
        raise UnsupportedError("semaphore arrays need the native engine")
    key, ident = _create("sem", lambda k: (_native.sem_create(k, MODE, values),))
    return SysvObject("sem", ident, key)


def create_single_sem(value: int) -> SysvObject:
    """A set of one semaphore through sysv_ipc (the Python engine)."""
    import sysv_ipc

    return _create_by_sysv_ipc(
        "sem",
        lambda key: sysv_ipc.Semaphore(key, sysv_ipc.IPC_CREX, mode=MODE, initial_value=value),
    )


def _create_by_sysv_ipc(kind: str, build: Callable[[int], Any]) -> SysvObject:
    """_create through sysv_ipc, whose errors become the OSErrors _create reads."""
    import sysv_ipc

    def make(key: int) -> tuple[int, Any]:
        try:
            handle = build(key)
        except sysv_ipc.ExistentialError as exc:
            raise FileExistsError(str(exc)) from exc
        except sysv_ipc.Error as exc:
            raise _as_oserror(exc) from exc
        return handle.id, handle

    key, ident, handle = _create(kind, make)
    return SysvObject(kind, ident, key, handle)


def _as_oserror(exc: Exception) -> OSError:
    text = str(exc).lower()
    if "no space" in text or "limit" in text:
        return OSError(errno.ENOSPC, str(exc))
    if "not implemented" in text or "function not" in text:
        return OSError(errno.ENOSYS, str(exc))
    return OSError(errno.EIO, str(exc))
