"""One measured run of N pairs: warm up, then count rounds over a window.

The window is the sampler's: from the reading that primes it to its last. Each
end's rounds, its rate and the total are the sampler's readings at those two
ends, the same readings every interval's rate (`windows`) is made of, so a
run's total is its intervals' rates weighted by their length; each end's last
reading (where it ran, its state and errors) is the sampler's too. So are the
per-operation rates of a workload that counts operations: each end's counts
(ThreadSample.ops) at the same two readings, so a record's timeline rebuilds
them. msgbench's phases are timed by the ends themselves (phase_stats).
"""

from __future__ import annotations

import operator
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
from ..engine.stalls import STALL, STALL_S, StallReport, stalled_windows


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
    # Per-operation rates: msgbench's phases over the repeats the window finished
    # (None when it finished none), else op_calls.
    ops: OpStats | None = None
    latency: tuple[PairLatency, ...] = ()  # per pair over the window, when timed
    latency_all: PairLatency | None = None  # every pair's rounds as one (pair -1)
    latency_note: str = ""  # how rounds were timed, or why not (Engine.latency_note)
    # The total rate in each sampler interval of the window: the samples an
    # interval is built from (analysis.stats; one interval is one window).
    windows: tuple[float, ...] = ()
    stalls: StallReport | None = None  # None when nothing stalled
    noise: tuple[WindowNoise, ...] = ()  # steal, PSI, clock: one per entry of `windows`
    # Each operation's calls per second across the ends over the window, from each
    # end's counts at the window's two readings (stalled windows left out, as from
    # the rounds); None for a workload that counts no operations.
    op_calls: OpStats | None = None
    start: Sample | None = None  # the priming reading: the window's first interval starts here
    # Why the run has no rate, or None. Every window of it stalled (ipctop or its ends
    # went STALL_S without CPU), so none is a rate sample and `windows` is empty: its
    # total_ops_per_s is then 0.0 by construction, not a measured 0. Read `rate`.
    no_rate: str | None = None

    @property
    def rate(self) -> float | None:
        """The run's total ops/s, or None when it has no rate (see no_rate)."""
        return None if self.no_rate is not None else self.total_ops_per_s


def no_rate_of(results: Sequence[RunResult]) -> str | None:
    """Why runs of one setting have no rate together; None when any of them has one."""
    if not results or any(r.no_rate is None for r in results):
        return None
    if len(results) == 1:
        return results[0].no_rate
    return f"all {len(results)} runs: {results[0].no_rate}"


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
        mark = engine.workload.phase_mark(engine.pairs)
        timeline = _tick(sampler, seconds, on_sample)
    finally:
        sampler.close()  # its /proc files now, not at a later collection
    lat = tuple(tracker.read(engine.pairs)) if tracker is not None else ()
    # The window's length is the samples' span (the priming reading to the last), the
    # bounds its rounds and calls are read at: counts and time of one rate come from
    # the same readings. (Counters read again around the sampling, as before, were a
    # few ms off those bounds: rates move by that much against older runs.)
    elapsed = sum(s.dt for s in timeline)
    events = list(engine.poll())
    for s in timeline:
        events.extend(s.events)
    report = stalled_windows(timeline, _rounds_by_pair(prime))
    stalls = report if report.any else None
    if stalls is not None:
        events.append(_stall_note(stalls, elapsed))
    left_out = _left_out(timeline, stalls, prime) if stalls else {}
    # The window's ends are those the priming reading saw; the sampler read each of
    # them at the window's two ends (one pass each): no second read here.
    last = {(t.pair, t.role, t.tid): t for t in (timeline[-1] if timeline else prime).threads}
    threads = []
    op_rates: list[list[float]] = []
    for before in prime.threads:
        key = (before.pair, before.role, before.tid)
        at_end = last.get(key)
        if at_end is None:
            raise RuntimeError(f"pair {key[0]} {key[1]}: the sampler's last reading lacks it")
        counts = _minus(_counts(at_end), _counts(before))
        # A stalled window is not a rate sample: its counts and its time are left out.
        gone, gone_s = left_out.get(key, ((0,) * len(counts), 0.0))
        span = elapsed - gone_s
        rates = [max(c - g, 0) / span if span > 0 else 0.0 for c, g in zip(counts, gone)]
        threads.append(ThreadResult(at_end, rounds=counts[0], ops_per_s=rates[0]))
        op_rates.append(rates[1:])
    names = engine.workload.ops
    op_calls = op_stats(names, op_rates) if names else None
    ops = engine.workload.phase_stats(engine.pairs, since=mark) if names and mark else op_calls
    total = sum(t.ops_per_s for t in threads)
    if stalls is not None:
        total = _unstalled_total(timeline, stalls, prime)
    windows = window_rates(timeline, sampler.interval, stalls)
    no_rate = _no_rate(timeline, stalls, windows)
    if no_rate is not None:
        total = 0.0  # an unstalled sliver's few ms are no rate either
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
        windows=windows,
        noise=tuple(
            window_noise(s, pair_cpus(s)) for s in kept(timeline, sampler.interval, stalls)
        ),
        stalls=stalls,
        op_calls=op_calls,
        start=prime,
        no_rate=no_rate,
    )


