"""Proof of what a round calls: each workload's ends traced with strace.

bench/syscalls.py runs one unit on the native engine in processes mode under
`strace -f -ff` and counts each end's system calls; here they are held
against the sequence the README states. A loop that skipped a call, retried,
or polled would show as calls per round off the stated number.
"""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT, two_cpus

sys.path.insert(0, str(ROOT / "bench"))
import syscalls  # noqa: E402

pytestmark = pytest.mark.skipif(not syscalls.have_strace(), reason="strace is not installed")

SLACK = 3  # a first send before the loop, a last receive that sees EIDRM or a kick
OUTSIDE = 30  # set-up and teardown of a forked end: prctl, signals, affinity, exit

PINGPONGS = [w for w in syscalls.SEQUENCES if w not in syscalls.CROSS]


def _check(t: syscalls.Trace) -> None:
    expected = syscalls.SEQUENCES[t.workload]
    for end in t.ends:
        assert end.rounds >= 20, f"{t.workload}: end {end.pid} counted only {end.rounds} rounds"
        for name, (low, high) in expected.items():
            n = end.calls.get(name, 0)
            # SLACK both ways: the trace may end between a round's count and its call.
            assert low * end.rounds - SLACK <= n <= high * end.rounds + SLACK, (
                f"{t.workload}: {n} {name} for {end.rounds} rounds, want {low}..{high} a round"
            )
        # Sleeps while waiting for the start flag are set-up, and their count follows
        # how long the peer took to start, not the loop.
        stray = {k: v for k, v in end.calls.items() if k not in expected and k != "clock_nanosleep"}
        assert sum(stray.values()) <= OUTSIDE, f"{t.workload}: calls outside the loop {stray}"


@pytest.mark.parametrize("workload", PINGPONGS)
def test_calls_per_round_match_the_stated_sequence(workload: str) -> None:
    _check(syscalls.trace(workload, seconds=0.3))


@two_cpus
def test_spin_makes_no_system_call_in_its_loop() -> None:
    t = syscalls.trace("spin", seconds=0.3)
    _check(t)
    for end in t.ends:
        assert end.rounds >= 1000  # many rounds, and still only the set-up calls


@pytest.mark.parametrize(
    "workload, size",
    [("sysv-msg", None), ("sysv-msg-shared", None), ("posix-mq", None), ("pipe", None),
     ("sysv-msg", 100), ("sysv-msg-shared", 100), ("posix-mq", 100), ("pipe", 100),
     ("socket", 3000)],
)  # fmt: skip
def test_every_send_carries_the_payload_size(workload: str, size: int | None) -> None:
    from ipctop.engine.workloads import WORKLOADS

    want = size if size is not None else WORKLOADS[workload].default_size
    t = syscalls.trace(workload, seconds=0.2, size=size)
    assert t.size == want
    _check(t)
    for end in t.ends:
        sizes = end.sent_sizes()
        assert set(sizes) == {want}, f"{workload}: sends of {dict(sizes)} bytes, want {want}"
        assert sum(sizes.values()) >= end.rounds


def test_pmsg_default_is_8_bytes_and_pmsg_shared_16() -> None:
    from ipctop.engine.workloads import WORKLOADS

    assert WORKLOADS["sysv-msg"].default_size == 8  # pmsg's DATASIZE
    assert WORKLOADS["sysv-msg-shared"].default_size == 16


def test_msgbench_calls_match_its_phase_counters() -> None:
    # Each phase is one call per queue: msgget, msgsnd, then msgctl for IPC_STAT,
    # MSG_STAT and IPC_RMID. A stop may cut a repeat short, after which the
    # queues made so far are removed uncounted: msgctl = IPC_STAT + MSG_STAT + msgget.
    m = syscalls.LIFECYCLE_QUEUES
    t = syscalls.trace("sysv-lifecycle", seconds=0.5, queues=m)
    (end,) = t.ends
    msgget, msgsnd, ipc_stat, msg_stat, ipc_rmid = end.ops[:5]
    assert ipc_rmid == end.rounds and end.rounds >= 3 * m
    assert end.calls["msgget"] == msgget
    assert end.calls["msgsnd"] == msgsnd
    assert end.calls["msgctl"] == ipc_stat + msg_stat + msgget
    assert sum(n for k, n in end.calls.items() if not k.startswith("msg")) <= OUTSIDE
