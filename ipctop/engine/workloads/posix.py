"""POSIX semaphores and POSIX message queues.

Native: unnamed sem_t (pshared) in the pair's shared page, and queues opened
by the C extension. Python: posix_ipc, which has only named semaphores, so
the Python engine measures sem_open'ed ones (the same futex-based sem_wait
and sem_post, reached through a different mapping).
"""

from __future__ import annotations

import itertools
import os
from contextlib import suppress
from typing import Any

from ..counters import SlotWriter
from ..objects import _native
from .base import PairResources, Workload, loop_errno, semaphore_loop
from .limits import check_fds, check_mq_count, check_mq_size, check_mqueue, mq_error
from .shared import area_pair, native_hook, tracker

MODE = 0o600
MQ_MAXMSG = 4  # the token and a wake-up kick must both fit, with room to spare
MQ_MSGSIZE = 8  # no seed: as sysv-msg (pmsg), so the two queues compare like for like

try:
    import posix_ipc
except ImportError:  # optional: only the Python engine needs it
    posix_ipc = None

_NO_POSIX_IPC = "the posix_ipc package is not installed (pip install posix_ipc)"
_serial = itertools.count()


def unique_name(tag: str) -> str:
    """/ipctop-<pid>-<n>-<tag>: ipctop's, this process's, never reused within it."""
    return f"/ipctop-{os.getpid()}-{next(_serial)}-{tag}"


class PosixSem(Workload):
    name = "posix-sem"
    original = "POSIX semaphores"
    summary = "two unnamed sem_t (pshared) per pair in shared memory; sem_wait mine, sem_post peer"
    one_round = "unnamed shared semaphores: `sem_wait` on its own, `sem_post` on the peer's"
    timed = True
    options = ()
    python_unavailable = None if posix_ipc is not None else _NO_POSIX_IPC
    python_note = "posix_ipc has only named semaphores: the Python engine uses sem_open'ed ones"

    def create_pair(self, index: int, engine: str) -> PairResources:
        if engine == "python":
            return self._named_pair()
        return area_pair(self.name)

    def _named_pair(self) -> PairResources:
        sems = []
        try:
            for tag, value in (("a", 1), ("b", 0)):
                sem = posix_ipc.Semaphore(
                    unique_name(tag), posix_ipc.O_CREX, mode=MODE, initial_value=value
                )
                sems.append(sem)
                # Unlinked at once: the open handles (and forked children's
                # mappings) keep it alive, and nothing is left in /dev/shm
                # whichever way ipctop ends.
                sem.unlink()
        except BaseException:
            for sem in sems:
                sem.close()
            raise
        a, b = sems
        return PairResources(args=((), ()), py=((a, b), (b, a)), closers=[a.close, b.close])

    def wake(self, res: PairResources, index: int) -> None:
        if res.shm is not None:
            for role in (0, 1):
                native_hook(self.name, "wake", role, (), res.shm)
            return
        for mine, _ in res.py:
            mine.release()

    def python_loop(self, res: PairResources, role: int, writer: SlotWriter) -> int:
        mine, peer = res.py[role]
        return semaphore_loop(
            mine, peer, writer, posix_ipc.SignalError, posix_ipc.Error, posix_ipc.ExistentialError
        )


class _Queue:
    """One named queue: its descriptor (native) or posix_ipc object (Python)."""

    def __init__(self, tag: str, python: bool, size: int) -> None:
        self.name = unique_name(tag)
        self.handle: Any = None
        self.fd = -1
        # Kept from creation: removal may happen outside the engine's tracking block.
        self.tracker = tracker()
        try:
            if python:
                self.handle = posix_ipc.MessageQueue(
                    self.name,
                    posix_ipc.O_CREX,
                    mode=MODE,
                    max_messages=MQ_MAXMSG,
                    max_message_size=size,
                )
            else:
                self.fd = _native.mq_create(self.name, MODE, MQ_MAXMSG, size)
        except OSError as exc:
            raise mq_error(exc, self.name) from exc
        if self.tracker is not None:
            self.tracker.announce(f"+ mq {self.name}")

    def remove(self) -> None:
        """Close and unlink; idempotent."""
        if self.handle is not None:
            handle, self.handle = self.handle, None
            handle.close()
            self._unlink()
        elif self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)
            self._unlink()

    def _unlink(self) -> None:
        if _native is not None:
            _native.mq_unlink(self.name)
        else:
            # Already gone is what we wanted; the reaper still forgets it below.
            with suppress(posix_ipc.ExistentialError):
                posix_ipc.unlink_message_queue(self.name)
        if self.tracker is not None:
            self.tracker.announce(f"- mq {self.name}")


class PosixMq(Workload):
    name = "posix-mq"
    original = "POSIX message queues"
    summary = (
        "two POSIX queues per pair (/ipctop-<pid>-<n>-a|b); mq_receive mine, mq_send peer, 8 bytes"
    )
    one_round = "POSIX queues: `mq_receive` on its own, `mq_send` to the peer's, 8-byte payload"
    timed = True
    options = ()
    python_unavailable = None if posix_ipc is not None else _NO_POSIX_IPC
    default_size = MQ_MSGSIZE

    def __init__(self) -> None:
        self.queues = 0

    @property
    def msgsize(self) -> int:
        """The payload in bytes: a queue's message always has one (default_size)."""
        return self.size if self.size is not None else MQ_MSGSIZE

    def check_size(self, size: int) -> None:
        check_mq_size(size)

    def open(self, engine: str) -> None:
        check_mqueue(MQ_MAXMSG, self.msgsize)

    def create_pair(self, index: int, engine: str) -> PairResources:
        check_mq_count(self.queues, 2)
        check_fds(2, "a posix-mq pair")
        python = engine == "python"
        a = _Queue("a", python, self.msgsize)
        try:
            b = _Queue("b", python, self.msgsize)
        except BaseException:
            a.remove()
            raise
        self.queues += 2

        def remove() -> None:
            a.remove()
            b.remove()
            self.queues -= 2

        if python:
            return PairResources(args=((), ()), py=((a, b), (b, a)), closers=[remove])
        return PairResources(
            args=((a.fd, b.fd, self.msgsize), (b.fd, a.fd, self.msgsize)),
            py=((a, b), (b, a)),
            closers=[remove],
        )

    def wake(self, res: PairResources, index: int) -> None:
        for role, (mine, _) in enumerate(res.py):
            if mine.handle is not None:
                try:
                    mine.handle.send(b"\0", timeout=0)
                except posix_ipc.BusyError:
                    continue  # full: it holds something for that end already
            elif mine.fd >= 0:
                native_hook(self.name, "wake", role, (mine.fd,), None)

    def python_loop(self, res: PairResources, role: int, writer: SlotWriter) -> int:
        mine, peer = (q.handle for q in res.py[role])
        buf = bytes(self.msgsize)
        n = 0
        try:
            if role == 0:
                peer.send(buf)
            while not writer.stopped():
                try:
                    mine.receive()
                except posix_ipc.SignalError:
                    continue
                if writer.stopped():
                    break
                writer.think()
                peer.send(buf)
                n += 1
                writer.rounds(n)
        except posix_ipc.Error as exc:
            return loop_errno(exc, posix_ipc.ExistentialError)
        return 0
