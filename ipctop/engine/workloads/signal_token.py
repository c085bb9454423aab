"""ctxbench's signal method: sigwaitinfo() for the token, tgkill() to pass it.

The token is SIGURG, whose default action is to ignore it. Each end blocks it
before it tells its peer its tid, so the signal waits for sigwaitinfo(); one
that reached any other thread, Python's main thread included, is discarded
rather than killing the process or running a Python handler.
"""

from __future__ import annotations

import ctypes
import errno
import mmap
import os
import signal
import struct
import threading
import time
from collections.abc import Callable

from ..counters import SlotWriter
from .base import PairResources, Workload
from .shared import area_pair, native_hook

TOKEN = signal.SIGURG
_AREA = struct.Struct("<iiii")  # tgid A, tgid B, tid A, tid B: the native layout


def _tgkill_fn() -> Callable[[int, int, int], int] | None:
    libc = ctypes.CDLL(None, use_errno=True)
    return getattr(libc, "tgkill", None)  # glibc >= 2.30


_tgkill = _tgkill_fn()


class Signal(Workload):
    name = "signal"
    original = "ctxbench (signal method)"
    summary = (
        "sigwaitinfo() for the token, tgkill() to the peer's thread; SIGURG, blocked in the ends"
    )
    one_round = "`sigwaitinfo`, then a signal to the peer"
    timed = True
    options = ()
    python_unavailable = None if _tgkill is not None else "this libc has no tgkill()"

    def create_pair(self, index: int, engine: str) -> PairResources:
        # A fresh mapping is zero-filled, as _AREA's fields must start.
        return area_pair(self.name, setup=engine == "native")

    def wake(self, res: PairResources, index: int) -> None:
        if res.shm is None:
            return
        for role in (0, 1):
            if _native_ok():
                # Same layout; the native hook also fences the stop flag before the tid read.
                native_hook(self.name, "wake", role, (), res.shm)
            else:
                _send(res.shm, role)

    def python_loop(self, res: PairResources, role: int, writer: SlotWriter) -> int:
        area = res.shm
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {TOKEN})
        try:
            _publish(area, role, os.getpid(), threading.get_native_id())
            return _signal_loop(area, role, writer)
        except OSError as exc:
            return exc.errno or errno.EIO
        finally:
            _publish(area, role, 0, 0)
            while signal.sigtimedwait({TOKEN}, 0) is not None:
                continue  # drop the last token or wake-up before unblocking
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _native_ok() -> bool:
    from ..objects import _native

    return _native is not None


def _publish(area: mmap.mmap, role: int, tgid: int, tid: int) -> None:
    # tid last: a peer that sees it also sees the tgid.
    struct.pack_into("<i", area, 4 * role, tgid)
    struct.pack_into("<i", area, 8 + 4 * role, tid)


def _send(area: mmap.mmap, to: int) -> None:
    tgid = struct.unpack_from("<i", area, 4 * to)[0]
    tid = struct.unpack_from("<i", area, 8 + 4 * to)[0]
    if not tid:
        return
    # Never None here: without tgkill the Python engine refuses the workload.
    assert _tgkill is not None
    if _tgkill(tgid, tid, int(TOKEN)) < 0:
        err = ctypes.get_errno()
        if err != errno.ESRCH:
            raise OSError(err, os.strerror(err))


def _signal_loop(area: mmap.mmap, role: int, writer: SlotWriter) -> int:
    peer = 1 - role
    while not struct.unpack_from("<i", area, 8 + 4 * peer)[0]:
        if writer.stopped():
            return 0
        time.sleep(0.0001)
    if role == 0:
        _send(area, peer)
    n = 0
    while not writer.stopped():
        signal.sigwaitinfo({TOKEN})
        if writer.stopped():
            break
        writer.think()
        _send(area, peer)
        n += 1
        writer.rounds(n)
    return 0
