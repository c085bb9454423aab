"""Every end's figures of one reading in two native calls (native/end_pass.c).

The Python pass (end_figures.PythonEnds) spends about 20 us an end: 9 ms a
sample at 512 ends. Here ends_read reads every slot and answer and names the
ends /proc must tell about; after the one /proc pass, ends_figures makes
every end's rates, ThreadSample and progress. Python is left with what
depends on the ends list (rebuilt only when it changes), a pair that stopped
(its state), and the rare end that saw wrong messages or may have left its
CPU: those go through the same code as the Python pass.
"""

from __future__ import annotations

import dataclasses
import math
import operator
import struct
from array import array
from typing import Any, NamedTuple

from . import objects
from .counters import STATES
from .end_figures import (
    EndPass,
    EndStep,
    Key,
    PythonEnds,
    Seen,
    TaskReader,
    TasksReader,
    check_n_ops,
    wrong_messages,
)
from .end_launch import End, Pair, active_count
from .procfs import TaskStat
from .sample import ThreadSample

#: struct end_seen: rounds, errors, vcsw, ivcsw, ops[6], at, ack, cpu, vrate, ivrate, none
_SEEN = struct.Struct("<4Q6Qdqq2dQ")
_CPU_AT, _NONE_AT = 96, 120  # where cpu and none are in a record
NONE_VCSW, NONE_IVCSW, NONE_ACK, NONE_CPU, NONE_VRATE, NONE_IVRATE = 1, 2, 4, 8, 16, 32
#: the order ends_figures fills ThreadSample's fields in (a test checks it is the class's)
THREAD_FIELDS = (
    "pair", "role", "tid", "bound_cpu", "last_cpu", "rounds", "ops_per_s", "errors", "state",
    "vcsw_per_s", "ivcsw_per_s", "ops",
)  # fmt: skip
_TID = operator.attrgetter("tid")
_STATE_NAMES = (*(STATES[code] for code in range(5)), "unknown")


class _Layout(NamedTuple):
    """What the pass needs of a list of ends: made again only when the list changes."""

    ends: list[End]
    tids: list[int]
    keys: list[Key]
    slots: array[int]  # int32, each end's counter slot
    ident: list[tuple[int, str, int, int | None]]  # a ThreadSample's first four fields
    started: array[float]  # its pair's start, NaN when it has no pair
    ids: list[tuple[int, int]]  # (pid, tid): its /proc files
    by_pair: dict[int, list[int]]  # pair index -> positions of its ends
    zeros: bytes  # no pair stopped
    identity: array[int]  # int32 0..n-1: the last reading was of these very ends


def _layout(ends: list[End], tids: list[int], pairs: list[Pair]) -> _Layout:
    by_index = {p.index: p for p in pairs}
    by_pair: dict[int, list[int]] = {}
    for i, end in enumerate(ends):
        by_pair.setdefault(end.pair, []).append(i)
    return _Layout(
        ends=list(ends),
        tids=tids,
        keys=[(e.pair, e.role, e.tid) for e in ends],
        slots=array("i", [e.slot for e in ends]),
        ident=[(e.pair, e.role, e.tid, e.bound_cpu) for e in ends],
        started=array(
            "d", [by_index[e.pair].started if e.pair in by_index else math.nan for e in ends]
        ),  # fmt: skip
        ids=[(e.pid, e.tid) for e in ends],
        by_pair=by_pair,
        zeros=bytes(len(ends)),
        identity=array("i", range(len(ends))),
    )


def _same(ends: list[End], known: list[End]) -> bool:
    return len(ends) == len(known) and all(map(operator.is_, ends, known))


