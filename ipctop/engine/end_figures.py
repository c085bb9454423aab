"""Each end's figures of one reading, an end at a time in Python.

What the sampler makes of every end at a reading: its counter slot and its
own answer (native ends publish their CPU and switch counts on request), or
its /proc files where it cannot answer; its rates since the last reading; a
ThreadSample; the wrong messages it saw and whether it left its CPU.
PythonEnds does it a Python object at a time: the fallback without the
extension, and the reference the native pass (end_pass.py) is checked
against, figure for figure (tests/engine/test_end_pass.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, NamedTuple

from .counters import NOPS, EndStats, SlotReading, post_request, read_answer, read_slot
from .end_launch import End, Pair
from .procfs import TaskStat
from .sample import ThreadSample

Key = tuple[int, str, int]  # (pair, role, tid): an end across readings
#: every (pid, tid) /proc must tell about, read in one pass; detail reads more files
TasksReader = Callable[[list[tuple[int, int]], bool], list[TaskStat | None]]
#: one thread's stat and status, read afresh (a moved end's real CPU)
TaskReader = Callable[[int, int], TaskStat | None]


class Seen(NamedTuple):
    """What one end showed at the last reading; switch counts carry their time.
    A tuple, built positionally: the Python pass makes one per end per sample."""

    rounds: int
    errors: int
    vcsw: int | None
    ivcsw: int | None
    ops: tuple[int, ...]
    at: float  # monotonic seconds when vcsw/ivcsw/cpu were true
    ack: int | None  # the answer they came from; None when read from /proc
    cpu: int | None
    vrate: float | None
    ivrate: float | None


class EndStep(NamedTuple):
    """One reading of every end, in the order of the ends."""

    threads: list[ThreadSample]
    events: list[str]  # wrong messages and ends off their CPU, in the order of the ends
    progress: dict[int, int]  # running pairs: rounds and calls, for stalls
    op_rates: list[list[float]]  # each end's rate of each of the n_ops ops (none when 0)
    tasks: dict[Key, TaskStat | None]  # what /proc said of each end (the detail view's costs)


class EndPass:
    """What both passes share: the /proc readers and the drift said once per end."""

    def __init__(self, tasks: TasksReader, task: TaskReader) -> None:
        self._tasks = tasks
        self._task = task
        self._drift_said: set[Key] = set()

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
        """Read every end's slot in `buf` (the counter block) at monotonic `now`,
        `dt` after the last reading. n_ops: how many of the slot's op counters the
        workload names (0: it counts none); each ThreadSample carries that many."""
        raise NotImplementedError

    def ask(self, buf: Any, ends: list[End], word: int) -> None:
        """Post request `word` (counters.request_word) in every end's slot."""
        for end in ends:
            post_request(buf, end.slot, word)

    def seen(self) -> dict[Key, Seen]:
        """What each end of the last reading showed: for the tests that compare passes."""
        raise NotImplementedError

    def _moved(self, end: End, seen: Seen, key: Key) -> tuple[Seen, str | None]:
        """Say once per thread that it left its CPU, in the sample after it did.

        The end's own answer can be an interval old (it answers at its next
        round), so its affinity is read too: one system call per end until
        it is said. A thread moved (taskset) or widened by the kernel (its CPU
        went offline) then has its real CPU read from /proc at once.
        """
        try:
            allowed: set[int] | None = os.sched_getaffinity(end.tid)
        except OSError:
            allowed = None  # gone, or another user's: the answers still tell
        moved = allowed is not None and allowed != {end.bound_cpu}
        if moved and seen.cpu in (None, end.bound_cpu):
            task = self._task(end.pid, end.tid)
            if task is not None and task.last_cpu is not None:
                seen = seen._replace(cpu=task.last_cpu)
        ran_off = seen.cpu is not None and seen.cpu != end.bound_cpu
        if not moved and not ran_off:
            return seen, None
        self._drift_said.add(key)
        why = ""
        if moved:
            why = (
                f"; its affinity is now {sorted(allowed or ())} (moved with taskset, or CPU "
                f"{end.bound_cpu} went offline)"
            )
        where = f"ran on CPU {seen.cpu}" if ran_off else "has not run elsewhere yet"
        return seen, f"pair {end.pair} {end.role} is bound to CPU {end.bound_cpu} but {where}{why}"


def check_n_ops(n_ops: int) -> None:
    """A slot has NOPS op counters: a workload naming more is a bug, not a short row."""
    if not 0 <= n_ops <= NOPS:
        raise ValueError(f"n_ops {n_ops}: a slot counts 0 to {NOPS} operations")


def wrong_messages(end: End, count: int, bad_value: int) -> str:
    return (
        f"pair {end.pair} {end.role}: {count} wrong message(s) "
        f"in the shared queue (got pair id {bad_value}); not counted"
    )


