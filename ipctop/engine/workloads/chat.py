"""chat: the chat-room benchmark that stood in for VolanoMark (loops_chat.c).

A unit is a room of 20 users; each user is one connection (loopback TCP by
default, a unix socketpair with --transport unix) and four ends: a client
sender and receiver, a server receiver that hands every message to the other
19 members' queues, and a server sender per member. 80 ends a room; the
figure is messages delivered to the clients per second.
"""

from __future__ import annotations

import contextlib
import mmap
import socket
from typing import TYPE_CHECKING, Any

from ...errors import UsageError
from .base import PairResources, Workload
from .limits import check_socket_size, fd_error
from .load_limits import Load, check_load
from .shared import close_area, native_hook

if TYPE_CHECKING:
    from ..config import RunConfig

USERS = 20  # one VolanoMark room
DEFAULT_SIZE = 100
TRANSPORTS = ("tcp", "unix")
KINDS = ("CS", "CR", "SR", "SS")  # client send/receive, server receive/send


def room_load(rooms: int, transport: str) -> Load:
    """80 tasks and 40 descriptors a room; TCP queues a room's connects on one listener."""
    return Load(
        tasks=4 * USERS * rooms,
        fds=2 * USERS * rooms,
        listen_backlog=USERS if transport == "tcp" else 0,
        what=f"{rooms} chat room(s) of {4 * USERS} threads",
    )


class Chat(Workload):
    name = "chat"
    original = "VolanoMark's chat rooms (IBM's chat benchmark)"
    summary = (
        "a unit is a room of 20 users, 4 threads each (client and server, sending and "
        "receiving); the server sends each 100-byte message (--size) to the other 19; "
        "loopback TCP (--transport unix: socketpairs); messages delivered"
    )
    one_round = (
        "a unit is a room of 20 users, each one connection (loopback TCP, `--transport unix`: "
        "a socketpair) and 4 threads: client sender and receiver, server receiver (hands each "
        "100-byte message to the other 19 members' bounded queues, process-shared mutex and "
        "condvars) and server sender; 80 ends a room, rounds are messages delivered to clients"
    )
    timed = False  # no token passes between two ends: a message fans out to 19
    options = ()  # --transport is a run field (a word, not a count)
    python_unavailable = "a room's 80 ends share process-shared queues only C can run"
    default_size = DEFAULT_SIZE
    unit = "room"
    ends_per_unit = 4 * USERS

    def __init__(self) -> None:
        self.listener: socket.socket | None = None

    def configure(self, config: RunConfig) -> None:
        self.transport = config.transport or "tcp"
        if self.transport not in TRANSPORTS:
            raise UsageError(
                f"--transport: chat takes {' or '.join(TRANSPORTS)}, not {self.transport!r}"
            )
        super().configure(config)

    def check_size(self, size: int) -> None:
        check_socket_size(size)

    def record_payload(self) -> dict[str, Any]:
        return {**super().record_payload(), "transport": self.transport}

    def detail_text(self) -> str:
        return f" · {USERS} users a room · {self.size} B · {self.transport}"

    def roles(self, index: int) -> tuple[str, ...]:
        return tuple(f"{k}{u}" for k in KINDS for u in range(USERS))

    def place_unit(
        self, placement: str, cpus: list[int], index: int, cpu: int | None = None
    ) -> tuple[int | None, ...]:
        k = self.ends_per_unit
        if placement == "free":
            return (None,) * k
        n = len(cpus)
        pos = cpus.index(cpu) if cpu is not None and cpu in cpus else index % n
        if placement == "same":
            return (cpus[pos],) * k
        return tuple(cpus[(pos + j) % n] for j in range(k))

    def check_units(self, n: int) -> None:
        check_load(room_load(n, self.transport))

    def open(self, engine: str) -> None:
        if self.transport == "tcp":
            check_load(room_load(1, "tcp"))
            self.listener = socket.create_server(("127.0.0.1", 0), backlog=USERS)

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()
            self.listener = None

    def _connection(self) -> tuple[socket.socket, socket.socket]:
        if self.transport == "unix":
            return socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        assert self.listener is not None
        client = socket.create_connection(self.listener.getsockname())
        try:
            server, _ = self.listener.accept()
        except OSError:
            client.close()
            raise
        for s in (client, server):
            # 100-byte messages one by one, as the chat server flushes them; with
            # Nagle and delayed ACKs loopback would wait 40 ms per burst instead.
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return client, server

    def create_pair(self, index: int, engine: str) -> PairResources:
        check_load(room_load(1, self.transport))
        size = self.size or DEFAULT_SIZE
        room = _Room()
        try:
            for _ in range(USERS):
                room.users.append(self._connection())
        except OSError as exc:
            room.remove()
            raise fd_error(exc, f"chat room {index}") from exc
        area = mmap.mmap(-1, 2 * mmap.PAGESIZE)
        setup = (-1, USERS, size)
        native_hook(self.name, "setup", 0, setup, area)
        room.area, room.hook_args = area, setup
        clients = [c.fileno() for c, _ in room.users]
        servers = [s.fileno() for _, s in room.users]
        fds = clients + clients + servers + servers  # CS, CR, SR, SS
        return PairResources(
            args=tuple((fd, USERS, size) for fd in fds),
            shm=area,
            py=(None,) * self.ends_per_unit,
            objects=[room],
            closers=[lambda: close_area(area)],
        )

    def wake(self, res: PairResources, index: int) -> None:
        res.objects[0].wake(self.name)


class _Room:
    """One room's connections (client socket, server socket) and its queue area."""

    def __init__(self) -> None:
        self.users: list[tuple[socket.socket, socket.socket]] = []
        self.area: mmap.mmap | None = None
        self.hook_args: tuple[int, ...] = ()

    def wake(self, workload: str) -> None:
        """Every queue waiter woken (the stop word), then every socket shut down."""
        if self.area is not None:
            native_hook(workload, "wake", 0, self.hook_args, self.area)
        for pair in self.users:
            for s in pair:
                with contextlib.suppress(OSError):  # its peer's shutdown got there first
                    s.shutdown(socket.SHUT_RDWR)

    def remove(self) -> None:
        """Close every socket; idempotent."""
        for pair in self.users:
            for s in pair:
                s.close()
        self.users.clear()
