"""Byte and counter streams: pipe, socketpair, eventfd.

Each end reads its own descriptor and writes its peer's. A blocked end is
woken by a "kick" written into its input once its stop flag is set; the
descriptors are closed only after every end has been joined, since close()
does not wake a thread blocked in read() on Linux.
"""

from __future__ import annotations

import errno
import os
import socket
from functools import partial

from ..counters import SlotWriter
from .base import PairResources, Workload
from .limits import check_fds, fd_error


class _Stream(Workload):
    #: descriptors one pair holds open
    fds_per_pair = 2
    #: bytes per message: eventfd moves an 8-byte counter
    msg_len = 1

    def _open(self) -> tuple[list[int], list[object], tuple[int, int, int, int]]:
        """(descriptors to close, objects to close, (A in, A out, B in, B out))."""
        raise NotImplementedError

    def _kick_fds(self, ends: tuple[int, int, int, int]) -> tuple[int, int]:
        """Descriptors whose writes arrive at A's and at B's input."""
        a_in, a_out, b_in, b_out = ends
        return b_out, a_out

    def create_pair(self, index: int, engine: str) -> PairResources:
        check_fds(self.fds_per_pair, f"a {self.name} pair")
        try:
            fds, owners, ends = self._open()
        except OSError as exc:
            raise fd_error(exc, f"{self.name} pair {index}") from exc
        a_in, a_out, b_in, b_out = ends
        kick_a, kick_b = self._kick_fds(ends)
        closers = [o.close for o in owners] + [partial(os.close, fd) for fd in fds]  # type: ignore[attr-defined]
        return PairResources(
            args=((a_in, a_out, self.msg_len), (b_in, b_out, self.msg_len)),
            py=((a_in, a_out, kick_a), (b_in, b_out, kick_b)),
            closers=closers,
        )

    def _token(self) -> bytes:
        return (1).to_bytes(self.msg_len, "little")

    def wake(self, res: PairResources, index: int) -> None:
        for _, _, kick in res.py:
            os.write(kick, self._token())

    def python_loop(self, res: PairResources, role: int, writer: SlotWriter) -> int:
        fd_in, fd_out, _ = res.py[role]
        token, size, n = self._token(), self.msg_len, 0
        try:
            if role == 0:
                os.write(fd_out, token)
            while not writer.stopped():
                if not os.read(fd_in, size):
                    return 0 if writer.stopped() else errno.EPIPE
                if writer.stopped():
                    break
                writer.think()
                os.write(fd_out, token)
                n += 1
                writer.rounds(n)
        except OSError as exc:
            return exc.errno or errno.EIO
        return 0


class Pipe(_Stream):
    name = "pipe"
    original = "perf bench sched pipe / ctxbench -p"
    summary = "two pipes per pair; read 1 byte from mine, write 1 byte to the peer's"
    fds_per_pair = 4

    def _open(self) -> tuple[list[int], list[object], tuple[int, int, int, int]]:
        to_a = os.pipe()
        try:
            to_b = os.pipe()
        except OSError:
            os.close(to_a[0])
            os.close(to_a[1])
            raise
        return [*to_a, *to_b], [], (to_a[0], to_b[1], to_b[0], to_a[1])


class Socket(_Stream):
    name = "socket"
    original = "hackbench's transport"
    summary = "one AF_UNIX stream socketpair per pair; 1 byte each way"

    def _open(self) -> tuple[list[int], list[object], tuple[int, int, int, int]]:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        return [], [a, b], (a.fileno(), a.fileno(), b.fileno(), b.fileno())

    def _kick_fds(self, ends: tuple[int, int, int, int]) -> tuple[int, int]:
        # What B's socket sends arrives at A's, and the other way round.
        a, _, b, _ = ends
        return b, a


class Eventfd(_Stream):
    name = "eventfd"
    original = "eventfd"
    summary = "two eventfds per pair; read mine (8-byte counter), write 1 to the peer's"
    msg_len = 8

    def _open(self) -> tuple[list[int], list[object], tuple[int, int, int, int]]:
        a = os.eventfd(0)
        try:
            b = os.eventfd(0)
        except OSError:
            os.close(a)
            raise
        return [a, b], [], (a, b, b, a)

    def _kick_fds(self, ends: tuple[int, int, int, int]) -> tuple[int, int]:
        a_in, _, b_in, _ = ends
        return a_in, b_in
