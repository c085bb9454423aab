"""The native end pass makes every figure the Python pass makes, end for end.

Both passes read the same copy of the counter block at the same `now`, and
are told the same /proc readings (read once per step, from the real /proc or
planted), so any difference is the pass's own. Real ends of a real engine
(native and Python ends, threads and processes, an end that starts and one
that stops between samples, the detail view, an end moved off its CPU), and
planted slots for what real ends do rarely: a stale or half-written answer,
wrong messages, a failed pair, an unknown state, switch counts that go back.
Each ThreadSample's op counts (ThreadSample.ops) are among the figures compared:
real sysv-lifecycle ends count their calls, planted slots any six.
"""

from __future__ import annotations

import dataclasses
import os
import struct
import threading
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import wait_for

from ipctop.engine import objects, task_reads
from ipctop.engine.config import RunConfig
from ipctop.engine.counters import NOPS, SLOT_OFFSETS, SLOT_SIZE, CounterBlock, read_slot
from ipctop.engine.end_figures import EndPass, EndStep, PythonEnds
from ipctop.engine.end_launch import End
from ipctop.engine.end_pass import THREAD_FIELDS, NativeEnds, end_pass
from ipctop.engine.engine import Engine, resolve_engine
from ipctop.engine.procfs import TaskStat
from ipctop.engine.sample import ThreadSample
from ipctop.engine.sampler import Sampler
from ipctop.engine.workloads.msgbench import LIFECYCLE_OPS

HAS_PASS = objects._native is not None and hasattr(objects._native, "ends_figures")
needs_pass = pytest.mark.skipif(not HAS_PASS, reason="needs the C extension with the end pass")

Source = Callable[[int, int, bool], "TaskStat | None"]


def shallow(obj: object) -> dict[str, object]:
    """Each field of a (slotted) dataclass by name: vars() for a class without a dict."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}  # type: ignore[arg-type]


class Told:
    """/proc as both passes are told it: each (pid, tid) read once a step; the
    readers' calls are kept, so the tests see both asked about the same ends."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.cache: dict[tuple[int, int, Any], TaskStat | None] = {}
        self.calls: dict[str, list[Any]] = {"python": [], "native": []}

    def _read(self, pid: int, tid: int, how: Any) -> TaskStat | None:
        if (pid, tid, how) not in self.cache:
            self.cache[(pid, tid, how)] = self.source(pid, tid, how is True)
        return self.cache[(pid, tid, how)]

    def passes(self) -> tuple[PythonEnds, NativeEnds]:
        def tasks(who: str) -> Callable[[list[tuple[int, int]], bool], list[TaskStat | None]]:
            def read(ids: list[tuple[int, int]], detail: bool) -> list[TaskStat | None]:
                self.calls[who].append((list(ids), detail))
                return [self._read(pid, tid, detail) for pid, tid in ids]

            return read

        def task(who: str) -> Callable[[int, int], TaskStat | None]:
            def read(pid: int, tid: int) -> TaskStat | None:
                self.calls[who].append(("one", pid, tid))
                return self._read(pid, tid, "one")

            return read

        py = PythonEnds(tasks("python"), task("python"))
        return py, NativeEnds(tasks("native"), task("native"), objects._native)


def real_proc(pid: int, tid: int, detail: bool) -> TaskStat | None:
    return task_reads.python_read_tasks([(pid, tid)], "/proc", detail)[0]


def same_step(
    py: EndPass, nat: EndPass, buf: Any, ends: list[End], pairs: list[Any], now: float,
    dt: float, detail: bool = False, n_ops: int = len(LIFECYCLE_OPS),
) -> EndStep:  # fmt: skip
    """Both passes' reading of one copy of the block: every figure alike, to the repr
    (each end's op counts too: the first n_ops of its slot's, in every ThreadSample)."""
    a = py.step(buf, ends, pairs, now, dt, detail, n_ops)
    b = nat.step(buf, ends, pairs, now, dt, detail, n_ops)
    assert all(type(t) is ThreadSample for t in b.threads)
    assert repr(b.threads) == repr(a.threads)
    assert b.threads == a.threads
    assert [shallow(t) for t in b.threads] == [shallow(t) for t in a.threads]
    assert b.events == a.events
    assert list(b.progress.items()) == list(a.progress.items())
    assert repr(b.op_rates) == repr(a.op_rates)
    assert [t.ops for t in b.threads] == [read_slot(buf, e.slot).ops[:n_ops] for e in ends]
    if detail:  # what the costs read; the Python pass also keeps it without detail
        assert b.tasks == a.tasks
    assert repr(nat.seen()) == repr(py.seen())
    return a


