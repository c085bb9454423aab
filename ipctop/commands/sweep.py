"""`ipctop sweep`: the originals' shell loop (1, 2, ... N pairs) in one command."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from pathlib import Path

from ..analysis.noise import record_noise, record_note
from ..analysis.scaling import ScalingPoint, scalability_pct
from ..analysis.sessions import SessionSpread
from ..analysis.stats import WINDOW_S
from ..box import BoxFacts, read_box
from ..engine.config import RunConfig
from ..engine.contention import CONTENTION
from ..engine.engine import Engine, resolve_engine
from ..engine.opstats import format_op_stats
from ..engine.profile.span import SpanProfiler
from ..engine.sample import Sample
from ..engine.stalls import STALL, StallSummary
from ..engine.workloads import configured
from ..engine.workloads.msgbench import phase_table
from ..live.engine_warnings import EngineWarnings
from ..live.measure import RunResult, measure_engine, no_rate_of
from ..live.priority import raise_monitor
from ..output.exports.csvout import write_csv
from ..output.records.latency_record import step_latency
from ..output.records.output_paths import check_output_file, write_or_keep
from ..output.records.record import Record, Sessions, Step, StepThread, unrated
from ..output.records.record_box import Box
from ..output.records.record_io import write_record
from ..output.text import latency_text, tables
from ..output.text.costs_table import format_costs
from ..output.text.profile_table import format_profile
from ..plain import to_plain
from ..signals import Interrupted
from .check_sessions import measure_sessions, remember_spread
from .common import (
    MAX_PAIRS,
    add_measuring_options,
    attach,
    count,
    cpu_text,
    each,
    metrics_endpoint,
    non_negative_float,
    positive_float,
    publisher,
    run_configs,
    start_profiler,
)
from .progress import PlannedProgress


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_measuring_options(p, many=True)
    p.add_argument("--seconds", type=positive_float, default=5.0, help="measured per step (5)")
    p.add_argument("--warmup", type=non_negative_float, default=1.0, help="before each step (1)")
    p.add_argument("--repeat", type=count(1, 100), default=3, help="runs per step (3)")
    p.add_argument(
        "--max-pairs",
        type=count(1, MAX_PAIRS),
        help=f"stop at this many pairs (at most {MAX_PAIRS})",
    )
    p.add_argument(
        "--groups",
        metavar="LIST",
        help="hackbench: sweep the load, e.g. 1,2,4,8 groups on the fixed CPU set, each load "
        "--repeat fresh runs of --loops (see ipctop hackbench)",
    )
    p.add_argument("--loops", type=count(1, 10**9), default=100, help="hackbench --groups (100)")
    p.add_argument(
        "--rooms",
        metavar="LIST",
        help="chat: sweep the load, e.g. 1,2,4 rooms, each load --repeat fresh runs of --seconds",
    )
    p.add_argument(
        "--sessions",
        type=count(2, 50),
        metavar="K",
        help="then start K separate sessions of the 1-pair step (3 runs of up to 2 s each) and keep "
        "how much sessions differ beyond their runs in the record: the spread the TUI's "
        "baseline Diff and compare add when it is a baseline (5 is a fair start)",
    )
    p.add_argument("--json", metavar="FILE", help="write the record (one per workload)")
    p.add_argument("--csv", metavar="FILE", help="write one row per step and thread")
    p.add_argument("--quiet", "-q", action="store_true", help="only the summary")


def run(args: argparse.Namespace) -> int:
    if args.groups is not None or args.rooms is not None:
        from .load_sweep import run as load_sweep

        return load_sweep(args)
    configs = {c.workload: c for c in run_configs(args)}
    names = list(configs)
    cpus = list(configs[names[0]].cpus)
    kind = resolve_engine(args.engine)
    # Before any pair starts: a result that cannot be saved is found out now.
    for name in names:
        if args.json:
            check_output_file(_path_for(args.json, name, len(names)), "--json")
        if args.csv:
            check_output_file(_path_for(args.csv, name, len(names)), "--csv")
    for c in configs.values():
        Engine(c).counters.close()  # validates workload x placement x engine before any run
    top = args.max_pairs or len(cpus)
    box = read_box()
    records = {n: _new_record(box, configs[n], kind, args) for n in names}
    # Steps past the CPU count oversubscribe: a raised monitor starts the pairs
    # in seconds instead of tens of seconds, and reads the counters on time.
    priority = raise_monitor()
    note = f" · {priority.note}" if priority.note else ""
    profiler = start_profiler(args, cpus)
    print(
        f"ipctop sweep · {', '.join(names)} · {args.placement} · {args.mode} · engine {kind} · "
        f"CPUs {cpu_text(cpus)} · 1..{top} pairs · {args.seconds:g} s x {args.repeat}{note}"
    )
    print(f"kernel {box.kernel_release} · {box.cpu_model}")
    # Each workload's own settings (its payload), on one line that says what it is.
    details = [(n, configured(configs[n]).detail_text().removeprefix(" · ")) for n in names]
    said_details = "; ".join(f"{n} {d}" for n, d in details if d)
    if said_details:
        print(f"payload: {said_details}")
    status = 0
    unit = args.seconds + args.warmup
    plan = top * len(names) * args.repeat * unit
    said = EngineWarnings()
    try:
        with metrics_endpoint(args) as metrics, PlannedProgress("sweep", plan) as bar:
            feeds = {n: publisher(metrics, configs[n], kind) for n in names}
            for n in range(1, top + 1):
                for name in names:
                    rec = records[name]
                    warned = functools.partial(_warned, said, rec)
                    step = _step(configs[name], n, args, bar, feeds[name], profiler, warned)
                    records[name].steps.append(step)
                    if step.no_rate is None:  # a step with no rate is no point of the curve
                        records[name].points.append(
                            ScalingPoint.from_repeats(
                                n, step.repeats, settled=True, windows=step.windows
                            )
                        )
                    if feeds[name] is not None:
                        feeds[name].points(records[name].points)
                    if not args.quiet:
                        _print_step(name, step, len(cpus), args.repeat)
            if args.sessions:
                for name in names:
                    spread = _sessions(args, name, cpus, kind)
                    records[name].sessions = Sessions.model_validate(to_plain(spread))
                    print(f"{name}: {spread.line()}")
                    kept = remember_spread(
                        spread, "sweep --sessions", cpus, name, args.placement, args.mode
                    )
                    if not args.quiet:
                        print(f"{name}: {kept}")
    except Interrupted:
        for r in records.values():
            r.interrupted = True
        status = -1
        raise
    except BaseException:
        # Any failure mid-sweep (a full /run/ipctop, a pair that would not start): the
        # record still keeps what was measured, and says that it is not the whole sweep.
        for r in records.values():
            r.interrupted = True
        raise
    finally:
        if profiler is not None:
            profiler.close()  # perf stops on every path
        saved = _finish(records, names, args, status)
    # Contention, and a stall the pair recovered from (left out of the rates), are
    # warnings in the record, not failures of the sweep; a pair stalled for good is.
    warnings = (CONTENTION, STALL)
    failed = any(not e.startswith(warnings) for r in records.values() for e in r.events)
    stuck = any(s.stalls and s.stalls.stalled_at_end for r in records.values() for s in r.steps)
    # A step that measured nothing is a failure of the sweep, said once more at the end.
    no_rate = [(n, p, why) for n, r in records.items() for p, why in unrated(r).items()]
    for name, pairs, why in no_rate:
        print(f"ipctop: {name} at {pairs} pair(s): no rate: {why} (exit 1)", file=sys.stderr)
    return 1 if failed or stuck or no_rate or not saved else 0


def _sessions(args: argparse.Namespace, name: str, cpus: list[int], kind: str) -> SessionSpread:
    setting = ["-w", name, "--placement", args.placement, "--mode", args.mode]
    say = (lambda _line: None) if args.quiet else print
    seconds, warmup = min(args.seconds, 2.0), min(args.warmup, 0.5)
    return measure_sessions(args.sessions, cpus, kind, seconds, warmup, say, setting)


OnSample = Callable[[Sample], None]
Warned = Callable[[Iterable[str]], None]  # a run's warnings: said once, kept in its record


def _warned(said: EngineWarnings, rec: Record, lines: Iterable[str]) -> None:
    """Say a run's warnings once per sweep; keep them, once each, in its record."""
    rec.warnings = list(dict.fromkeys([*(rec.warnings or []), *said.take(lines)])) or None


