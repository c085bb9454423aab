"""`ipctop run`: N pairs, one line per interval, for scripts."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from ..analysis.noise import noise_words, pair_cpus, window_noise
from ..analysis.noise import summary_line as noise_summary
from ..analysis.stats import Summary, summarize
from ..engine.engine import Engine
from ..engine.latency_pace import span_note
from ..engine.profile.window import Profile
from ..engine.sample import Sample
from ..engine.stalls import STALL_S
from ..live.engine_warnings import EngineWarnings
from ..live.measure import RunResult, measure_engine
from ..live.priority import raise_monitor
from ..output.text import latency_text
from .common import (
    MAX_PAIRS,
    add_measuring_options,
    count,
    cpu_text,
    each,
    metrics_endpoint,
    positive_float,
    publisher,
    run_config,
    start_profiler,
)
from .progress import start_pairs

if TYPE_CHECKING:
    from ..engine.config import RunConfig
    from ..output.exports.metrics import MetricsEndpoint


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_measuring_options(p)
    p.add_argument(
        "--pairs", type=count(1, MAX_PAIRS), default=1, help=f"default 1, at most {MAX_PAIRS}"
    )
    p.add_argument(
        "--groups",
        "--rooms",
        dest="pairs",
        type=count(1, MAX_PAIRS),
        help="hackbench, chat: --pairs by its name",
    )
    p.add_argument("--seconds", type=positive_float, default=10.0, help="default 10")
    p.add_argument("--interval", type=positive_float, default=0.5, help="default 0.5")
    p.add_argument(
        "--jsonl",
        action="store_true",
        help='one JSON sample per line, then one {"summary": ...} line',
    )


def run(args: argparse.Namespace) -> int:
    config = run_config(args)
    with metrics_endpoint(args) as metrics:
        return _run(args, config, list(config.cpus), metrics)


def _run(
    args: argparse.Namespace,
    config: RunConfig,
    cpus: list[int],
    metrics: MetricsEndpoint | None,
) -> int:
    # Raised before any thread exists, so the sampler inherits it and prints
    # on time when the pairs oversubscribe the CPUs; the ends drop back to 0.
    priority = raise_monitor()
    profiler = start_profiler(args, cpus)
    # With --jsonl stdout carries only JSON, so a pipe into jq never chokes.
    notes = sys.stderr if args.jsonl else sys.stdout
    # The profiler (when asked for) stops perf when the block ends, on every path.
    with Engine(config) as engine, profiler or nullcontext():
        start_pairs(engine, args.pairs)
        over = " · oversubscribed" if engine.oversubscribed else ""
        note = f" · {priority.note}" if priority.note else ""
        print(
            f"# ipctop run: {engine.describe()} · {args.pairs} pair(s) on CPUs "
            f"{cpu_text(cpus)}{over}{note}",
            file=notes,
            flush=True,
        )
        print(f"# {engine.latency_note}", file=notes, flush=True)
        pace = span_note(len(engine.ends())) if engine.timing else ""
        if pace:
            print(f"# {pace}", file=notes, flush=True)
        printer = each(
            _jsonl if args.jsonl else _line, publisher(metrics, config, engine.kind, engine)
        )
        # Where the time goes is read only when it is printed (in --jsonl samples).
        with profiler.span(engine) if profiler else nullcontext():
            result = measure_engine(
                engine, args.seconds, 0.0, args.interval, printer, detail=args.jsonl
            )
        profile = profiler.take() if profiler else None
    # No window was a rate sample: "no rate", never a total of 0 read as a collapse.
    rate = result.rate
    total = f"{rate:,.0f} ops/s" if rate is not None else f"no rate ({result.no_rate})"
    print(
        f"# total {total} over {result.seconds:.2f} s (engine {engine.kind})",
        file=notes,
        flush=True,
    )
    windows = summarize(result.windows) if len(result.windows) >= 2 else None
    if windows is not None:
        print(
            f"# windows: geometric mean {windows.figure:,.0f} ops/s, 95 % interval "
            f"[{windows.low:,.0f}, {windows.high:,.0f}], {windows.basis} x {args.interval:g} s "
            f"({windows.method}; "
            "within this run only: another run differs more)",
            file=notes,
            flush=True,
        )
    noise = noise_summary(result.timeline)
    if noise:
        print(f"# noise: {noise}", file=notes, flush=True)
    if result.latency:
        print(f"# {result.latency_note}; over the whole window:", file=notes)
        for line in latency_text.table(result.latency).splitlines():
            print(f"# {line}", file=notes)
    if profile is not None:
        _print_profile(profile, args.jsonl)
    # Read once the engine has stopped: an end that did not stop in time says so then.
    EngineWarnings().take([*engine.events, *result.events])
    failed = [t for t in result.threads if t.at_end.state not in ("running", "done")]
    stuck = result.stalls.stalled_at_end if result.stalls is not None else ()
    if stuck:
        print(
            f"ipctop: pair(s) {', '.join(map(str, stuck))} stalled: no round for the last "
            f"{STALL_S:g} s or more of the run (exit 1)",
            file=sys.stderr,
        )
    if result.no_rate is not None:
        print("ipctop: no rate: no window of the run was measured (exit 1)", file=sys.stderr)
    code = 1 if failed or stuck or result.no_rate is not None else 0
    if args.jsonl:
        summary = _summary(result, windows, engine, config, code)
        print(json.dumps({"summary": summary}), flush=True)
    return code


def _summary(
    result: RunResult, windows: Summary | None, engine: Engine, config: RunConfig, code: int
) -> dict[str, Any]:
    """The run's figures as the last line of --jsonl: what the "#" lines on stderr say."""
    return {
        "engine": engine.kind,
        "workload": config.workload,
        "pairs": result.pairs,
        "cpus": list(config.cpus),
        "oversubscribed": result.oversubscribed,
        "seconds": result.seconds,
        "total_ops_per_s": result.rate,
        "no_rate": result.no_rate,
        # Within this run only: another run differs more (the verdicts use runs).
        "windows": windows.to_dict() if windows is not None else None,
        "latency_all": result.latency_all.to_dict() if result.latency_all else None,
        "stalled_at_end": list(result.stalls.stalled_at_end) if result.stalls else [],
        "exit": code,
    }


def _print_profile(profile: Profile, jsonl: bool) -> None:
    from ..output.text.profile_table import format_profile

    if jsonl:
        print(json.dumps({"profile": profile.to_dict()}), flush=True)
    elif profile.frequency:
        # When perf cannot run, the one line at the start said why; not twice.
        print("\n".join(f"# {x}" for x in format_profile(profile).splitlines()), flush=True)


def _line(s: Sample) -> None:
    parts = [f"t={s.t:7.2f}", f"total={s.total_ops_per_s:12,.0f}"]
    for t in s.threads:
        cpu = "?" if t.last_cpu is None else t.last_cpu
        parts.append(f"{t.pair}{t.role}@{cpu}={t.ops_per_s:,.0f}")
    lat = latency_text.compact(s.latency)
    if lat:
        parts.append(lat)
    if s.stalled:
        parts.append("stalled=" + ",".join(map(str, s.stalled)))
    if s.gap:
        parts.append(f"late={s.dt:.1f}s")
    parts += noise_words(window_noise(s, pair_cpus(s)))
    print(" ".join(parts), flush=True)
    for e in s.events:
        print(f"# {e}", file=sys.stderr, flush=True)


def _jsonl(s: Sample) -> None:
    print(json.dumps(s.to_dict()), flush=True)