def test_the_pass_fills_thread_sample_as_its_dataclass_would() -> None:
    assert THREAD_FIELDS == tuple(f.name for f in dataclasses.fields(ThreadSample))
    # ends_figures makes one with object.__new__ and object.__setattr__ per field,
    # which is all the frozen dataclass's __init__ does while it has no hook of its own.
    assert not hasattr(ThreadSample, "__post_init__")
    assert ThreadSample.__new__ is object.__new__
    vals = (3, "B", 41, 1, 0, 7, 2.5, 0, "running", 1.0, None, (1, 2))
    made = object.__new__(ThreadSample)
    for name, value in zip(THREAD_FIELDS, vals):
        object.__setattr__(made, name, value)
    assert made == ThreadSample(*vals)
    # Slotted: 2,048 a sample at 1,024 pairs, each without a dict to make and collect.
    assert not hasattr(made, "__dict__")


REAL = [("native", "threads"), ("native", "processes"), ("python", "threads")]


@needs_pass
@pytest.mark.parametrize(("engine", "mode"), REAL)
def test_the_native_pass_equals_the_python_pass_on_real_ends(engine: str, mode: str) -> None:
    if engine == "native" and resolve_engine() != "native":
        pytest.skip("needs the native engine")
    cpus = tuple(sorted(os.sched_getaffinity(0)))[:2]
    told = Told(real_proc)
    py, nat = told.passes()
    with Engine(RunConfig("sysv-sem", "same", mode, cpus, engine)) as e:
        e.start(3)
        last, asked = time.monotonic() - 0.5, [0]

        def step(detail: bool = False) -> EndStep:
            nonlocal last
            told.cache.clear()
            now = time.monotonic()
            dt, last = now - last, now
            got = same_step(py, nat, bytes(e.counters.buf), e.ends(), e.pairs, now, dt, detail)
            asked[0] += 1
            py.ask(e.counters.buf, e.ends(), asked[0])  # answered before the next step
            time.sleep(0.15)
            if engine == "native":
                # Each end answers at its next round, which a loaded box can hold back
                # past any fixed sleep; one yet to answer is read from /proc instead.
                word = asked[0]
                wait_for(
                    lambda: all(
                        (a := e.counters.stats(end.slot)) is not None and a.ack == word
                        for end in e.ends()
                    ),
                    timeout=30,
                )
            return got

        first = step()  # every end is new
        assert len(first.threads) == 6 and told.calls["native"][0][0]  # /proc told of new ends
        for _ in range(3):
            step()
        e.add_pair()  # an end that starts between samples
        step()
        step()
        gone = e.remove_pair()  # and one that stops
        assert gone is not None
        after = step()
        assert {t.pair for t in after.threads} == {0, 1, 2}
        step(detail=True)
        step(detail=True)
        last_plain = step()
        if engine == "native":  # native ends answer: no /proc read once they have
            assert told.calls["native"][-1] == ([], False)
        assert all(t.rounds > 0 for t in last_plain.threads), last_plain.threads
        if len(cpus) > 1:
            victim = e.pairs[0].ends[0]
            other = next(c for c in cpus if c != victim.bound_cpu)
            os.sched_setaffinity(victim.tid, {other})  # what taskset -p does
            moved = step()
            assert any(f"pair 0 {victim.role} is bound to CPU" in ev for ev in moved.events)
            step()
    assert told.calls["native"] == told.calls["python"]


