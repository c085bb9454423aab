"""Which running pairs may have lost an end since the last poll (Engine.poll).

Engine.poll asked every end of every running pair, every sample, whether it
ended: a read of its slot's state in Python, and its thread's is_alive() or a
waitpid() of its child, a syscall an end: 0.23 ms a sample at 64 pairs and
growing with them, in samples where nearly always nothing had ended. Here one
native pass reads every end's state, each end thread says when it returns,
and one waitid() says whether any child of this process has exited. Engine.poll
asks only the pairs these name, with the same code as before, so each death
is said as before and in the same order. Where the watch cannot tell (no
extension, some child of this process exited), every running pair is asked.

One case it does not see: an end's child reaped by other code of this
process while other children live (ipctop has no such code: only the engine
waits for its ends).
"""

from __future__ import annotations

import operator
import os
from array import array
from collections import deque
from typing import Any, NamedTuple

from .end_launch import End, Pair


class _Layout(NamedTuple):
    """Every end of a list of pairs: made again only when the list changes."""

    pairs: list[Pair]  # the list it was made of, compared by identity
    slots: array[int]  # int32: each end's counter slot, pair by pair
    owner: list[Pair]  # each end's pair, in the same order
    position: dict[int, int]  # id(end) -> its place in slots
    children: bool  # some end is a forked child


def _layout(pairs: list[Pair]) -> _Layout:
    ends = [(pair, end) for pair in pairs for end in pair.ends]
    return _Layout(
        pairs=list(pairs),
        slots=array("i", [end.slot for _, end in ends]),
        owner=[pair for pair, _ in ends],
        position={id(end): i for i, (_, end) in enumerate(ends)},
        children=any(end.child for _, end in ends),
    )


def _same(pairs: list[Pair], known: list[Pair]) -> bool:
    return len(pairs) == len(known) and all(map(operator.is_, pairs, known))


def a_child_exited() -> bool:
    """Whether some child of this process has exited and is not reaped yet
    (looked at, not reaped), or none is left (so an end's was reaped: poll says so)."""
    try:
        return os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


class DeathWatch:
    """Names the pairs Engine._death may find an end gone in: each one it
    would find, perhaps a few more."""

    def __init__(self, buf: Any, native: Any, returned: deque[End]) -> None:
        """buf: the counter block; native: the extension or None; returned: where
        each end thread puts its End when it returns (Launcher.returned)."""
        self._buf = buf
        self._native = native if native is not None and hasattr(native, "ends_ended") else None
        self._returned = returned
        self._pending: list[End] = []  # returned, their pair running: until the thread is gone
        self._lay: _Layout | None = None

    def suspects(self, pairs: list[Pair]) -> list[Pair]:
        """The running pairs of `pairs`, in their order, that may have lost an end.
        Called by one thread at a time (Engine.poll holds the engine's lock)."""
        while self._returned:
            self._pending.append(self._returned.popleft())
        if self._native is None:
            self._pending.clear()  # every pair is asked: nothing to remember
            return [pair for pair in pairs if pair.active]
        lay = self._lay
        if lay is None or not _same(pairs, lay.pairs):
            lay = self._lay = _layout(pairs)
        hits = set(self._native.ends_ended(self._buf, lay.slots))
        keep: list[End] = []
        for end in self._pending:
            i = lay.position.get(id(end))
            if i is None or not lay.owner[i].active:
                continue  # its pair was removed or has stopped: nothing to say of it
            hits.add(i)
            if end.thread is not None and end.thread.is_alive():
                keep.append(end)  # returned, not yet gone: _death only says a thread is gone
        self._pending = keep
        if lay.children and a_child_exited():
            return [pair for pair in pairs if pair.active]
        out: list[Pair] = []
        for i in sorted(hits):
            pair = lay.owner[i]
            if pair.active and (not out or out[-1] is not pair):
                out.append(pair)
        return out
