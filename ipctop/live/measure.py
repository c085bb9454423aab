"""One measured run of N pairs: warm up, then count rounds over a window.

The window is the sampler's: from the reading that primes it to its last. Each
end's rounds, its rate and the total are the sampler's readings at those two
ends, the same readings every interval's rate (`windows`) is made of, so a
run's total is its intervals' rates weighted by their length; each end's last
reading (where it ran, its state and errors) is the sampler's too. Only the
per-operation rates read the counters themselves (see measure_engine).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..analysis.noise import WindowNoise, pair_cpus, window_noise
from ..engine.config import RunConfig
from ..engine.costs import Costs, merge
from ..engine.engine import Engine
from ..engine.latency import PairLatency, Tracker
from ..engine.opstats import OpStats, op_stats
from ..engine.sample import Sample, ThreadSample
from ..engine.sampler import Sampler
from ..engine.stalls import STALL, StallReport, stalled_windows


@dataclass(frozen=True)
class ThreadResult:
    """One end over a measured window.

    Who it is, where it last ran, its state and errors are the sampler's last
    reading of it (`at_end`); what a ThreadSample does not hold, the window's
    own rounds and rate, sits beside it.
    """

    at_end: ThreadSample
    rounds: int  # the end's rounds at the sampler's last reading less at its priming one
    ops_per_s: float  # those rounds less its pair's stalled windows', per second of the rest


@dataclass(frozen=True)
class RunResult:
    pairs: int
    seconds: float
    total_ops_per_s: float
    threads: tuple[ThreadResult, ...]
    oversubscribed: bool
    events: tuple[str, ...]
    timeline: tuple[Sample, ...]
    costs: Costs | None = None  # where the time went over the window
    ops: OpStats | None = None  # per-operation rates (life-cycle workloads)
    latency: tuple[PairLatency, ...] = ()  # per pair over the window, when timed
    latency_all: PairLatency | None = None  # every pair's rounds as one (pair -1)
    latency_note: str = ""  # how rounds were timed, or why not (Engine.latency_note)
    # The total rate in each sampler interval of the window: the samples an
    # interval is built from (analysis.stats; one interval is one window).
    windows: tuple[float, ...] = ()
    stalls: StallReport | None = None  # None when nothing stalled
    noise: tuple[WindowNoise, ...] = ()  # steal, PSI, clock: one per entry of `windows`


def measure(config: RunConfig, pairs: int, seconds: float, **options: Any) -> RunResult:
    """Start the pairs, measure them (measure_engine's keyword options), stop them."""
    with Engine(config) as engine:
        engine.start(pairs)
        return measure_engine(engine, seconds, **options)


def measure_engine(
    engine: Engine,
    seconds: float,
    warmup: float = 1.0,
    interval: float = 0.5,
    on_sample: Callable[[Sample], None] | None = None,
    detail: bool = False,
) -> RunResult:
    """Rounds, rates and the timeline over `seconds` after `warmup`.

    Where the time goes (costs) is read only with detail=True: it is several
    /proc files per thread per sample (at 512 threads more than a short
    interval allows), and only the callers that print or record costs want it.
    """
    sampler = Sampler(engine, interval=min(interval, max(seconds, 0.05)))
    sampler.detail = detail
    try:
        _tick(sampler, warmup, None)
        prime = sampler.sample()  # the window starts at this reading
        tracker = Tracker(engine.counters.latency) if engine.timing else None
        if tracker is not None:
            tracker.read(engine.pairs)
        ends = engine.ends()
        # A Sample holds each interval's spread of an operation across the ends, from
        # which the window's spread cannot be rebuilt: the per-operation rates are the
        # counters' own, read here and after the last reading (a few ms off its span).
        t0 = time.monotonic()
        o0 = [engine.counters.read(e.slot).ops for e in ends]
        mark = engine.workload.phase_mark(engine.pairs)
        timeline = _tick(sampler, seconds, on_sample)
    finally:
        sampler.close()  # its /proc files now, not at a later collection
    lat = tuple(tracker.read(engine.pairs)) if tracker is not None else ()
    o1 = [engine.counters.read(e.slot).ops for e in ends]
    op_s = time.monotonic() - t0
    names = engine.workload.ops
    op_rates = [[(b - a) / op_s for a, b in zip(x, y)] for x, y in zip(o0, o1)]
    # The window's length is the samples' span (the priming reading to the last), the
    # bounds its rounds are read at: rounds and time of one rate come from the same
    # readings. (Counters read again around the sampling, as before, were a few ms
    # off those bounds: rates move by that much against older runs.)
    elapsed = sum(s.dt for s in timeline)
    events = list(engine.poll())
    for s in timeline:
        events.extend(s.events)
    ops = _ops(engine, mark, names, op_rates)
    report = stalled_windows(timeline, _rounds_by_pair(prime))
    stalls = report if report.any else None
    if stalls is not None:
        events.append(_stall_note(stalls, elapsed))
    left_out = _left_out(timeline, stalls, prime) if stalls else {}
    # The window's ends are those the priming reading saw; the sampler read each of
    # them at the window's two ends (one pass each): no second read here.
    last = {(t.pair, t.role, t.tid): t for t in (timeline[-1] if timeline else prime).threads}
    threads = []
    for before in prime.threads:
        key = (before.pair, before.role, before.tid)
        at_end = last.get(key)
        if at_end is None:
            raise RuntimeError(f"pair {key[0]} {key[1]}: the sampler's last reading lacks it")
        rounds = at_end.rounds - before.rounds
        # A stalled window is not a rate sample: its rounds and its time are left out.
        gone_rounds, gone_s = left_out.get(key, (0, 0.0))
        span = elapsed - gone_s
        rate = max(rounds - gone_rounds, 0) / span if span > 0 else 0.0
        threads.append(ThreadResult(at_end, rounds=rounds, ops_per_s=rate))
    total = sum(t.ops_per_s for t in threads)
    if stalls is not None:
        total = _unstalled_total(timeline, stalls, prime)
    return RunResult(
        pairs=engine.active_pairs,
        seconds=elapsed,
        total_ops_per_s=total,
        threads=tuple(threads),
        oversubscribed=engine.oversubscribed,
        events=tuple(dict.fromkeys(events)),
        timeline=tuple(timeline),
        costs=merge([s.costs for s in timeline]),
        ops=ops,
        latency=lat,
        latency_all=tracker.all_pairs() if lat and tracker is not None else None,
        latency_note=engine.latency_note,
        windows=window_rates(timeline, sampler.interval, stalls),
        noise=tuple(
            window_noise(s, pair_cpus(s)) for s in kept(timeline, sampler.interval, stalls)
        ),
        stalls=stalls,
    )


def window_rates(
    timeline: list[Sample], interval: float, stalls: StallReport | None = None
) -> tuple[float, ...]:
    """Each sample's total rate, leaving out a late short sliver at the end
    (its rate is noisier than the rest and would get the same weight) and
    every stalled window (not a rate sample)."""
    return tuple(s.total_ops_per_s for s in kept(timeline, interval, stalls))


def kept(
    timeline: list[Sample], interval: float, stalls: StallReport | None = None
) -> list[Sample]:
    """The samples window_rates keeps, in order."""
    out = stalls.windows if stalls is not None else (False,) * len(timeline)
    return [s for s, gone in zip(timeline, out) if s.dt >= interval / 2 and not gone]


_EndKey = tuple[int, str, int]  # (pair, role, tid)


def _rounds_by_pair(s: Sample) -> dict[int, int]:
    out: dict[int, int] = {}
    for t in s.threads:
        out[t.pair] = out.get(t.pair, 0) + t.rounds
    return out


def _deltas(timeline: list[Sample], prime: Sample) -> list[dict[_EndKey, int]]:
    """Per sample: each end's rounds in that interval."""
    last = {(t.pair, t.role, t.tid): t.rounds for t in prime.threads}
    out = []
    for s in timeline:
        now = {(t.pair, t.role, t.tid): t.rounds for t in s.threads}
        out.append({k: v - last.get(k, v) for k, v in now.items()})
        last.update(now)
    return out


def _left_out(
    timeline: list[Sample], stalls: StallReport, prime: Sample
) -> dict[_EndKey, tuple[int, float]]:
    """end -> (rounds, seconds) of the windows its own pair stalled in, or a gap."""
    out: dict[_EndKey, tuple[int, float]] = {}
    for i, (s, deltas) in enumerate(zip(timeline, _deltas(timeline, prime))):
        for key, d in deltas.items():
            mine = stalls.pair_windows.get(key[0], ())
            if s.gap or (i < len(mine) and mine[i]):
                r, t = out.get(key, (0, 0.0))
                out[key] = (r + d, t + s.dt)
    return out


def _unstalled_total(timeline: list[Sample], stalls: StallReport, prime: Sample) -> float:
    """All ends' rounds over the windows without any stall, per second of them."""
    rounds, seconds = 0, 0.0
    for s, deltas, gone in zip(timeline, _deltas(timeline, prime), stalls.windows):
        if not gone:
            rounds += sum(deltas.values())
            seconds += s.dt
    return rounds / seconds if seconds > 0 else 0.0


def _stall_note(stalls: StallReport, elapsed: float) -> str:
    what = []
    if stalls.gaps:
        what.append(f"{stalls.gaps} late reading(s)")
    if stalls.stalled_pairs:
        what.append("pair(s) " + ", ".join(map(str, stalls.stalled_pairs)) + " without rounds")
    end = ""
    if stalls.stalled_at_end:
        end = "; still stalled at the end: pair(s) " + ", ".join(map(str, stalls.stalled_at_end))
    return (
        f"{STALL} {stalls.left_out_s:.1f} s of {elapsed:.1f} s left out of the rates "
        f"({sum(stalls.windows)} window(s): {', '.join(what)}){end}"
    )


def _ops(
    engine: Engine, mark: dict[int, int], names: Sequence[str], op_rates: list[list[float]]
) -> OpStats | None:
    """Per-operation rates; for msgbench, each phase over the repeats the window
    finished (None when it finished none)."""
    if not names:
        return None
    if not mark:
        return op_stats(names, op_rates)
    return engine.workload.phase_stats(engine.pairs, since=mark)


def _tick(
    sampler: Sampler, seconds: float, on_sample: Callable[[Sample], None] | None
) -> list[Sample]:
    """Sample on the caller's thread, on a fixed schedule, until `seconds` have passed."""
    out = []
    due = time.monotonic()
    end = due + seconds
    # Sums of float intervals fall short of `end` by a hair (ten 0.1 s steps
    # make 0.99999...): such a sliver is not a tick of its own.
    sliver = sampler.interval * 1e-3
    while end - due > sliver:
        # A late reading moves the schedule on: missed ticks are not queued up.
        due = max(min(due + sampler.interval, end), time.monotonic())
        s = sampler.sample_at(due)
        if s is None:
            break
        out.append(s)
        if on_sample is not None:
            on_sample(s)
    return out