def _new_record(box: BoxFacts, config: RunConfig, kind: str, args: argparse.Namespace) -> Record:
    return Record(
        kind="sweep",
        box=Box.of(box),
        config=config.as_run(
            kind,
            seconds=args.seconds,
            warmup=args.warmup,
            repeat=args.repeat,
            window_s=WINDOW_S,
        ),
    )


def _measure(
    config: RunConfig,
    n: int,
    args: argparse.Namespace,
    on_sample: OnSample | None,
    profiler: SpanProfiler | None,
    warned: Warned,
) -> RunResult:
    with Engine(config) as engine:
        engine.start(n)
        attach(on_sample, engine)  # --metrics: its latency histograms
        with profiler.span(engine) if profiler is not None else nullcontext():
            # A step records and prints where the time goes: the costs need the detail reads.
            result = measure_engine(
                engine, args.seconds, args.warmup, WINDOW_S, on_sample, detail=True
            )
    # Read once the engine has stopped: an end that did not stop in time says so then.
    warned([*engine.events, *result.events])
    return result


def _step(
    config: RunConfig,
    n: int,
    args: argparse.Namespace,
    bar: PlannedProgress,
    feed: OnSample | None = None,
    profiler: SpanProfiler | None = None,
    warned: Warned = lambda lines: None,
) -> Step:
    """One pair count, measured --repeat times; warned(lines) gets each run's warnings."""
    runs: list[RunResult] = []
    for i in range(args.repeat):
        bar.begin(args.seconds + args.warmup, f"{config.workload} · {n} pair(s) · run {i + 1}")
        runs.append(_measure(config, n, args, each(bar.tick, feed), profiler, warned))
        bar.done()
    # A run with no rate (every window stalled) is no repeat: its 0.0 is not a figure.
    rated = [r for r in runs if r.no_rate is None]
    totals = [r.total_ops_per_s for r in rated]
    # Every run's windows, pooled: the step's figure is their median, with an interval.
    windows = [w for r in rated for w in r.windows]
    # The matrix shown is the run whose total is the median, not a lucky one.
    middle = sorted(rated or runs, key=lambda r: r.total_ops_per_s)[len(rated or runs) // 2]
    figure = ScalingPoint.from_repeats(n, totals, windows=windows).total_ops_per_s if rated else 0.0
    step = Step(
        pairs=n,
        total_ops_per_s=figure,
        repeats=totals,
        windows=windows,
        oversubscribed=middle.oversubscribed,
        threads=[
            StepThread(
                t.at_end.pair,
                t.at_end.role,
                t.at_end.last_cpu,
                t.ops_per_s,
                t.rounds,
                t.at_end.errors,
            )
            for t in middle.threads
        ],
        # Per round and per second over a window with no rate: no figures either.
        costs=middle.costs if rated else None,
        ops=middle.ops if rated else None,
        events=list(dict.fromkeys(e for r in runs for e in r.events)),
        # The windows of every repeat: more windows, a tighter interval per share.
        profile=profiler.take() if profiler is not None else None,
        latency=step_latency(runs, middle),
        stalls=_stalls(runs),
        noise=record_noise(n for r in runs for n in r.noise),
        no_rate=no_rate_of(runs),
    )
    return step


def _write(writer: Callable[[Path, Record], Path], rec: Record, path: Path) -> Path:
    return writer(path, rec)


def _stalls(runs: list[RunResult]) -> StallSummary | None:
    """The stalls of the step's runs, summed; None when none stalled."""
    said = [r.stalls.summary() for r in runs if r.stalls is not None]
    return functools.reduce(StallSummary.plus, said) if said else None


def _print_step(name: str, step: Step, ncpus: int, repeat: int = 1) -> None:
    over = " · oversubscribed: more pairs than CPUs" if step.oversubscribed else ""
    if step.no_rate is not None:
        # Every end's ops/s would read 0 in a matrix: no rate, and why, instead.
        print(f"\n{name} · {step.pairs} pair(s) · no rate ({step.no_rate}){over}")
        noise = record_note(step.noise)
        if noise:
            print(noise)
        return
    # The step's events were said on stderr as they came (EngineWarnings).
    # Its figure first, as the summary row will give it; the matrix's total is one
    # run's, and says so: two figures that differ each name what they are.
    point = ScalingPoint.from_repeats(step.pairs, step.repeats, windows=step.windows)
    half = tables.fmt_half_width(point.summary.half_width_pct)
    runs = len(step.repeats)
    # A run with no rate is no repeat (sweep._step): said, or --repeat 3 reads as 2 quietly.
    gone = f" ({repeat - runs} with no rate left out)" if repeat > runs else ""
    print(
        f"\n{name} · {step.pairs} pair(s) · {tables.fmt_int(step.total_ops_per_s)} ops/s"
        f" {half} % from {len(point.samples)} windows of {runs} run(s){gone}, as in the summary"
        f"{over}"
    )
    shown = "the median run's" if runs > 1 else "the run's"
    print(tables.format_matrix(step.threads, total_note=f" ({shown} mean, per thread below)"))
    if step.ops and all(s.n is not None for s in step.ops.values()):
        # msgbench: each phase's rate per repeat, over the repeats this step finished
        print(tables.format_table(["phase", "total/s", "avg", "stddev", "min", "max", "repeats"],
                                  phase_table(step.ops)))  # fmt: skip
    elif step.ops:
        print(tables.format_table(["operation", "total/s", "avg/thread", "stddev", "min", "max"],
                                  format_op_stats(step.ops)))  # fmt: skip
    elif name == "sysv-lifecycle":
        print("no msgbench repeat finished in the window: use more --seconds or fewer --queues")
    if step.profile and not step.profile.na:
        print(format_profile(step.profile, n=5))
    if step.latency:
        print(f"{step.latency.note} (the median run):")
        print(latency_text.table(step.latency.pairs))
    noise = record_note(step.noise)
    if noise:
        print(noise)


def _finish(
    records: dict[str, Record], names: list[str], args: argparse.Namespace, status: int
) -> bool:
    """Print the summaries and write the files; False when a file went elsewhere."""
    for name in names:
        rec = records[name]
        for s in rec.steps:
            rec.events.extend(s.events)
        if rec.points or unrated(rec):
            print(f"\n{name} summary{' (interrupted)' if rec.interrupted else ''}")
            print(tables.format_summary(rec.points, unrated=unrated(rec)))
            costs = format_costs(rec.steps)
            if costs:
                print(f"\n{name}: where the time goes (per round = one end's round)")
                print(costs)
    if len(names) > 1 and any(records[n].steps for n in names):
        print("\nside by side")
        print(_side_by_side(records, names))
    saved = True
    for name in names:
        rec = records[name]
        outputs = []
        if args.json:
            outputs.append(("record", args.json, write_record))
        if args.csv:
            outputs.append(("CSV", args.csv, write_csv))
        for what, base, writer in outputs:
            said, ok = write_or_keep(
                _path_for(base, name, len(names)), functools.partial(_write, writer, rec), what
            )
            saved = saved and ok
            if ok and rec.interrupted:
                said += f" (interrupted after {len(rec.steps)} step(s))"
            print(f"{'' if ok else 'ipctop: '}{said}", file=sys.stderr)
    return saved


def _side_by_side(records: dict[str, Record], names: list[str]) -> str:
    counts = sorted({s.pairs for n in names for s in records[n].steps})
    headers = ["pairs"] + [f"{n} ops/s" for n in names] + [f"{n} scal %" for n in names]
    headers += [f"{n} ±95% [%]" for n in names]  # the summaries' intervals, kept beside them
    rows = []
    by = {n: {p.pairs: p for p in records[n].points} for n in names}
    none = {n: unrated(records[n]) for n in names}
    for c in counts:
        row = [str(c)]
        row += [_cell(by[n], none[n], c) for n in names]
        for n in names:
            s = scalability_pct(records[n].points, c)
            row.append("-" if s is None else f"{s:.1f}")
        for n in names:
            half = by[n][c].summary.half_width_pct if c in by[n] else None
            row.append(tables.fmt_half_width(half))
        rows.append(row)
    return tables.format_table(headers, rows, "r" * len(headers))


def _cell(points: dict[int, ScalingPoint], none: dict[int, str], pairs: int) -> str:
    if pairs in points:
        return f"{points[pairs].total_ops_per_s:,.0f}"
    return "no rate" if pairs in none else "-"


def _path_for(base: str, name: str, many: int) -> Path:
    p = Path(base)
    return p if many == 1 else p.with_name(f"{p.stem}.{name}{p.suffix or '.json'}")