def window_rates(
    timeline: Sequence[Sample], interval: float, stalls: StallReport | None = None
) -> tuple[float, ...]:
    """Each sample's total rate, leaving out a late short sliver at the end
    (its rate is noisier than the rest and would get the same weight) and
    every stalled window (not a rate sample)."""
    return tuple(s.total_ops_per_s for s in kept(timeline, interval, stalls))


def cpu_rates(
    timeline: Sequence[Sample], interval: float, stalls: StallReport | None = None
) -> tuple[float, ...]:
    """Rounds per CPU-second of the ends in each window window_rates keeps (ab
    --metric cpu): what a round costs, not how much CPU a shared box left the
    pairs. A stalled window is no sample of it either: while one pair is stopped
    the others run without it, at another cost per round than the run's, and a
    late reading spans ipctop's own stop. A window with no round or no CPU time
    read has no figure."""
    out = []
    for s in kept(timeline, interval, stalls):
        c = s.costs
        if c is not None and c.cpu_us_per_round:
            out.append(1e6 / c.cpu_us_per_round)
    return tuple(out)


def kept(
    timeline: Sequence[Sample], interval: float, stalls: StallReport | None = None
) -> list[Sample]:
    """The samples window_rates (and cpu_rates) keep, in order: one rule for both."""
    out = stalls.windows if stalls is not None else (False,) * len(timeline)
    return [s for s, gone in zip(timeline, out) if s.dt >= interval / 2 and not gone]


_EndKey = tuple[int, str, int]  # (pair, role, tid)
_Counts = tuple[int, ...]  # an end's rounds, then each operation's calls


def _counts(t: ThreadSample) -> _Counts:
    return (t.rounds, *t.ops)


def _minus(a: _Counts, b: _Counts) -> _Counts:
    return tuple(map(operator.sub, a, b))


def _rounds_by_pair(s: Sample) -> dict[int, int]:
    out: dict[int, int] = {}
    for t in s.threads:
        out[t.pair] = out.get(t.pair, 0) + t.rounds
    return out


def _deltas(timeline: list[Sample], prime: Sample) -> list[dict[_EndKey, _Counts]]:
    """Per sample: each end's rounds and calls in that interval."""
    last = {(t.pair, t.role, t.tid): _counts(t) for t in prime.threads}
    out = []
    for s in timeline:
        now = {(t.pair, t.role, t.tid): _counts(t) for t in s.threads}
        out.append({k: _minus(v, last.get(k, v)) for k, v in now.items()})
        last.update(now)
    return out


def _left_out(
    timeline: list[Sample], stalls: StallReport, prime: Sample
) -> dict[_EndKey, tuple[_Counts, float]]:
    """end -> (counts, seconds) of the windows its own pair stalled in, or a gap."""
    out: dict[_EndKey, tuple[_Counts, float]] = {}
    for i, (s, deltas) in enumerate(zip(timeline, _deltas(timeline, prime))):
        for key, d in deltas.items():
            mine = stalls.pair_windows.get(key[0], ())
            if s.gap or (i < len(mine) and mine[i]):
                c, t = out.get(key, ((0,) * len(d), 0.0))
                out[key] = (tuple(map(operator.add, c, d)), t + s.dt)
    return out


def _unstalled_total(timeline: list[Sample], stalls: StallReport, prime: Sample) -> float:
    """All ends' rounds over the windows without any stall, per second of them."""
    rounds, seconds = 0, 0.0
    for s, deltas, gone in zip(timeline, _deltas(timeline, prime), stalls.windows):
        if not gone:
            rounds += sum(d[0] for d in deltas.values())
            seconds += s.dt
    return rounds / seconds if seconds > 0 else 0.0


def _no_rate(
    timeline: list[Sample], stalls: StallReport | None, windows: tuple[float, ...]
) -> str | None:
    """Why the window has no rate: no reading, or every window of it stalled."""
    if not timeline:
        return "no reading was taken in the window"
    # Without a stall, a window shorter than half an interval still has a rate: its
    # total over the few ms it lasted.
    if windows or stalls is None:
        return None
    seconds = sum(s.dt for s in timeline)
    return (
        f"every window of its {seconds:.1f} s stalled: ipctop or its ends went "
        f"{STALL_S:g} s or more without CPU"
    )


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


def _tick(
    sampler: Sampler, seconds: float, on_sample: Callable[[Sample], None] | None
) -> list[Sample]:
    """Sample on the caller's thread, on a fixed schedule, until `seconds` have passed."""
    out: list[Sample] = []
    due = time.monotonic()
    end = due + seconds
    # Sums of float intervals fall short of `end` by a hair (ten 0.1 s steps
    # make 0.99999...): such a sliver is not a tick of its own.
    sliver = sampler.interval * 1e-3
    while end - due > sliver:
        due = sampler.next_due(due)  # the sampler's own loop's rule: see there
        if due > end:
            if out and end - time.monotonic() < sampler.min_gap:
                break  # the end is nearer than a quarter tick: no sliver of a window
            due = end
        s = sampler.sample_at(due)
        if s is None:
            break
        out.append(s)
        if on_sample is not None:
            on_sample(s)
    return out
