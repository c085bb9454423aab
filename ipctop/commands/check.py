"""`ipctop check`: a verdict on a new box in about a minute (15 s with --quick).

The box facts come first, then a fixed set of short runs: sysv-msg and
sysv-sem same-core at every pair count from 1 to the CPU count (1, 2, 4, ...
N-1, N on big boxes), so a peak followed by a drop fails; 1 pair cross-core of
each; the shared queue at every CPU. Each run warms up once, then measures a
few windows and keeps the median one, so one hiccup of a noisy box does not
make the verdict; every line carries the median of its sampler intervals with
a 95 % interval. The 1-pair sysv-msg run doubles as an A/A calibration (its
intervals split into interleaved halves): the box's noise floor. The judging
lives in analysis/verdicts.py and analysis/check_curve.py (thresholds there).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from ..analysis.check_curve import (
    NoiseFloor,
    aa_noise_floor,
    judge_baseline,
    judge_noise,
    pair_counts,
)
from ..analysis.scaling import ScalingPoint, spread_pct
from ..analysis.stats import TooFewWindows, summarize
from ..analysis.verdicts import (
    FAIL,
    CheckReadings,
    RunReading,
    ThreadReading,
    Verdict,
    exit_code,
    fmt_rate,
    judge_check,
    overall,
)
from ..box import describe, read_box
from ..engine.config import EngineConfig
from ..engine.engine import ENGINES, Engine, resolve_engine
from ..engine.latency import PairLatency, format_ns
from ..engine.profile.span import SpanProfiler
from ..engine.sample import Sample
from ..errors import ResourceError, UnsupportedError, UsageError
from ..live.measure import RunResult, measure_engine
from ..output.record import Record, Step
from ..output.record_io import read_record, write_record
from .common import (
    add_metrics_option,
    add_profile_option,
    cpu_text,
    each,
    metrics_endpoint,
    publisher,
    resolve_cpus,
)
from .progress import PlannedProgress

SCHEMA = "ipctop.check/1"
# (warm-up, window, windows) per run: 7 runs x 7 s is about a minute; quick is 7 x 1.8 s.
TIMING = {"full": (1.0, 2.0, 3), "quick": (0.3, 0.5, 3)}
SCALING_WORKLOADS = ("sysv-msg", "sysv-sem")
SHARED_WORKLOAD = "sysv-msg-shared"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help="about 15 s instead of about a minute")
    p.add_argument("--json", action="store_true", help="print one machine-readable result")
    p.add_argument("--cpus", help="CPUs to use, e.g. 0-3,8 (default: the allowed set)")
    p.add_argument(
        "--engine", choices=ENGINES, default="auto", help="native (C) or python (fallback)"
    )
    add_metrics_option(p)
    add_profile_option(p)
    p.add_argument(
        "--record", metavar="FILE", help="write sysv-msg's curve and the noise floor as a record"
    )
    p.add_argument(
        "--baseline",
        metavar="FILE",
        help="a known-good record of the same CPU model (check --record): absolute rates "
        "against it, with intervals",
    )


def run(args: argparse.Namespace) -> int:
    kind = resolve_engine(args.engine)
    cpus = resolve_cpus(args.cpus)
    box = read_box()
    baseline = _read_baseline(args.baseline, box.to_dict()) if args.baseline else None
    warmup, window, windows = TIMING["quick" if args.quick else "full"]
    say = _Printer(quiet=args.json)
    say(f"ipctop check · engine {kind} · CPUs {cpu_text(cpus)}")
    for line in describe(box):
        say(line)
    say("")

    profiler = SpanProfiler(cpus) if getattr(args, "profile", False) else None
    for line in profiler.lines if profiler else ():
        print(f"ipctop: {line}", file=sys.stderr, flush=True)
    n = len(cpus)
    between = len(pair_counts(n)[1:-1])
    runs = len(SCALING_WORKLOADS) * ((3 if n >= 2 else 1) + between) + 1
    with (
        metrics_endpoint(args) as metrics,
        PlannedProgress("check", runs * (warmup + window * windows)) as bar,
        profiler or nullcontext(),  # perf stops on every path
    ):
        runner = _Runner(say, kind, cpus, warmup, window, windows, bar, metrics)
        runner.profiler = profiler
        readings = _readings(runner)

    box_dict = box.to_dict()
    verdicts = judge_check(box_dict, cpus, readings)
    floor = _noise_floor(readings)
    verdicts.append(judge_noise(*floor))
    if baseline is not None:
        verdicts.extend(_against(baseline, readings))
    code = exit_code(verdicts)
    if args.record:
        path = write_record(args.record, _record(box_dict, cpus, kind, readings, floor[0], args))
        say(f"record written to {path}")
    if args.json:
        result = _result(box_dict, cpus, kind, args.quick, readings, verdicts, code)
        result["noise"] = floor[0].to_dict() if floor[0] else None
        if profiler is not None:
            result["profiles"] = runner.profiles  # optional: run label -> profile
        print(json.dumps(result))
    else:
        say("")
        for v in verdicts:
            say(_mark(v) + v.line)
        status = overall(verdicts)
        fails = sum(v.status == FAIL for v in verdicts)
        say(f"\ncheck: {status}" + (f" ({fails} failed)" if fails else ""))
    return code


def _readings(run: _Runner) -> CheckReadings:
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


class _Runner:
    """One check run at a time, with the shared timing, progress bar and metrics."""

    def __init__(self, say, kind, cpus, warmup, window, windows, bar, metrics) -> None:
        self.say, self.kind, self.cpus = say, kind, cpus
        self.warmup, self.window, self.windows = warmup, window, windows
        self.bar, self.metrics = bar, metrics
        self._points: dict[str, list[ScalingPoint]] = {}
        self.profiler: SpanProfiler | None = None  # --profile
        self.profiles: dict[str, dict[str, Any]] = {}

    def __call__(self, workload: str, placement: str, pairs: int) -> RunReading:
        config = EngineConfig(
            workload=workload,
            placement=placement,
            mode="threads",
            cpus=tuple(self.cpus),
            engine=self.kind,
        )
        feed = publisher(self.metrics, config, self.kind)
        self.bar.begin(
            self.warmup + self.window * self.windows, f"{workload} · {placement} · {pairs}"
        )
        reading = _run(
            self.say, config, pairs, self.warmup, self.window, self.windows,
            each(self.bar.tick, feed), self.profiler,
        )  # fmt: skip
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


class _Printer:
    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def __call__(self, text: str) -> None:
        if not self.quiet:
            print(text, flush=True)


def _mark(v: Verdict) -> str:
    return {"ok": "  ", "warn": "? ", "fail": "! "}[v.status]


def _run(
    say: _Printer,
    config: EngineConfig,
    pairs: int,
    warmup: float,
    window: float,
    windows: int,
    on_sample: Callable[[Sample], None] | None = None,
    profiler: SpanProfiler | None = None,
) -> RunReading:
    workload, placement, cpus = config.workload, config.placement, config.cpus
    try:
        results, seen = _measure(config, pairs, warmup, window, windows, on_sample, profiler)
    except (ResourceError, UnsupportedError, RuntimeError, OSError) as exc:
        # One run that cannot start is a verdict, not the end of the check.
        reading = RunReading(workload, placement, pairs, len(cpus), 0.0, error=str(exc))
        say(f"{reading.label}: could not run: {exc}")
        return reading
    middle = sorted(results, key=lambda r: r.total_ops_per_s)[len(results) // 2]
    threads = tuple(
        ThreadReading(
            pair=t.pair,
            role=t.role,
            bound_cpu=t.bound_cpu,
            seen_cpus=tuple(sorted(seen.get((t.pair, t.role), set()))),
            rounds=t.rounds,
            # Wrong messages anywhere in the run count, not only in the median window.
            errors=max(
                x.errors
                for r in results
                for x in r.threads
                if x.pair == t.pair and x.role == t.role
            ),
            state=t.state,
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
        seconds=sum(r.seconds for r in results),
        window_totals=tuple(r.total_ops_per_s for r in results),
        windows=tuple(w for r in results for w in r.windows),
        latency=_latency(middle),
    )
    spread = spread_pct([r.total_ops_per_s for r in results])
    say(
        f"{reading.label:<34} {fmt_rate(reading.total_ops_per_s):>7} ops/s"
        f"  (spread {spread:.0f} % over {len(results)} windows; {_interval(reading.windows)})"
    )
    if reading.latency is not None:
        p = PairLatency.from_dict(reading.latency)
        say(
            f"{'':<34} round trip p50 {format_ns(p.rtt.p50)} p99 {format_ns(p.rtt.p99)}, "
            f"one-way p50 {format_ns(p.oneway.p50)} p99 {format_ns(p.oneway.p99)}"
        )
    return reading


def _latency(middle: RunResult) -> dict[str, Any] | None:
    """All pairs of the median window, with how they were timed."""
    if middle.latency_all is None:
        return None
    return {**middle.latency_all.to_dict(), "note": middle.latency_note}


def _interval(windows: tuple[float, ...]) -> str:
    if len(windows) < 2:
        return f"n={len(windows)}"
    s = summarize(windows)
    return f"median {fmt_rate(s.median)} [{fmt_rate(s.low)}, {fmt_rate(s.high)}] n={s.n}"


def _noise_floor(readings: CheckReadings) -> tuple[NoiseFloor | None, str]:
    run = readings.one.get("sysv-msg")
    if run is None or run.error:
        return None, "the 1-pair sysv-msg run did not run"
    try:
        return aa_noise_floor(run.windows, run.seconds), ""
    except TooFewWindows as exc:
        return None, str(exc)


def _read_baseline(path: str, box: dict[str, Any]) -> Record:
    rec = read_record(path)
    theirs, mine = rec.box.get("cpu_model"), box.get("cpu_model")
    if theirs != mine:
        raise UsageError(
            f"--baseline {rec.name} is from a {theirs or 'unknown CPU'}, this box is a "
            f"{mine or 'unknown CPU'}: absolute rates compare only on the same CPU model"
        )
    # Checked before measuring: a wrong record is bad input, not a minute's wait.
    if rec.config.placement != "same" or rec.config.mode != "threads":
        raise UsageError(f"--baseline {rec.name} is not a same-core threads record")
    return rec


def _against(baseline: Record, readings: CheckReadings) -> list[Verdict]:
    """Every run of the baseline's setting against its step at the same pair count."""
    cfg = baseline.config
    steps = {s.pairs: s for s in baseline.steps}
    out = []
    for run in readings.runs():
        step = steps.get(run.pairs)
        if run.workload == cfg.workload and run.placement == "same" and step:
            out.append(judge_baseline(run, step.windows or step.repeats, baseline.name))
    if not out:
        raise UsageError(f"--baseline {baseline.name} has no step this check measures")
    return out


