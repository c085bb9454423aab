"""Engine.poll asks only the pairs the death watch names, and says what it said
when it asked every running pair.

Real ends die the ways they do (an end stops by itself and its thread returns,
the pair's object is removed under it, a forked end is killed): one poll with
the watch says what one poll of every pair (`every=True`, the reference) says,
on an engine of its own, each after the death can be seen. Beside them, the
watch's parts on planted slots and a thread held alive on purpose.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections import deque

import pytest
from conftest import wait_for

from ipctop.engine import objects
from ipctop.engine.config import RunConfig
from ipctop.engine.contention import CONTENTION
from ipctop.engine.counters import ENDED, SLOT_OFFSETS, SLOT_SIZE, CounterBlock
from ipctop.engine.death_watch import DeathWatch, a_child_exited
from ipctop.engine.end_launch import End, Pair
from ipctop.engine.engine import Engine, resolve_engine

native = objects._native
HAS = native is not None and hasattr(native, "ends_ended")
needs_watch = pytest.mark.skipif(not HAS, reason="needs the C extension with ends_ended")
NATIVE = resolve_engine() == "native"


def _set_state(block: CounterBlock, slot: int, code: int) -> None:
    at = slot * SLOT_SIZE + SLOT_OFFSETS["state"]
    block.buf[at : at + 4] = code.to_bytes(4, "little", signed=True)


@needs_watch
def test_ends_ended_names_the_ends_python_finds_failed_or_removed() -> None:
    from array import array

    block = CounterBlock(16)
    try:
        codes = [0, 1, 2, 3, 4, 5, -1, 4, 3, 1]
        slots = array("i", [9, 0, 3, 1, 15, 7, 2, 4, 8, 5])
        for slot, code in zip(slots, codes):
            _set_state(block, slot, code)
        want = [i for i, slot in enumerate(slots) if block.state_code(slot) in ENDED]
        assert native.ends_ended(block.buf, slots) == want == [3, 4, 7, 8]
        assert native.ends_ended(block.buf, array("i")) == []
        with pytest.raises(ValueError, match="outside the counter block"):
            native.ends_ended(block.buf, array("i", [17]))  # 16 is the gate's control area
    finally:
        block.close()


def _pairs(n: int, block: CounterBlock) -> list[Pair]:
    out = []
    for i in range(n):
        ends = tuple(End(i, role, block.allocate(), None, os.getpid()) for role in "AB")
        out.append(Pair(i, ends, None))  # no objects: the watch reads only slots
    return out


@needs_watch
def test_a_returned_thread_is_looked_at_until_it_is_gone() -> None:
    block = CounterBlock(16)
    returned: deque[End] = deque()
    watch = DeathWatch(block.buf, native, returned)
    pairs = _pairs(4, block)
    release = threading.Event()
    held = threading.Thread(target=release.wait, name="test-held")
    held.start()
    try:
        assert watch.suspects(pairs) == []  # nothing ended
        end = pairs[2].ends[1]
        end.thread = held
        returned.append(end)  # as Launcher._thread does, before its thread is gone
        assert watch.suspects(pairs) == [pairs[2]]
        assert watch.suspects(pairs) == [pairs[2]]  # still alive: asked again
        release.set()
        held.join()
        assert watch.suspects(pairs) == [pairs[2]]  # gone: poll fails the pair now
        assert watch.suspects(pairs) == []
        _set_state(block, pairs[3].ends[0].slot, 4)
        _set_state(block, pairs[1].ends[1].slot, 3)
        _set_state(block, pairs[1].ends[0].slot, 3)
        assert watch.suspects(pairs) == [pairs[1], pairs[3]]  # in the pairs' order, once each
        pairs[1].state = "failed: it did"
        assert watch.suspects(pairs) == [pairs[3]]  # a pair already failed is not asked
        pairs.pop()  # the same list, one pair fewer
        assert watch.suspects(pairs) == []
    finally:
        release.set()
        block.close()


def test_without_the_extension_every_running_pair_is_asked() -> None:
    block = CounterBlock(8)
    returned: deque[End] = deque()
    watch = DeathWatch(block.buf, None, returned)
    pairs = _pairs(3, block)
    pairs[1].state = "failed: it did"
    returned.append(pairs[0].ends[0])
    try:
        assert watch.suspects(pairs) == [pairs[0], pairs[2]]
        assert not returned
    finally:
        block.close()


@needs_watch
def test_a_child_that_exited_makes_every_running_pair_asked() -> None:
    block = CounterBlock(8)
    watch = DeathWatch(block.buf, native, deque())
    pairs = _pairs(3, block)
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    pairs[1].ends[0].child, pairs[1].ends[0].pid = True, pid
    try:
        assert wait_for(lambda: _exited(pid), 30)
        assert a_child_exited()
        assert watch.suspects(pairs) == pairs  # whose child it is, poll's waitpid says
    finally:
        os.waitpid(pid, 0)
        block.close()


def _exited(pid: int) -> bool:
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _removed(e: Engine) -> None:
    """Pair 1's semaphores removed under its ends (as `ipcrm -s` would): one
    array, or the Python engine's two sets."""
    for obj in e.pairs[1].res.objects:
        native.rmid("sem", obj.id)