class PythonEnds(EndPass):
    """The reading a Python object at a time: a slot read, an answer read, a Seen
    and a ThreadSample per end (about 20 us an end)."""

    def __init__(self, tasks: TasksReader, task: TaskReader) -> None:
        super().__init__(tasks, task)
        self._seen: dict[Key, Seen] = {}

    def seen(self) -> dict[Key, Seen]:
        return dict(self._seen)

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
        check_n_ops(n_ops)
        threads = []
        events: list[str] = []
        tasks: dict[Key, TaskStat | None] = {}
        op_rates: list[list[float]] = []
        seen: dict[Key, Seen] = {}
        by_index = {p.index: p for p in pairs}
        progress: dict[int, int] = {}
        readings = [read_slot(buf, end.slot) for end in ends]
        answers, read = self._answers(buf, ends, readings, detail)
        # Every end /proc must tell about, read in one pass (native: one call, no GIL).
        procs = iter(self._tasks([(e.pid, e.tid) for e, r in zip(ends, read) if r], detail))
        for end, r, ans, from_proc in zip(ends, readings, answers, read):
            key = (end.pair, end.role, end.tid)
            prev = self._seen.get(key)
            pair = by_index.get(end.pair)
            state = pair.state if pair is not None and not pair.active else r.state
            task = next(procs) if from_proc else None
            now_seen = _switches(r, ans, from_proc, task, prev, now)
            tasks[key] = task
            if prev is None:
                started = pair.started if pair is not None else now - dt
                span = max(now - started, 1e-9)
                ops = r.rounds / span
                op_prev: tuple[int, ...] = (0,) * len(r.ops)
                op_dt, errors_before = span, 0
            else:
                ops = (r.rounds - prev.rounds) / dt
                op_prev, op_dt, errors_before = prev.ops, dt, prev.errors
            counted = r.ops[:n_ops]
            if n_ops:
                op_rates.append([(a - b) / op_dt for a, b in zip(counted, op_prev)])
            if r.errors > errors_before:
                events.append(wrong_messages(end, r.errors - errors_before, r.bad_value))
            seen[key] = now_seen
            if state == "running":
                progress[end.pair] = progress.get(end.pair, 0) + r.rounds + sum(r.ops)
            if end.bound_cpu is not None and end.tid and key not in self._drift_said:
                now_seen, drift = self._moved(end, now_seen, key)
                seen[key] = now_seen
                if drift:
                    events.append(drift)
            threads.append(
                ThreadSample(
                    pair=end.pair,
                    role=end.role,
                    tid=end.tid,
                    bound_cpu=end.bound_cpu,
                    last_cpu=now_seen.cpu,
                    rounds=r.rounds,
                    ops_per_s=ops if state == "running" else 0.0,
                    errors=r.errors,
                    state=state,
                    vcsw_per_s=now_seen.vrate,
                    ivcsw_per_s=now_seen.ivrate,
                    ops=counted,
                )
            )
        self._seen = seen
        return EndStep(threads, events, progress, op_rates, tasks)

    def _answers(
        self, buf: Any, ends: list[End], readings: list[SlotReading], detail: bool
    ) -> tuple[list[EndStats | None], list[bool]]:
        """Each end's own answer, and whether /proc must be read for it instead.

        A native end answers in its counter slot (no file opened); an end that
        never answered (the Python engine, or one not yet past a round) and the
        detail view (which needs its CPU times too) read /proc. An end that
        answered before but not now (mid-answer) keeps what it said.
        """
        answers: list[EndStats | None] = []
        read: list[bool] = []
        for end, r in zip(ends, readings):
            ans = read_answer(buf, end.slot) if r.tid and not detail else None
            answers.append(ans)
            if not r.tid or ans is not None:
                read.append(False)
            elif detail:
                read.append(True)
            else:
                prev = self._seen.get((end.pair, end.role, end.tid))
                read.append(prev is None or prev.ack is None)
        return answers, read


def _switches(
    r: SlotReading,
    ans: EndStats | None,
    from_proc: bool,
    task: TaskStat | None,
    prev: Seen | None,
    now: float,
) -> Seen:
    """Where the thread runs and how often it switches, from the source
    _answers chose. Counts keep the time they were taken, so rates hold
    whichever source gave them."""
    cpu: int | None
    vcsw: int | None
    ivcsw: int | None
    ack: int | None
    if ans is not None:
        if prev is not None and prev.ack == ans.ack:
            # Not a round since we asked: blocked or waiting for a CPU.
            ran = r.rounds != prev.rounds
            return Seen(
                r.rounds, r.errors, prev.vcsw, prev.ivcsw, r.ops, prev.at, prev.ack, prev.cpu,
                prev.vrate if ran else 0.0, prev.ivrate if ran else 0.0,
            )  # fmt: skip
        at, cpu, vcsw, ivcsw, ack = (
            ans.ns / 1e9,
            ans.cpu,
            ans.voluntary,
            ans.involuntary,
            ans.ack,
        )
    elif r.tid and not from_proc and prev is not None:
        # Answered before but not now (mid-answer): keep what it said.
        return prev._replace(rounds=r.rounds, errors=r.errors, ops=r.ops)
    else:
        at, ack = now, None
        cpu = task.last_cpu if task else None
        vcsw = task.voluntary if task else None
        ivcsw = task.involuntary if task else None
    span = at - prev.at if prev is not None else 0.0
    vrate = rate(prev.vcsw, vcsw, span) if prev is not None and span > 0 else 0.0
    ivrate = rate(prev.ivcsw, ivcsw, span) if prev is not None and span > 0 else 0.0
    if vcsw is None:
        vrate = ivrate = None
    return Seen(r.rounds, r.errors, vcsw, ivcsw, r.ops, at, ack, cpu, vrate, ivrate)


def rate(prev: int | float | None, cur: int | float | None, dt: float) -> float | None:
    if prev is None or cur is None:
        return None
    return max(0.0, (cur - prev) / dt)
