"""The measuring half of `ipctop check`: its fixed set of runs, each a RunReading.

check.py judges and prints what this measures; the judging itself lives in
analysis/verdicts.py and analysis/check_curve.py.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from ..analysis.check_curve import pair_counts
from ..analysis.readings import CheckReadings, RunLatency, RunReading, ThreadReading
from ..analysis.scaling import ScalingPoint, spread_pct
from ..analysis.stats import summarize
from ..analysis.verdicts import fmt_rate
from ..engine.config import RunConfig
from ..engine.engine import Engine
from ..engine.latency import format_ns
from ..engine.profile.span import SpanProfiler
from ..engine.sample import Sample
from ..engine.stalls import STALL_S
from ..errors import ResourceError, UnsupportedError
from ..live.engine_warnings import EngineWarnings
from ..live.measure import RunResult, measure_engine
from .common import attach, each, publisher
from .progress import PlannedProgress

SCALING_WORKLOADS = ("sysv-msg", "sysv-sem")
NO_RATE = (
    "no rate: every sample of its {n} window(s) stalled (ipctop or its ends went "
    f"{STALL_S:g} s or more without CPU), so there is nothing to measure on this box as it is"
)
SHARED_WORKLOAD = "sysv-msg-shared"


@dataclass(frozen=True)
class Timing:
    """Each run warms up once, then measures `windows` windows of `window` seconds."""

    warmup: float
    window: float
    windows: int

    @property
    def seconds(self) -> float:
        return self.warmup + self.window * self.windows


# 7 runs x 7 s is about a minute; quick is 7 x 1.8 s.
TIMING = {"full": Timing(1.0, 2.0, 3), "quick": Timing(0.3, 0.5, 3)}


def planned_runs(ncpus: int) -> int:
    """How many runs measure_all makes on this many CPUs (for the progress bar)."""
    between = len(pair_counts(ncpus)[1:-1])
    return len(SCALING_WORKLOADS) * ((3 if ncpus >= 2 else 1) + between) + 1


def measure_all(run: CheckRunner) -> CheckReadings:
    """Every run of a check, in the order they are printed."""
    readings = CheckReadings(engine=run.kind)
    n = len(run.cpus)
    for workload in SCALING_WORKLOADS:
        readings.one[workload] = run(workload, "same", 1)
        for c in pair_counts(n)[1:-1]:
            readings.between.setdefault(workload, {})[c] = run(workload, "same", c)
        if n >= 2:
            readings.all[workload] = run(workload, "same", n)
    if n >= 2:
        for workload in SCALING_WORKLOADS:
            readings.cross[workload] = run(workload, "cross", 1)
    readings.shared = run(SHARED_WORKLOAD, "same", n)
    return readings


class Printer:
    """Prints a line unless the check's output is JSON."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def __call__(self, text: str) -> None:
        if not self.quiet:
            print(text, flush=True)


class CheckRunner:
    """One check run at a time, with the shared timing, progress bar and metrics."""

    def __init__(
        self,
        say: Printer,
        kind: str,
        cpus: list[int],
        timing: Timing,
        bar: PlannedProgress,
        metrics: Any,
        profiler: SpanProfiler | None = None,
    ) -> None:
        self.say, self.kind, self.cpus, self.timing = say, kind, cpus, timing
        self.bar, self.metrics, self.profiler = bar, metrics, profiler
        self._points: dict[str, list[ScalingPoint]] = {}
        self.profiles: dict[str, dict[str, Any]] = {}  # --profile: run label -> profile
        self.warnings = EngineWarnings()  # said on stderr once each, kept for the record

    def __call__(self, workload: str, placement: str, pairs: int) -> RunReading:
        config = RunConfig(
            workload=workload,
            placement=placement,
            mode="threads",
            cpus=tuple(self.cpus),
            engine=self.kind,
        )
        feed = publisher(self.metrics, config, self.kind)
        self.bar.begin(self.timing.seconds, f"{workload} · {placement} · {pairs}")
        reading = self._reading(config, pairs, each(self.bar.tick, feed))
        self.bar.done()
        if self.profiler is not None and self.profiler.status.ok:
            profile = self.profiler.take()
            self.profiles[reading.label] = profile.to_dict(top=10)
            top = ", ".join(f"{x.name} {x.self_pct:.0f} %" for x in profile.top(4))
            self.say(f"{'':<4}profile: {top or 'n/a (' + (profile.na or 'no samples') + ')'}")
        if feed is not None and placement == "same" and reading.error is None:
            pts = self._points.setdefault(workload, [])
            pts.append(ScalingPoint(pairs, reading.total_ops_per_s))
            feed.points(sorted(pts, key=lambda p: p.pairs))
        return reading

    def _reading(
        self, config: RunConfig, pairs: int, on_sample: Callable[[Sample], None] | None
    ) -> RunReading:
        workload, placement, cpus = config.workload, config.placement, config.cpus
        try:
            results, seen = self._measure(config, pairs, on_sample)
        except (ResourceError, UnsupportedError, RuntimeError, OSError) as exc:
            # One run that cannot start is a verdict, not the end of the check.
            reading = RunReading(workload, placement, pairs, len(cpus), 0.0, error=str(exc))
            self.say(f"{reading.label}: could not run: {exc}")
            return reading
        reading, lines = summarise(config, pairs, results, seen)
        for line in lines:
            self.say(line)
        return reading

    def _measure(
        self, config: RunConfig, pairs: int, on_sample: Callable[[Sample], None] | None
    ) -> tuple[list[RunResult], dict[tuple[int, str], set[int]]]:
        """Measure several windows on one set of pairs; also every CPU each end was seen on."""
        t = self.timing
        results: list[RunResult] = []
        seen: dict[tuple[int, str], set[int]] = {}
        with Engine(config) as engine:
            engine.start(pairs)
            attach(on_sample, engine)  # --metrics: its latency histograms
            with self.profiler.span(engine) if self.profiler is not None else nullcontext():
                for i in range(t.windows):
                    # Four sampler intervals per window: enough of them for an interval
                    # and, at 1 pair, for the A/A noise floor's ABBA blocks.
                    r = measure_engine(
                        engine, t.window, t.warmup if i == 0 else 0.0, t.window / 4, on_sample
                    )
                    results.append(r)
                    for sample in r.timeline:
                        for x in sample.threads:
                            if x.last_cpu is not None:
                                seen.setdefault((x.pair, x.role), set()).add(x.last_cpu)
        # Read once the engine has stopped: an end that did not stop in time says so then.
        self.warnings.take([*engine.events, *(e for r in results for e in r.events)])
        return results, seen