def _stopped(e: Engine) -> None:
    """Pair 1's A stops by itself: its loop ends, its thread returns."""
    e.counters.request_stop(e.pairs[1].ends[0].slot)


def _killed(e: Engine) -> None:
    """Pair 1's forked B is killed."""
    os.kill(e.pairs[1].ends[1].pid, signal.SIGKILL)


def _seen(e: Engine, how: str) -> bool:
    a, b = e.pairs[1].ends
    if how == "removed":
        return all(e.counters.state_code(end.slot) in ENDED for end in (a, b))
    if how == "stopped":
        return a.thread is not None and not a.thread.is_alive()
    return _exited(b.pid)


CASES = [
    ("removed", "native", "threads"),
    ("removed", "native", "processes"),
    ("removed", "python", "threads"),
    ("stopped", "native", "threads"),
    ("stopped", "python", "threads"),
    ("killed", "native", "processes"),
]


def _deaths(e: Engine, every: bool) -> list[str]:
    # Another ipctop on CPU 0 (a test run beside this one) is said too: not a death.
    return [s for s in e.poll(every=every) if not s.startswith(CONTENTION)]


def _one_poll(how: str, engine: str, mode: str, every: bool) -> tuple[list[str], list[str]]:
    """What one poll says once pair 1's end is seen gone, and every pair's state."""
    inject = {"removed": _removed, "stopped": _stopped, "killed": _killed}[how]
    with Engine(RunConfig("sysv-sem", "same", mode, (0,), engine)) as e:
        e.start(3)
        time.sleep(0.05)
        assert _deaths(e, every) == []  # nothing ended yet
        inject(e)
        assert wait_for(lambda: _seen(e, how), 30)
        said = _deaths(e, every)
        states = [pair.state for pair in e.pairs]
        assert _deaths(e, every) == []  # said once
    return [_plain(s) for s in said], [_plain(s) for s in states]


def _plain(said: str) -> str:
    """Without what differs between two engines: a pid, and whether a removed
    set's end was in semop (EIDRM) or came to it after (EINVAL)."""
    said = re.sub(r"pid \d+", "pid N", said)
    return re.sub(r"removed externally \([^)]*\)", "removed externally (errno)", said)


@needs_watch
@pytest.mark.parametrize(("how", "engine", "mode"), CASES)
def test_one_poll_with_the_watch_says_what_asking_every_pair_says(
    how: str, engine: str, mode: str
) -> None:
    if engine == "native" and not NATIVE:
        pytest.skip("needs the native engine")
    reference = _one_poll(how, engine, mode, every=True)
    watched = _one_poll(how, engine, mode, every=False)
    assert watched == reference
    said, states = watched
    assert len(said) == 1 and said[0].startswith("pair 1 failed: ")
    assert states[0] == states[2] == "running" and states[1].startswith("failed: ")


@needs_watch
def test_a_healthy_engine_asks_no_pair() -> None:
    if not NATIVE:
        pytest.skip("needs the native engine")
    with Engine(RunConfig("sysv-sem", "same", "threads", (0,))) as e:
        e.start(4)
        for _ in range(3):
            time.sleep(0.02)
            assert e._deaths.suspects(e.pairs) == []
        e.remove_pair()  # its ends' threads return: their pair is gone, nothing to say
        assert e._deaths.suspects(e.pairs) == []
        assert all(pair.active for pair in e.pairs)
