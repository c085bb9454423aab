"""--think-ns on the real engines: a busy-wait between receive and send bounds the rate."""

from __future__ import annotations

import os
import threading
import time

import pytest

from ipctop.engine.engine import Engine, RunConfig, resolve_engine

THINK_NS = 50_000  # both ends think 50 µs per round: a round trip takes at least 100 µs


def rounds_per_s(config: RunConfig, seconds: float = 0.5) -> float:
    with Engine(config) as engine:
        engine.start(1)
        ends = engine.ends()
        time.sleep(0.1)
        # The clock is read outside the counter reads, so a preempted reader
        # can only make the window look longer (the rate lower): a safe bound.
        t0 = time.monotonic()
        r0 = sum(engine.counters.rounds(e.slot) for e in ends)
        time.sleep(seconds)
        r1 = sum(engine.counters.rounds(e.slot) for e in ends)
        if r1 == r0:  # the pair got no CPU in the window: seen on the shared box, not a bound
            pytest.skip(f"the box left the pair no rounds in {seconds:g} s: nothing to bound")
        return (r1 - r0) / (time.monotonic() - t0)


@pytest.mark.parametrize("engine", ["native", "python"])
@pytest.mark.parametrize("workload", ["sysv-msg", "sysv-sem", "pipe"])
def test_think_time_caps_the_round_rate(engine: str, workload: str) -> None:
    if engine == "native" and resolve_engine("auto") != "native":
        pytest.skip("the native engine is not built")
    cpus = tuple(sorted(os.sched_getaffinity(0)))[:1]
    config = RunConfig(workload=workload, cpus=cpus, engine=engine, think_ns=THINK_NS)
    rate = rounds_per_s(config)
    # Two ends, each at most one round per (2 x 50 µs): 2 x 10,000 rounds/s, plus
    # the counting edge of a window.
    cap = 2 * 1e9 / (2 * THINK_NS) * 1.05
    assert 0 < rate <= cap


def cpu_ns_per_round(config: RunConfig, seconds: float = 1.0) -> list[float]:
    """Each end's run time (schedstat: the time it ran, which a preempting or
    stealing neighbour does not add to) per round it made."""

    def ran_ns(end: object) -> int:
        with open(f"/proc/{end.pid}/task/{end.tid}/schedstat") as f:  # type: ignore[attr-defined]
            return int(f.read().split()[0])

    with Engine(config) as engine:
        engine.start(1)
        ends = engine.ends()
        time.sleep(0.3)  # past the first corrections of the spin count
        c0 = [ran_ns(e) for e in ends]
        r0 = [engine.counters.rounds(e.slot) for e in ends]
        time.sleep(seconds)
        c1 = [ran_ns(e) for e in ends]
        r1 = [engine.counters.rounds(e.slot) for e in ends]
    out = []
    for a, b, p, q in zip(c0, c1, r0, r1):
        if q - p < 100:
            pytest.skip(f"the box left this pair {q - p} rounds in {seconds:g} s: too few to judge")
        out.append((b - a) / (q - p))
    return out


@pytest.mark.parametrize(
    "think_ns",
    [10_000, 200_000],
    ids=["short-vdso-clock", "long-cpu-clock"],
)
def test_native_think_costs_what_is_asked(think_ns: int) -> None:
    """The planted cost is the asked one within -15 %/+30 %: the spin count is
    corrected while the ends run (the one calibration at start came out ~30 %
    short on a quiet box). The upper side is wider because a shared host's
    interrupts and steal land in a thread's run time too."""
    if resolve_engine("auto") != "native":
        pytest.skip("the native engine is not built")
    if not os.path.exists(f"/proc/self/task/{threading.get_native_id()}/schedstat"):
        pytest.skip("no /proc/<pid>/task/<tid>/schedstat (CONFIG_SCHED_INFO)")
    cpus = tuple(sorted(os.sched_getaffinity(0)))[:1]
    base = cpu_ns_per_round(RunConfig(workload="sysv-msg", cpus=cpus, engine="native"))
    think = cpu_ns_per_round(
        RunConfig(workload="sysv-msg", cpus=cpus, engine="native", think_ns=think_ns)
    )
    for b, t in zip(base, think):
        added = t - b
        assert 0.85 * think_ns <= added <= 1.3 * think_ns, (
            f"--think-ns {think_ns} added {added:.0f} ns of CPU per round ({b:.0f} -> {t:.0f})"
        )


def test_think_time_is_in_the_engine_config_and_defaults_to_zero() -> None:
    assert RunConfig().think_ns == 0