def _plant(block: CounterBlock, slot: int, **f: Any) -> None:
    """Write a slot as an end would: rounds, errors, tid, state, bad, ops, and its answer."""
    buf, off = block.buf, slot * SLOT_SIZE
    struct.pack_into(
        "<QQii",
        buf,
        off,
        f.get("rounds", 0),
        f.get("errors", 0),
        f.get("tid", 0),
        f.get("state", 1),
    )
    struct.pack_into("<q", buf, off + SLOT_OFFSETS["bad_value"], f.get("bad", 0))
    struct.pack_into("<6Q", buf, off + SLOT_OFFSETS["ops"], *f.get("ops", (0,) * 6))
    struct.pack_into("<I", buf, off + SLOT_OFFSETS["stats_ack"], f.get("ack", 0))
    answer = (f.get("cpu", 0), f.get("ns", 0), f.get("v", 0), f.get("iv", 0))
    struct.pack_into("<iQQQ", buf, off + SLOT_OFFSETS["cpu"], *answer)


def _pair(index: int, ends: list[End], state: str = "running", started: float = 0.0) -> Any:
    return SimpleNamespace(
        index=index, ends=tuple(ends), state=state, started=started, active=state == "running"
    )


@needs_pass
def test_the_native_pass_equals_the_python_pass_on_planted_slots() -> None:
    me = threading.get_native_id()  # a real thread: the bound end's affinity is read
    ends = [
        End(0, "A", 0, None, 500, tid=1001),  # answers, then a stale, a busy and a backward answer
        End(0, "B", 1, None, 500, tid=1002),  # never answers (a Python end): /proc every time
        End(1, "A", 2, None, 500, tid=1003),  # its slot has no tid yet at first
        End(1, "B", 3, None, 500, tid=1004),  # sees wrong messages twice
        End(2, "A", 4, None, 500, tid=1005),  # its pair fails
        End(2, "B", 5, None, 500, tid=1006),  # a state code no table knows
        End(3, "A", 6, 0, os.getpid(), tid=me),  # bound to CPU 0, answers from CPU 1
    ]
    late = End(3, "B", 7, None, 500, tid=1008)  # starts at step 3, gone at step 5
    procs: dict[int, TaskStat | None] = {
        1001: TaskStat(10, 1, 0, 5, 5),
        1002: TaskStat(20, 2, 1, 5, 5),
        1003: TaskStat(30, 3, 0, 5, 5),
        me: TaskStat(1, 1, 1, 1, 1),
    }
    told = Told(lambda pid, tid, detail: procs.get(tid))
    py, nat = told.passes()
    block = CounterBlock(16)
    t0 = 1000.0
    try:
        pairs = [_pair(i, ends[2 * i : 2 * i + 2], started=t0 - 2) for i in range(3)]
        pairs.append(_pair(3, [ends[6]], started=t0 - 1))

        def step(at: float, ends: list[End], **kw: Any) -> EndStep:
            told.cache.clear()
            return same_step(py, nat, bytes(block.buf), ends, pairs, at, 0.5, **kw)

        _plant(block, 0, tid=1001, rounds=10, ops=(1, 2, 3, 4, 5, 6))
        _plant(block, 1, tid=1002, rounds=10)
        _plant(block, 3, tid=1004, rounds=3)
        _plant(block, 4, tid=1005, rounds=7)
        _plant(block, 5, tid=1006, rounds=7, state=9)
        _plant(block, 6, tid=me, rounds=4, ack=3, cpu=1, ns=999_500_000_000, v=5, iv=5)
        one = step(t0, ends)  # every end new: /proc for those that never answered
        assert any("pair 3 A is bound to CPU 0 but ran on CPU 1" in ev for ev in one.events), one
        assert one.threads[0].ops == (1, 2, 3, 4, 5) and one.threads[1].ops == (0,) * 5
        assert one.threads[5].state == "unknown" and one.threads[2].state == "starting"

        _plant(block, 0, tid=1001, rounds=100, ack=5, cpu=0, ns=int(1000.4e9), v=40, iv=4,
               ops=(2, 2, 9, 4, 5, 6))  # fmt: skip
        procs[1002] = TaskStat(25, 9, 1, 6, 6)
        _plant(block, 1, tid=1002, rounds=30)
        _plant(block, 2, tid=1003, rounds=5)  # its tid came: /proc, with no counts before
        _plant(block, 3, tid=1004, rounds=8, errors=2, bad=77)
        two = step(t0 + 0.5, ends, n_ops=0)  # a workload that counts no operations
        assert any("2 wrong message(s)" in ev and "77" in ev for ev in two.events)
        assert all(t.ops == () for t in two.threads) and two.op_rates == []

        # No answer since the last (the same ack, no round); ops counts that went back;
        # a pair that failed; an end that starts between the samples.
        _plant(block, 0, tid=1001, rounds=100, ack=5, cpu=0, ns=int(1000.4e9), v=40, iv=4)
        procs[1002] = None  # gone between the readings
        _plant(block, 3, tid=1004, rounds=9, errors=5, bad=78)
        _plant(block, 4, tid=1005, rounds=7, state=3)
        pairs[2] = _pair(2, ends[4:6], state="failed: A: Identifier removed", started=t0 - 2)
        _plant(block, 7, tid=1008, rounds=50)
        procs[1008] = TaskStat(3, 3, 1, 1, 1)
        pairs[3] = _pair(3, [ends[6], late], started=t0 - 1)
        three = step(t0 + 1.0, [*ends, late])
        assert three.threads[0].vcsw_per_s == 0.0  # no round since it answered
        assert three.threads[4].state.startswith("failed") and three.threads[4].ops_per_s == 0.0
        assert any("3 wrong message(s)" in ev for ev in three.events)

        _plant(block, 0, tid=1001, rounds=150, ack=5, cpu=0, ns=int(1000.4e9), v=40, iv=4,
               ops=(7, 0, 2**40, 1, 0, 3))  # fmt: skip
        # Rounds, but the answer is the last one; all six counters, one past 32 bits.
        four = step(t0 + 1.5, [*ends, late], n_ops=NOPS)
        assert four.threads[0].ops == (7, 0, 2**40, 1, 0, 3)

        _plant(block, 0, tid=1001, rounds=160)
        struct.pack_into("<I", block.buf, SLOT_OFFSETS["stats_ack"], 0xFFFFFFFF)  # mid-answer
        pairs[3] = _pair(3, [ends[6]], started=t0 - 1)  # the late end stopped
        step(t0 + 2.0, ends)

        # A new answer with fewer switches than the last (clamped at 0), then one taken
        # at the same instant as the last (no span: rates 0).
        _plant(block, 0, tid=1001, rounds=170, ack=6, cpu=1, ns=int(1001.9e9), v=30, iv=2)
        six = step(t0 + 2.5, ends)
        assert six.threads[0].vcsw_per_s == 0.0 and six.threads[0].last_cpu == 1
        _plant(block, 0, tid=1001, rounds=180, ack=7, cpu=1, ns=int(1001.9e9), v=99, iv=9)
        step(t0 + 3.0, ends)
        # The detail view: every end from /proc, answers or not; then answers again,
        # older than the /proc reading before them (no span: rates 0).
        eight = step(t0 + 3.5, ends, detail=True)
        assert told.calls["native"][-1] == ([(e.pid, e.tid) for e in ends], True)
        assert eight.tasks
        step(t0 + 4.0, ends)
    finally:
        block.close()
    assert told.calls["native"] == told.calls["python"]


