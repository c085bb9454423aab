"""The monitor runs above the pairs; the pairs run at nice 0 whoever created them."""

from __future__ import annotations

import os
import threading

import pytest

from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.live.priority import RAISE, MonitorPriority

CPU = min(os.sched_getaffinity(0))


def _can_raise() -> bool:
    try:
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) - 1)
    except PermissionError:
        return False
    os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + 1)
    return True


needs_nice = pytest.mark.skipif(not _can_raise(), reason="raising priority needs CAP_SYS_NICE")


def _nice(tid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, tid)


def _started_from_a_raised_thread(**config: object) -> tuple[list[int], int]:
    """Start one pair from a thread at nice -5; the ends' nice values and the creator's."""
    out: dict = {}

    def creator() -> None:
        os.setpriority(os.PRIO_PROCESS, 0, -5)
        engine = Engine(RunConfig(cpus=(CPU,), **config))  # type: ignore[arg-type]
        try:
            engine.start(1)
            out["ends"] = [_nice(e.tid) for e in engine.ends()]
            out["creator"] = _nice(0)
        finally:
            engine.stop()

    t = threading.Thread(target=creator)
    t.start()
    t.join()
    return out["ends"], out["creator"]


@needs_nice
@pytest.mark.parametrize(
    "config",
    [
        {"engine": "native", "mode": "threads"},
        {"engine": "native", "mode": "processes"},
        {"engine": "python", "mode": "threads"},
        {"engine": "python", "mode": "processes"},
    ],
    ids=lambda c: f"{c['engine']}-{c['mode']}",
)
def test_ends_made_by_a_raised_thread_run_at_nice_0(config: dict) -> None:
    ends, creator = _started_from_a_raised_thread(**config)
    assert creator == -5, "the creating thread keeps its priority"
    assert ends == [0, 0]


@needs_nice
def test_monitor_threads_are_raised_and_restored_but_not_the_ends() -> None:
    halt = threading.Event()
    ready = threading.Event()
    tids: list[int] = []

    def worker() -> None:
        tids.append(threading.get_native_id())
        ready.set()
        halt.wait()

    ends = [threading.Thread(target=worker) for _ in range(2)]
    for t in ends:
        t.start()
    ready.wait()
    while len(tids) < 2:
        halt.wait(0.01)
    try:
        prio = MonitorPriority()
        assert prio.apply(set(tids)) >= 1
        assert _nice(0) == prio.nice == max(-20, prio.base - RAISE) and prio.note == ""
        assert [_nice(t) for t in tids] == [prio.base, prio.base]
        prio.restore(set(tids))
        assert _nice(0) == prio.base
    finally:
        halt.set()
        for t in ends:
            t.join()


def test_without_privilege_the_monitor_stays_and_says_so() -> None:
    """A forked child gives up root (setuid drops CAP_SYS_NICE) and tries for real."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: only syscalls, then _exit
        code = 1
        try:
            os.close(read)
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)  # nobody
            prio = MonitorPriority()
            prio.apply(set())
            os.write(write, f"{prio.note}|{os.getpriority(os.PRIO_PROCESS, 0)}".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        out = f.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    note, nice = out.split("|")
    if not note:
        pytest.skip(f"this user may raise priority (RLIMIT_NICE?): nice {nice}")
    assert note == "monitor at normal priority (not root: no renice)"
    assert nice == "0"


@needs_nice
def test_live_source_raises_its_monitor_and_puts_it_back() -> None:
    from ipctop.live.sources import LiveSource

    source = LiveSource(RunConfig(cpus=(CPU,)), interval=0.2)
    base = _nice(0)
    try:
        source.open(1)
        source.start(lambda _sample, _generation: None)
        sampler = source._sampler
        assert sampler is not None and sampler._thread is not None
        raised = source._priority.nice
        assert raised < base and source.monitor_note == ""
        assert _nice(0) == raised
        assert _nice(sampler._thread.native_id) == raised
        assert [_nice(e.tid) for e in source.engine.ends()] == [base, base]
        source.add_pair()  # made by a raised thread: the ends drop back themselves
        assert [_nice(e.tid) for e in source.engine.ends()] == [base] * 4
    finally:
        source.stop()
    assert _nice(0) == base


def test_fake_unraised_monitor_is_said_in_the_footer() -> None:
    import asyncio

    from ipctop.live.fixed_run import fixed_source
    from ipctop.tui.app import IpctopApp
    from ipctop.tui.widgets.status_line import StatusLine

    source = fixed_source()
    # What a LiveSource says after a real refusal (see the forked child above).
    source.monitor_note = "monitor at normal priority (not root: no renice)"

    async def go() -> None:
        app = IpctopApp(source, own_cpu=lambda _t: 1.4)
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.pause(0.2)
            app.redraw_now()
            assert "monitor at normal priority (not root: no renice)" in (
                app.query_one(StatusLine).text.plain
            )

    asyncio.run(go())


@needs_nice
def test_headless_commands_raise_their_sampler_and_not_their_ends() -> None:
    """ipctop run raises itself before any thread: the sampler inherits, the ends reset."""
    import subprocess
    import sys

    code = (
        "import os, threading, time\n"
        "from ipctop.live.priority import raise_monitor\n"
        "from ipctop.engine.engine import Engine\nfrom ipctop.engine.config import RunConfig\n"
        "raise_monitor()\n"
        f"e = Engine(RunConfig(cpus=({CPU},)))\n"
        "e.start(1)\n"
        "seen = []\n"
        "t = threading.Thread(target=lambda: seen.append(os.getpriority(os.PRIO_PROCESS, 0)))\n"
        "t.start(); t.join()\n"
        "print(seen[0], *[os.getpriority(os.PRIO_PROCESS, x.tid) for x in e.ends()])\n"
        "e.stop()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    base = os.getpriority(os.PRIO_PROCESS, 0)
    assert out.stdout.split() == [str(max(-20, base - RAISE)), "0", "0"], out