def _record(
    box: dict[str, Any],
    cpus: list[int],
    kind: str,
    readings: CheckReadings,
    floor: NoiseFloor | None,
    args: argparse.Namespace,
) -> Record:
    workload = "sysv-msg"
    runs = [readings.one.get(workload), *readings.between.get(workload, {}).values()]
    runs.append(readings.all.get(workload))
    steps = [
        Step(r.pairs, summarize(r.windows).median, windows=list(r.windows))
        for r in runs
        if r is not None and not r.error and r.windows
    ]
    return Record(
        kind="sweep",
        box=box,
        config={
            "workload": workload,
            "placement": "same",
            "mode": "threads",
            "engine": kind,
            "cpus": list(cpus),
            "seconds": None,
            "warmup": None,
            "repeat": None,
            "interval": None,
            "source": "ipctop check" + (" --quick" if args.quick else ""),
        },
        steps=steps,
        noise=floor.to_dict() if floor else None,
    )


def _measure(
    config: EngineConfig,
    pairs: int,
    warmup: float,
    window: float,
    windows: int,
    on_sample: Callable[[Sample], None] | None = None,
    profiler: SpanProfiler | None = None,
) -> tuple[list[RunResult], dict[tuple[int, str], set[int]]]:
    """Measure several windows on one set of pairs; also every CPU each end was seen on."""
    results: list[RunResult] = []
    seen: dict[tuple[int, str], set[int]] = {}
    with Engine(config) as engine:
        engine.start(pairs)
        with profiler.span(engine) if profiler is not None else nullcontext():
            for i in range(windows):
                # Four sampler intervals per window: enough of them for an interval
                # and, at 1 pair, for the A/A noise floor's ABBA blocks.
                r = measure_engine(
                    engine, window, warmup if i == 0 else 0.0, window / 4, on_sample=on_sample
                )
                results.append(r)
                for sample in r.timeline:
                    for t in sample.threads:
                        if t.last_cpu is not None:
                            seen.setdefault((t.pair, t.role), set()).add(t.last_cpu)
                for t in r.threads:
                    if t.cpu is not None:
                        seen.setdefault((t.pair, t.role), set()).add(t.cpu)
    return results, seen


def _result(
    box: dict[str, Any],
    cpus: list[int],
    kind: str,
    quick: bool,
    readings: CheckReadings,
    verdicts: list[Verdict],
    code: int,
) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "quick": quick,
        "engine": kind,
        "cpus": list(cpus),
        "box": box,
        "runs": [r.to_dict() for r in readings.runs()],
        "verdicts": [v.to_dict() for v in verdicts],
        "status": overall(verdicts),
        "exit_code": code,
    }