@needs_pass
@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_both_passes_give_each_lifecycle_end_its_op_counts(mode: str) -> None:
    # The workload that counts operations: real ends' calls, read by both passes from
    # one copy of the block, in every ThreadSample (same_step checks the slot's own).
    if resolve_engine() != "native":
        pytest.skip("sysv-lifecycle runs on the native engine only")
    told = Told(real_proc)
    py, nat = told.passes()
    cfg = RunConfig("sysv-lifecycle", "same", mode, (0,), "native", queues=64)
    steps = []
    with Engine(cfg) as e:
        e.start(2)
        # Every end past its first msgget before the steps: a loaded box can hold an
        # end back longer than the steps' 0.4 s.
        wait_for(lambda: all(e.counters.read(end.slot).ops[0] > 0 for end in e.ends()), 30)
        last = time.monotonic() - 0.5
        for _ in range(4):
            told.cache.clear()
            now = time.monotonic()
            steps.append(same_step(py, nat, bytes(e.counters.buf), e.ends(), e.pairs, now,
                                   now - last))  # fmt: skip
            last = now
            time.sleep(0.1)
    for a, b in zip(steps, steps[1:]):
        assert all(len(t.ops) == len(LIFECYCLE_OPS) for t in b.threads)
        # Cumulative counts: an end's never go back while it runs.
        assert all(x <= y for s, t in zip(a.threads, b.threads) for x, y in zip(s.ops, t.ops))
    assert all(t.ops[0] > 0 for t in steps[-1].threads), steps[-1].threads  # msgget calls


