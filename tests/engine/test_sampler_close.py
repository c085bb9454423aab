"""The sampler stops its ticks before its /proc files are closed, on every path.

After a full test run a daemon `ipctop-sampler` thread printed "ValueError:
TaskFiles is closed": the files were closed while a tick was reading them.
Sampler.close() now stops the ticks, joins the thread, waits out a reading
still in progress, and only then closes the files. Real engines, real sampler
threads reading real /proc files.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest
from conftest import wait_for

from ipctop.engine import task_reads
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine, resolve_engine
from ipctop.engine.sample import Sample
from ipctop.engine.sampler import Sampler

needs_native = pytest.mark.skipif(resolve_engine() != "native", reason="needs the C extension")
CONFIG = RunConfig("sysv-sem", "same", "threads", (0,))


@pytest.fixture
def thread_errors() -> Iterator[list[str]]:
    """What any thread died of while the test ran."""
    seen: list[str] = []
    old = threading.excepthook
    threading.excepthook = lambda a: seen.append(f"{a.thread and a.thread.name}: {a.exc_value!r}")
    try:
        yield seen
    finally:
        threading.excepthook = old


def _kept_fds(files: task_reads.TaskFiles) -> list[int]:
    return [fd for kept in files._fds.values() for fd in kept if fd >= 0]


@needs_native
def test_close_waits_out_a_tick_that_outlasts_the_join(thread_errors: list[str]) -> None:
    # FAKE: a tick that lasts longer than stop()'s 2 s join (a loaded box reading
    # 2,048 threads' files) is made by holding the sampler thread, as it enters
    # TaskFiles.read, in a trace hook; the thread, the engine and the files are real.
    entered, go = threading.Event(), threading.Event()

    def hold(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code is task_reads.TaskFiles.read.__code__:
            entered.set()
            go.wait(10)

    with Engine(CONFIG) as e:
        e.start(1)
        sampler = Sampler(e, interval=0.05)
        sampler.detail = True  # every tick reads the ends' files through TaskFiles
        threading.settrace(hold)  # threads started from now on: the sampler's
        try:
            sampler.start(None)
        finally:
            threading.settrace(None)  # type: ignore[arg-type]
        closer = threading.Thread(target=sampler.close, name="test-closer")
        try:
            assert entered.wait(10), "the sampler never reached its /proc reading"
            t0 = time.monotonic()
            closer.start()
            closer.join(3.0)  # past stop()'s 2 s join: the tick is still being held
            waited = closer.is_alive()
            held_for = time.monotonic() - t0
        finally:
            go.set()
            if closer.ident is not None:
                closer.join(10)
            else:
                sampler.close()
        assert thread_errors == [], thread_errors  # the tick read files still open
        assert waited, f"close() returned after {held_for:.1f} s, under a tick"
        assert not closer.is_alive(), "close() never returned once the tick ended"
        assert not [t for t in threading.enumerate() if t.name == "ipctop-sampler"]
        assert _kept_fds(sampler._task_files) == []
        with pytest.raises(RuntimeError, match="closed"):
            sampler.sample()


@needs_native
def test_close_at_any_moment_of_fast_ticks_leaves_no_error_and_no_file(
    thread_errors: list[str],
) -> None:
    # Ticks back to back; close() lands before, during and after readings alike.
    before = len(os.listdir("/proc/self/fd"))
    with Engine(CONFIG) as e:
        e.start(2)
        samples: list[Sample] = []
        for i in range(40):
            sampler = Sampler(e, interval=0.002)
            sampler.detail = True
            sampler.start(samples.append)
            if i == 39 and not samples:
                # One close after a reading for sure: a loaded box may not run a tick
                # within any of the short sleeps, and then the closes proved nothing.
                wait_for(lambda: bool(samples), 30)
            else:
                time.sleep(0.001 * (i % 7))
            sampler.close()
            assert sampler._thread is None
            assert _kept_fds(sampler._task_files) == []
    assert samples, "no tick ever ran: the closes proved nothing"
    assert thread_errors == [], thread_errors
    assert not [t for t in threading.enumerate() if t.name == "ipctop-sampler"]
    assert len(os.listdir("/proc/self/fd")) <= before


@needs_native
def test_a_monitor_source_closes_its_sampler_when_it_stops(thread_errors: list[str]) -> None:
    from ipctop.live.sources import LiveSource

    source = LiveSource(CONFIG, interval=0.05, pin=False, boost=False)
    got = threading.Event()
    source.open(1)
    source.set_detail(True)
    source.start(lambda _s, _g: got.set())
    try:
        assert got.wait(10), "no sample came"
        sampler = source._sampler
        assert sampler is not None
    finally:
        source.stop()
    assert sampler._closed and _kept_fds(sampler._task_files) == []
    assert thread_errors == [], thread_errors


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