class NativeEnds(EndPass):
    """The reading in two native calls; the per-end state is an array of records."""

    def __init__(self, tasks: TasksReader, task: TaskReader, native: Any) -> None:
        super().__init__(tasks, task)
        self._native = native
        self._lay: _Layout | None = None
        self._state = bytearray()  # struct end_seen per end of the last reading
        self._keys: list[Key] = []  # whose records they are
        self._watch = array("i")
        self._watch_of: tuple[_Layout | None, int] = (None, -1)  # (layout, drifts said)

    def seen(self) -> dict[Key, Seen]:
        return {key: _decoded(self._state, i) for i, key in enumerate(self._keys)}

    def ask(self, buf: Any, ends: list[End], word: int) -> None:
        lay = self._lay
        same = lay is not None and _same(ends, lay.ends)
        slots = lay.slots if lay is not None and same else array("i", [e.slot for e in ends])
        self._native.ends_ask(buf, slots, word)

    def step(
        self,
        buf: Any,
        ends: list[End],
        pairs: list[Pair],
        now: float,
        dt: float,
        detail: bool,
        n_ops: int,
    ) -> EndStep:
        check_n_ops(n_ops)  # before anything is read, as the Python pass
        lay, prev_idx = self._prepare(ends, pairs)
        reading, procs = self._native.ends_read(buf, lay.slots, detail, self._state, prev_idx)
        # Called even with no end to read: it closes the files of ends gone since.
        got = self._tasks([lay.ids[i] for i in procs], detail)
        told = [None if t is None else (t.last_cpu, t.voluntary, t.involuntary) for t in got]
        by_index: dict[int, Pair] = {}
        stopped: list[int] = []
        if active_count(pairs) != len(pairs):  # rare: a pass over pairs only then
            by_index = {p.index: p for p in pairs}
            stopped = [
                i for p in by_index.values() if not p.active for i in lay.by_pair.get(p.index, ())
            ]
        inactive: bytes | bytearray = lay.zeros
        if stopped:
            inactive = bytearray(len(lay.ends))
            for i in stopped:
                inactive[i] = 1
        state, threads, progress, errors, op_rates, drift = self._native.ends_figures(
            reading, self._state, prev_idx, told, lay.started, inactive, self._watched(lay),
            lay.ident, now, dt, ThreadSample, THREAD_FIELDS, _STATE_NAMES, n_ops,
        )  # fmt: skip
        self._state, self._keys = state, lay.keys
        for i in stopped:
            threads[i] = dataclasses.replace(threads[i], state=by_index[lay.ends[i].pair].state)
        events = self._said(lay, threads, errors, drift) if errors or drift else []
        tasks: dict[Key, TaskStat | None] = {}
        if detail:
            tasks = {key: None for key in lay.keys}
            for i, task in zip(procs, got):
                tasks[lay.keys[i]] = task
        return EndStep(threads, events, progress, op_rates or [], tasks)

    def _prepare(self, ends: list[End], pairs: list[Pair]) -> tuple[_Layout, array[int]]:
        """The layout of these ends, and where each one's record of the last reading is."""
        tids = list(map(_TID, ends))
        lay = self._lay
        if lay is None or lay.tids != tids or not _same(ends, lay.ends):
            lay = self._lay = _layout(ends, tids, pairs)
        elif self._keys is lay.keys:
            return lay, lay.identity
        # As the Python pass looks an end up: by (pair, role, tid).
        last = {key: i for i, key in enumerate(self._keys)}
        return lay, array("i", [last.get(key, -1) for key in lay.keys])

    def _watched(self, lay: _Layout) -> array[int]:
        """Per end, the CPU it is bound to while its drift is unsaid, else -1."""
        if self._watch_of[0] is not lay or self._watch_of[1] != len(self._drift_said):
            said = self._drift_said
            self._watch = array("i", [
                -1 if e.bound_cpu is None or not e.tid or key in said else e.bound_cpu
                for e, key in zip(lay.ends, lay.keys)
            ])  # fmt: skip
            self._watch_of = (lay, len(said))
        return self._watch

    def _said(
        self,
        lay: _Layout,
        threads: list[ThreadSample],
        errors: list[tuple[int, int, int]],
        drift: list[int],
    ) -> list[str]:
        """The events of the ends that saw wrong messages or may have left their
        CPU, in the order of the ends (each end's wrong messages first)."""
        events: list[str] = []
        wrong = {i: (count, bad) for i, count, bad in errors}
        look = set(drift)
        for i in sorted(wrong.keys() | look):
            end = lay.ends[i]
            if i in wrong:
                events.append(wrong_messages(end, *wrong[i]))
            if i in look:
                seen = _decoded(self._state, i)
                moved, said = self._moved(end, seen, lay.keys[i])
                if moved.cpu is not None and moved.cpu != seen.cpu:
                    _set_cpu(self._state, i, moved.cpu)
                    threads[i] = dataclasses.replace(threads[i], last_cpu=moved.cpu)
                if said:
                    events.append(said)
        return events


def _decoded(state: bytes | bytearray, i: int) -> Seen:
    """Record i as the Python pass's Seen."""
    r = _SEEN.unpack_from(state, i * _SEEN.size)
    none = r[15]

    def opt(value: Any, bit: int) -> Any:
        return None if none & bit else value

    return Seen(
        r[0], r[1], opt(r[2], NONE_VCSW), opt(r[3], NONE_IVCSW), tuple(r[4:10]), r[10],
        opt(r[11], NONE_ACK), opt(r[12], NONE_CPU), opt(r[13], NONE_VRATE), opt(r[14], NONE_IVRATE),
    )  # fmt: skip


def _set_cpu(state: bytearray, i: int, cpu: int) -> None:
    """Record i's CPU is `cpu` (read from /proc for an end that moved)."""
    at = i * _SEEN.size
    struct.pack_into("<q", state, at + _CPU_AT, cpu)
    none = struct.unpack_from("<Q", state, at + _NONE_AT)[0]
    struct.pack_into("<Q", state, at + _NONE_AT, none & ~NONE_CPU)


def end_pass(kind: str, tasks: TasksReader, task: TaskReader) -> EndPass:
    """The sampler's per-end reading. kind: "auto" (native when the extension
    has the pass), "native" or "python" (the reference; the bench compares them)."""
    native = objects._native
    has = native is not None and hasattr(native, "ends_figures")
    if kind == "python" or (kind == "auto" and not has):
        return PythonEnds(tasks, task)
    if kind not in ("auto", "native"):
        raise ValueError(f"end pass {kind!r}: auto, native or python")
    if not has:
        raise RuntimeError("the native end pass needs the C extension, rebuilt (pip install -e .)")
    return NativeEnds(tasks, task, native)
