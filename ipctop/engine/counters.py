"""The counter block: one 128-byte slot per end, in memory shared with children.

The block is an anonymous MAP_SHARED mapping made before any worker starts,
so forked ends in processes mode write the same pages the monitor reads.
After the slots comes a control area of one slot's size: the start gate's word.
"""

from __future__ import annotations

import errno
import mmap
import struct
import time
from typing import Any, NamedTuple

from ..errors import UsageError
from .latency import LatencyBlock

SLOT_SIZE = 128
NOPS = 6
#: Where each field of native.h's struct end_slot starts; the extension's
#: slot_layout() must agree (tests/engine/test_workload_registry.py).
SLOT_OFFSETS = {
    "rounds": 0, "errors": 8, "tid": 16, "state": 20, "last_errno": 24, "stop": 28,
    "bad_value": 32, "ops": 40, "failed_op": 40 + 8 * NOPS, "stats_req": 92,
    "stats_ack": 96, "cpu": 100, "stats_ns": 104, "nvcsw": 112, "nivcsw": 120,
}  # fmt: skip
# rounds, errors, tid, state, last_errno, stop, bad_value, ops[6], failed_op
_LAYOUT = struct.Struct(f"<QQiiiiq{NOPS}Qi")
_STOP_OFFSET = SLOT_OFFSETS["stop"]
_STATE_OFFSET = SLOT_OFFSETS["state"]
_STATE_CODE = struct.Struct("<i")
_ROUNDS = struct.Struct("<Q")
_STOP = struct.Struct("<i")
_REQ_OFFSET = SLOT_OFFSETS["stats_req"]
_REQ = struct.Struct("<I")
_ACK_OFFSET = SLOT_OFFSETS["stats_ack"]
_ACK = struct.Struct("<I")
# cpu, stats_ns, nvcsw, nivcsw: packed in C as in this struct (no padding before stats_ns).
_STATS = struct.Struct("<iQQQ")
_STATS_OFFSET = SLOT_OFFSETS["cpu"]
_STATS_BUSY = 0xFFFFFFFF  # IPCTOP_STATS_BUSY: the end is writing its answer
CONTROL_SIZE = SLOT_SIZE  # the control area after the slots
_GATE = struct.Struct("<I")

STATES = {0: "starting", 1: "running", 2: "done", 3: "failed", 4: "removed externally"}
ENDED = (3, 4)  # the codes of "failed" and "removed externally"


class SlotReading(NamedTuple):
    rounds: int
    errors: int
    tid: int
    state: str
    last_errno: int
    bad_value: int
    ops: tuple[int, ...]
    failed_op: int


#: ends one engine holds at once (the counter block's slots)
CAPACITY = 4096