def summarise(
    config: RunConfig,
    pairs: int,
    results: list[RunResult],
    seen: dict[tuple[int, str], set[int]],
) -> tuple[RunReading, list[str]]:
    """One run's reading from its measured windows, and the lines check prints for it.

    A window whose every sample stalled is not a rate of 0: it has no rate. Such
    windows are left out; a run with none left has no reading, and says why.
    """
    workload, placement, cpus = config.workload, config.placement, config.cpus
    rated = [r for r in results if r.no_rate is None]
    if not rated:
        error = NO_RATE.format(n=len(results))
        reading = RunReading(workload, placement, pairs, len(cpus), 0.0, error=error)
        return reading, [f"{reading.label}: {error}"]
    middle = sorted(rated, key=lambda r: r.total_ops_per_s)[len(rated) // 2]
    threads = tuple(
        ThreadReading(
            pair=t.at_end.pair,
            role=t.at_end.role,
            bound_cpu=t.at_end.bound_cpu,
            seen_cpus=tuple(sorted(seen.get((t.at_end.pair, t.at_end.role), set()))),
            rounds=t.rounds,
            # Wrong messages anywhere in the run count, not only in the median window.
            errors=max(
                x.at_end.errors
                for r in results
                for x in r.threads
                if (x.at_end.pair, x.at_end.role) == (t.at_end.pair, t.at_end.role)
            ),
            state=t.at_end.state,
        )
        for t in middle.threads
    )
    reading = RunReading(
        workload=workload,
        placement=placement,
        pairs=pairs,
        ncpus=len(cpus),
        total_ops_per_s=middle.total_ops_per_s,
        threads=threads,
        oversubscribed=middle.oversubscribed,
        events=tuple(dict.fromkeys(e for r in results for e in r.events)),
        seconds=sum(r.seconds for r in rated),
        window_totals=tuple(r.total_ops_per_s for r in rated),
        windows=tuple(w for r in rated for w in r.windows),
        latency=_latency(middle),
    )
    spread = spread_pct([r.total_ops_per_s for r in rated])
    unrated = f"; {len(results) - len(rated)} stalled through" if len(rated) < len(results) else ""
    lines = [
        f"{reading.label:<34} {fmt_rate(reading.total_ops_per_s):>7} ops/s"
        f"  (spread {spread:.0f} % over {len(rated)} windows{unrated}; "
        f"{_interval(reading.windows)})"
    ]
    p = reading.latency
    if p is not None:
        lines.append(
            f"{'':<34} round trip p50 {format_ns(p.rtt.p50)} p99 {format_ns(p.rtt.p99)}, "
            f"one-way p50 {format_ns(p.oneway.p50)} p99 {format_ns(p.oneway.p99)}"
        )
    return reading, lines


def _latency(middle: RunResult) -> RunLatency | None:
    """All pairs of the median window, with how they were timed."""
    if middle.latency_all is None:
        return None
    return RunLatency.of(middle.latency_all, middle.latency_note)


def _interval(windows: tuple[float, ...]) -> str:
    if len(windows) < 2:
        return f"n={len(windows)}"
    s = summarize(windows)
    if s.low is None or s.high is None:  # no interval to say
        return f"n={len(windows)}"
    return f"{fmt_rate(s.figure)} [{fmt_rate(s.low)}, {fmt_rate(s.high)}] {s.basis}"
