"""Byte and counter streams: pipe, socketpair, eventfd.

Each end reads its own descriptor and writes its peer's. A blocked end is
woken by a "kick" written into its input once its stop flag is set; the
descriptors are closed only after every end has been joined, since close()
does not wake a thread blocked in read() on Linux.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
from functools import partial

from ..counters import SlotWriter
from .base import PairResources, Workload
from .limits import PIPE_DEFAULT_BYTES, check_fds, check_pipe_size, check_socket_size, fd_error

F_SETPIPE_SZ = 1031


class _Stream(Workload):
    #: descriptors one pair holds open
    fds_per_pair = 2
    #: one byte by default, as perf bench sched pipe's token; --size changes it
    default_size: int | None = 1

    @property
    def msg_len(self) -> int:
        return self.size or 1

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

    def _kick(self) -> bytes:
        # A reader sees the stop flag after any read, so one byte wakes it;
        # eventfd reads and writes only its 8-byte counter.
        return self._token()[:1] if self.name != "eventfd" else self._token()

    def wake(self, res: PairResources, index: int) -> None:
        for _, _, kick in res.py:
            os.write(kick, self._kick())

    def python_loop(self, res: PairResources, role: int, writer: SlotWriter) -> int:
        fd_in, fd_out, _ = res.py[role]
        token, size, n = self._token(), self.msg_len, 0
        try:
            if role == 0:
                _write_all(fd_out, token)
            while not writer.stopped():
                have = 0
                while have < size:  # a large message may come in parts
                    got = len(os.read(fd_in, size - have))
                    if not got:
                        return 0 if writer.stopped() else errno.EPIPE
                    if writer.stopped():
                        return 0
                    have += got
                writer.think()
                _write_all(fd_out, token)
                n += 1
                writer.rounds(n)
        except OSError as exc:
            return exc.errno or errno.EIO
        return 0


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Pipe(_Stream):
    name = "pipe"
    original = "perf bench sched pipe / ctxbench -p"
    summary = "two pipes per pair; read 1 byte (--size) from mine, write it to the peer's"
    one_round = "read one token, write one to the peer (a pipe each way)"
    timed = True
    options = ()
    fds_per_pair = 4

    def check_size(self, size: int) -> None:
        check_pipe_size(size)

    def _open(self) -> tuple[list[int], list[object], tuple[int, int, int, int]]:
        to_a = os.pipe()
        try:
            to_b = os.pipe()
        except OSError:
            os.close(to_a[0])
            os.close(to_a[1])
            raise
        fds = [*to_a, *to_b]
        if self.msg_len + 1 > PIPE_DEFAULT_BYTES:
            # A message and a kick must fit, or the stop kick could block.
            try:
                for fd in (to_a[1], to_b[1]):
                    fcntl.fcntl(fd, F_SETPIPE_SZ, self.msg_len + 1)
            except OSError:
                for fd in fds:
                    os.close(fd)
                raise
        return fds, [], (to_a[0], to_b[1], to_b[0], to_a[1])


class Socket(_Stream):
    name = "socket"
    original = "hackbench's transport"
    summary = "one AF_UNIX stream socketpair per pair; 1 byte (--size) each way"
    one_round = (
        "read one token, write one to the peer (a socketpair; a ping-pong pair, not "
        "hackbench: see `hackbench`)"
    )
    timed = True
    options = ()

    def check_size(self, size: int) -> None:
        check_socket_size(size)

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
    one_round = "read one token, write one to the peer (an eventfd each way)"
    timed = True
    options = ()
    default_size = None  # an 8-byte counter, not a payload

    @property
    def msg_len(self) -> int:
        return 8

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