def _units(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def _more_fit(n: int, unit: str) -> str:
    return f"1 more {unit} fits" if n == 1 else f"{n} more {unit}s fit"


def check_slots(units: int, per_unit: int, unit: str, workload: str, free: int = CAPACITY) -> None:
    """Refuse `units` more units whose ends the counter block has no slots for,
    before the first of them starts (60 chat rooms are 4,800 ends)."""
    need = units * per_unit
    if need <= free:
        return
    room = (
        _more_fit(free // per_unit, unit)
        if free < CAPACITY
        else f"at most {_units(CAPACITY // per_unit, unit)}"
    )
    raise UsageError(
        f"{_units(units, unit)} of {workload} are {need:,} ends; one ipctop runs at most "
        f"{CAPACITY:,} ends at once: {room}"
    )


class CounterBlock:
    """Fixed-capacity slots with a free list; slots are zeroed on reuse."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self.buf = mmap.mmap(-1, capacity * SLOT_SIZE + CONTROL_SIZE)
        #: the block as 8-byte words, for a Python end's counters: struct.pack_into
        #: writes a field a byte at a time, so a reader beside it saw a count of 0
        #: or a few in 3 % of its readings; one item of a 'Q' view is one store.
        self._bytes = memoryview(self.buf)
        self.words = self._bytes.cast("Q")
        self.latency = LatencyBlock(capacity)  # the slots are full: timing has its own
        self._free = list(range(capacity - 1, -1, -1))
        #: where the start gate's word is: 0 when open, else the id of the batch it holds
        self.gate_offset = capacity * SLOT_SIZE
        self._gate_ids = 0

    def allocate(self) -> int:
        if not self._free:
            raise RuntimeError(f"counter block full ({self.capacity} ends)")
        slot = self._free.pop()
        off = slot * SLOT_SIZE
        self.buf[off : off + SLOT_SIZE] = bytes(SLOT_SIZE)
        self.latency.clear(slot)
        return slot

    def release(self, slot: int) -> None:
        self._free.append(slot)

    @property
    def free(self) -> int:
        """Slots not held by an end."""
        return len(self._free)

    def read(self, slot: int) -> SlotReading:
        return read_slot(self.buf, slot)

    def state_code(self, slot: int) -> int:
        """The end's state as its number (see STATES): one small read, for polling."""
        code: int = _STATE_CODE.unpack_from(self.buf, slot * SLOT_SIZE + _STATE_OFFSET)[0]
        return code

    def rounds(self, slot: int) -> int:
        rounds: int = _ROUNDS.unpack_from(self.buf, slot * SLOT_SIZE)[0]
        return rounds

    def request_stop(self, slot: int) -> None:
        _STOP.pack_into(self.buf, slot * SLOT_SIZE + _STOP_OFFSET, 1)

    def stop_requested(self, slot: int) -> bool:
        flag: int = _STOP.unpack_from(self.buf, slot * SLOT_SIZE + _STOP_OFFSET)[0]
        return flag != 0

    def request_stats(self, slot: int, seq: int) -> None:
        """Ask the end to publish its CPU and switch counts at its next round."""
        post_request(self.buf, slot, request_word(seq))

    def stats(self, slot: int) -> EndStats | None:
        """The end's last whole answer; None if it never answered (Python ends never
        do) or is writing one right now, twice over (it takes a microsecond)."""
        return read_answer(self.buf, slot)

    # -- the start gate (native/gate.c) -----------------------------------------
    def close_gate(self) -> int:
        """Close the gate for a new batch and return its id, for the batch's native ends."""
        self._gate_ids = self._gate_ids % 0xFFFFFFFF + 1  # never 0, which is "open"
        _GATE.pack_into(self.buf, self.gate_offset, self._gate_ids)
        return self._gate_ids

    def open_gate(self) -> None:
        """Open the gate and wake every end held by it; safe to call when open."""
        from .objects import _native

        if _native is not None:
            _native.gate_set(self.buf, self.gate_offset, 0)
        else:  # no native end can wait on it: the word alone is enough
            _GATE.pack_into(self.buf, self.gate_offset, 0)

    def wake_gate(self) -> None:
        """Wake the ends held by the gate without opening it: a stopped one ends,
        the others wait on (the batch's remaining pairs go on starting)."""
        from .objects import _native

        word = _GATE.unpack_from(self.buf, self.gate_offset)[0]
        if _native is not None:
            _native.gate_set(self.buf, self.gate_offset, word)

    @property
    def gate_closed(self) -> bool:
        word: int = _GATE.unpack_from(self.buf, self.gate_offset)[0]
        return word != 0

    def close(self) -> None:
        # The views first: an mmap with views of it open refuses to close.
        self.words.release()
        self._bytes.release()
        self.buf.close()
        self.latency.close()


class EndStats(NamedTuple):
    """What a native end publishes on request: see count_round in native.h."""

    ack: int
    cpu: int
    ns: int  # CLOCK_MONOTONIC when it answered
    voluntary: int
    involuntary: int


def read_slot(buf: Any, slot: int) -> SlotReading:
    """One end's slot in `buf` (the block, or a copy of it: the sampler's tests)."""
    r = _LAYOUT.unpack_from(buf, slot * SLOT_SIZE)
    return SlotReading(
        rounds=r[0],
        errors=r[1],
        tid=r[2],
        state=STATES.get(r[3], "unknown"),
        last_errno=r[4],
        bad_value=r[6],
        ops=tuple(r[7:13]),
        failed_op=r[13],
    )


def read_answer(buf: Any, slot: int) -> EndStats | None:
    """CounterBlock.stats of a slot in `buf`."""
    off = slot * SLOT_SIZE
    for _ in range(2):
        ack = _ACK.unpack_from(buf, off + _ACK_OFFSET)[0]
        if ack == 0:
            return None
        fields = _STATS.unpack_from(buf, off + _STATS_OFFSET)
        if ack != _STATS_BUSY and _ACK.unpack_from(buf, off + _ACK_OFFSET)[0] == ack:
            return EndStats(ack, *fields)
    return None


def post_request(buf: Any, slot: int, word: int) -> None:
    """Post a request word (request_word) in one slot of `buf`."""
    _REQ.pack_into(buf, slot * SLOT_SIZE + _REQ_OFFSET, word)


def request_word(seq: int) -> int:
    """What request `seq` is posted as: never 0 (no request) nor "busy"."""
    return seq % _STATS_BUSY or 1


class SlotWriter:
    """What a pure-Python end uses to publish its progress (the fallback engine)."""

    _HEAD = struct.Struct("<QQii")
    _STATE = struct.Struct("<ii")

    def __init__(self, block: CounterBlock, slot: int, think_ns: int = 0) -> None:
        self.buf = block.buf
        self.off = slot * SLOT_SIZE
        self._words = block.words
        self._rounds = self.off // 8
        self._errors = (self.off + SLOT_OFFSETS["errors"]) // 8
        self.block = block
        self.slot = slot
        self.think_ns = think_ns

    def think(self) -> None:
        """--think-ns in the Python engine: N ns of this thread's own CPU time spent
        between receive and send (work, not a wait: preemption does not shorten it)."""
        if self.think_ns:
            until = time.thread_time_ns() + self.think_ns
            while time.thread_time_ns() < until:
                pass

    def start(self, tid: int) -> None:
        _LAYOUT.pack_into(self.buf, self.off, 0, 0, tid, 1, 0, 0, 0, *([0] * NOPS), 0)

    def rounds(self, n: int) -> None:
        """One 8-byte store (see CounterBlock.words): the sampler never reads it torn."""
        self._words[self._rounds] = n

    def error(self, count: int, bad_value: int) -> None:
        self._words[self._errors] = count
        struct.pack_into("<q", self.buf, self.off + SLOT_OFFSETS["bad_value"], bad_value)

    def finish(self, err: int) -> None:
        stop = self.stopped()
        state = 2
        if err and not stop:
            state = 4 if err in (errno.EIDRM, errno.EINVAL) else 3
        self._STATE.pack_into(self.buf, self.off + SLOT_OFFSETS["state"], state, err)

    def stopped(self) -> bool:
        return self.block.stop_requested(self.slot)