@needs_pass
def test_both_passes_refuse_more_ops_than_a_slot_counts() -> None:
    for reader in Told(lambda pid, tid, detail: None).passes():
        for n in (-1, NOPS + 1):
            with pytest.raises(ValueError, match=f"n_ops {n}: a slot counts 0 to {NOPS}"):
                reader.step(bytes(SLOT_SIZE), [], [], 1000.0, 0.5, False, n)
    # The native call on its own refuses it too, before it reads a row past the slot's six.
    with pytest.raises(ValueError, match=f"a slot counts 0 to {NOPS}"):
        objects._native.ends_figures(*[None] * 8, 1000.0, 0.5, None, None, None, NOPS + 1)


@needs_pass
def test_the_native_ask_posts_what_the_python_one_does() -> None:
    ends = [End(0, "A", s, None, 1, tid=1) for s in (0, 3, 5)]
    told = Told(lambda pid, tid, detail: None)
    py, nat = told.passes()
    blocks = CounterBlock(8), CounterBlock(8)
    try:
        py.ask(blocks[0].buf, ends, 7)
        nat.ask(blocks[1].buf, ends, 7)
        assert bytes(blocks[0].buf) == bytes(blocks[1].buf)
        assert blocks[1].buf[3 * SLOT_SIZE + SLOT_OFFSETS["stats_req"]] == 7
    finally:
        for b in blocks:
            b.close()


def test_without_the_extension_the_sampler_reads_in_python(monkeypatch) -> None:
    monkeypatch.setattr("ipctop.engine.objects._native", None)  # FAKE: a box without a compiler
    with pytest.raises(RuntimeError, match="C extension"):
        end_pass("native", lambda ids, detail: [], lambda pid, tid: None)
    with Engine(RunConfig("sysv-sem", "same", "threads", (0,), "python")) as e:
        e.start(1)
        sampler = Sampler(e, interval=0.1)
        assert isinstance(sampler._ends, PythonEnds)
        try:
            time.sleep(0.1)
            sampler.sample()
            time.sleep(0.1)
            s = sampler.sample()
        finally:
            sampler.close()
    assert len(s.threads) == 2 and all(t.vcsw_per_s is not None for t in s.threads)


def test_the_pass_is_chosen_by_name() -> None:
    with pytest.raises(ValueError, match="auto, native or python"):
        end_pass("fast", lambda ids, detail: [], lambda pid, tid: None)
    chosen = end_pass("python", lambda ids, detail: [], lambda pid, tid: None)
    assert isinstance(chosen, PythonEnds)
    auto = end_pass("auto", lambda ids, detail: [], lambda pid, tid: None)
    assert isinstance(auto, NativeEnds if HAS_PASS else PythonEnds)


def test_an_extension_built_before_the_pass_leaves_the_python_pass(monkeypatch) -> None:
    # FAKE: an install whose _native predates ends_figures (not rebuilt after a pull).
    monkeypatch.setattr("ipctop.engine.objects._native", SimpleNamespace(read_tasks=None))
    auto = end_pass("auto", lambda ids, detail: [], lambda pid, tid: None)
    assert isinstance(auto, PythonEnds)
    with pytest.raises(RuntimeError, match="rebuilt"):
        end_pass("native", lambda ids, detail: [], lambda pid, tid: None)
