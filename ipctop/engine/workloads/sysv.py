"""The three workloads of the seeds: pmsg, psem and pmsg-shared."""

from __future__ import annotations

import struct
from typing import Any

from ..counters import SlotWriter
from ..objects import SysvObject, _native, create_queue, create_sem_array, create_single_sem
from .base import PairResources, Workload, loop_errno, semaphore_loop
from .limits import check_msg_queues, check_msg_size, check_msgmnb, check_sem_array

STOP_MARKER = -1


def ping(pair: int, size: int) -> bytes:
    """A payload of `size` bytes whose first (up to) 8 carry the pair id."""
    head = struct.pack("<q", pair)
    return head[:size] if size <= len(head) else head + bytes(size - len(head))


class SysvMsg(Workload):
    name = "sysv-msg"
    original = "pmsg"
    summary = "one SysV message queue per pair; msgrcv(mine) then msgsnd(peer), 8 bytes"
    one_round = (
        "one queue per pair: `msgrcv` of its own type, then `msgsnd` of its peer's type, "
        "8-byte payload"
    )
    timed = True
    options = ()
    default_size = 8  # pmsg's DATASIZE

    @property
    def payload(self) -> int:
        """The run's message size: configure() always sets one, as default_size is set."""
        if self.size is None:
            raise RuntimeError(f"{self.name}: the payload size is asked before configure()")
        return self.size

    def check_size(self, size: int) -> None:
        check_msg_size(size, 1)  # one message in flight: the queue is removed to stop

    def create_pair(self, index: int, engine: str) -> PairResources:
        check_msg_queues(1)
        size = self.payload
        check_msgmnb(size)
        q = create_queue(python=engine == "python", max_size=size)
        return PairResources(
            args=((q.id, 1, 2, index, 0, size), (q.id, 2, 1, index, 0, size)),
            objects=[q],
            py=((q, 1, 2, index, False), (q, 2, 1, index, False)),
        )

    def python_loop(self, res: PairResources, role: int, writer: SlotWriter) -> int:
        q, mine, peer, pair, check = res.py[role]
        return _msg_loop(q.handle, mine, peer, pair, check, role, writer, self.payload)


class SysvMsgShared(SysvMsg):
    name = "sysv-msg-shared"
    original = "pmsg-shared"
    summary = "ONE queue for all pairs; pair p uses types 3p+6/3p+7; pair id checked, 16 bytes"
    one_round = (
        "one queue for all pairs, pair p uses types 3p+6 and 3p+7; the pair id in the payload"
        " is checked on every receive, a wrong message is reported and never counted"
    )
    timed = True
    options = ()
    default_size = 16  # pmsg-shared's payload
    min_size = 8  # the pair id

    def __init__(self) -> None:
        self.queue: SysvObject | None = None

    def check_size(self, size: int) -> None:
        check_msg_size(size, 3)  # pair 0's ping and, while it stops, its two markers

    def open(self, engine: str) -> None:
        check_msg_queues(1)
        self.queue = create_queue(python=engine == "python", max_size=self.size)

    def close(self) -> None:
        if self.queue is not None:
            self.queue.remove()
            self.queue = None

    def _shared(self) -> SysvObject:
        """The queue open() made: pairs are only made and sent to between open and close."""
        if self.queue is None:
            raise RuntimeError(f"{self.name}: the shared queue is not open")
        return self.queue

    @staticmethod
    def types(index: int) -> tuple[int, int]:
        return 3 * index + 6, 3 * index + 7

    def create_pair(self, index: int, engine: str) -> PairResources:
        # One ping per pair in flight, plus the two stop markers of a pair being removed.
        size = self.payload
        check_msgmnb(size * (index + 1 + 2))
        q = self._shared()
        a, b = self.types(index)
        return PairResources(
            args=((q.id, a, b, index, 1, size), (q.id, b, a, index, 1, size)),
            py=((q, a, b, index, True), (q, b, a, index, True)),
        )

    def send(self, mtype: int, pair: int) -> None:
        """Put one ping on the shared queue without blocking (markers, test plants)."""
        q = self._shared()
        if q.handle is not None:
            q.handle.send(ping(pair, self.payload), block=False, type=mtype)
        else:
            _native.msg_send(q.id, mtype, pair, self.payload)

    def wake(self, res: PairResources, index: int) -> None:
        # The queue is shared, so no IPC_RMID: a stop marker wakes each end.
        if self.queue is None or self.queue.id < 0:
            return
        for mtype in self.types(index):
            self.send(mtype, STOP_MARKER)

    def destroy_pair(self, res: PairResources, index: int) -> None:
        q = self.queue
        if q is None or q.id < 0:
            return
        for mtype in self.types(index):
            _drain(q, mtype)


def _drain(q: SysvObject, mtype: int) -> None:
    if q.handle is None:
        _native.msg_drain(q.id, mtype)
        return
    import sysv_ipc

    while True:
        try:
            q.handle.receive(block=False, type=mtype)
        except (sysv_ipc.BusyError, sysv_ipc.ExistentialError):
            return


def _msg_loop(
    q: Any, mine: int, peer: int, pair: int, check: bool, role: int, w: SlotWriter, size: int
) -> int:
    import sysv_ipc

    payload = ping(pair, size)
    n = errors = 0
    try:
        if role == 0:
            q.send(payload, type=peer)
        while not w.stopped():
            try:
                msg, _ = q.receive(type=mine)
            except InterruptedError:
                continue
            if check:
                got = struct.unpack_from("<q", msg)[0]
                if got != pair:
                    if got == STOP_MARKER and w.stopped():
                        break
                    errors += 1
                    w.error(errors, got)
                    continue
            w.think()
            q.send(payload, type=peer)
            n += 1
            w.rounds(n)
    except sysv_ipc.Error as exc:
        return loop_errno(exc, sysv_ipc.ExistentialError)
    return 0


class SysvSem(Workload):
    name = "sysv-sem"
    original = "psem"
    summary = "one SysV semaphore array of two per pair; token passing, one semop per call"
    one_round = (
        "one semaphore array of two per pair: `semop(-1)` on its own, `semop(+1)` on the peer's"
    )
    timed = True
    options = ()
    python_note = "sysv_ipc cannot create an array of two: the Python engine uses two single sets"

    def create_pair(self, index: int, engine: str) -> PairResources:
        check_sem_array(2)
        if engine == "python":
            a = create_single_sem(1)
            try:
                b = create_single_sem(0)
            except BaseException:
                a.remove()
                raise
            return PairResources(args=((), ()), objects=[a, b], py=((a, b), (b, a)))
        arr = create_sem_array([1, 0])
        return PairResources(args=((arr.id, 0, 1), (arr.id, 1, 0)), objects=[arr])

    def python_loop(self, res: PairResources, role: int, writer: SlotWriter) -> int:
        import sysv_ipc

        mine, peer = (o.handle for o in res.py[role])
        return semaphore_loop(
            mine, peer, writer, InterruptedError, sysv_ipc.Error, sysv_ipc.ExistentialError
        )
