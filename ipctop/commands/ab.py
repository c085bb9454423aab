"""`ipctop ab`: two configurations interleaved on one box, in ABBA order.

    ipctop ab -w sysv-sem --pairs 2 --a '--placement same' --b '--placement cross'
    ipctop ab --a-cmd 'sysctl -w kernel.x=0' --b-cmd 'sysctl -w kernel.x=1' \\
              --restore-cmd 'sysctl -w kernel.x=1'

A and B are two option sets over the shared ones, or one configuration with a
shell command run before each A slot and each B slot to flip a knob. Slots
run A B B A, A B B A, ...: a block of four cancels a linear drift of the box,
so B/A is judged from one log ratio per block (analysis.stats.paired_difference).
It stops after the block count a pilot of analysis.stopping.PILOT_BLOCKS asks
for to know B/A to ±--precision % (Stein's two-stage procedure: the data after
the pilot never decide when to stop, so the A/A rate stays at 5 %), or at
--max-seconds, which does not look at the data either.
--restore-cmd runs on every way out, a signal included; a failing hook stops
the run, restores, shows the hook's stderr and exits 1. A stalled window
(engine/stalls.py) is in no block for either metric; the run says how many.
"""

from __future__ import annotations

import argparse
import math
import shlex
import subprocess
import sys
import time
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

from ..analysis import ab_latency
from ..analysis.stats import (
    NO_DIFFERENCE,
    WINDOW_S,
    Difference,
    TooFewWindows,
    block_log_ratios,
    fmt_diff,
    summarize,
)
from ..analysis.stopping import SteinStop
from ..box import read_box
from ..engine.config import RunConfig
from ..engine.costs import Costs, merge
from ..engine.engine import Engine, resolve_engine
from ..engine.outside_cpu import OutsideCpu
from ..engine.profile.span import SpanProfiler
from ..errors import IpctopError, UsageError
from ..live.ab_busy import BUSY_VERDICT, BusyNote, busy_note
from ..live.ab_live import ORDER  # the TUI's A/B (key a) shares it
from ..live.engine_warnings import EngineWarnings
from ..live.measure import RunResult, cpu_rates, measure_engine
from ..output.records.ab_record import ab_record
from ..output.records.output_paths import check_output_file, write_or_keep
from ..output.records.record_ab import AbLatency
from ..output.records.record_box import Box
from ..output.records.record_io import write_record
from ..output.text.ab_latency_text import format_ab_latency
from ..output.text.ab_stalls import ab_stalls, stalls_line
from ..output.text.profile_table import format_delta
from ..signals import deferred
from .common import (
    MAX_PAIRS,
    add_profile_option,
    add_workload_options,
    count,
    cpu_text,
    non_negative_float,
    positive_float,
    run_config,
    start_profiler,
)
from .progress import PlannedProgress


class HookFailed(IpctopError):
    """A --a-cmd/--b-cmd/--restore-cmd exited non-zero (exit 1)."""


def precision(text: str) -> float:
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"--precision must be above 0 %, not {text!r}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_workload_options(p)
    p.add_argument("--pairs", "--groups", "--rooms", type=count(1, MAX_PAIRS), default=1,
                   help=f"default 1, at most {MAX_PAIRS} (--groups, --rooms: hackbench's and "
                   "chat's name for it)")  # fmt: skip
    p.add_argument("--a", default="", metavar="'OPTIONS'", help="A's options over the shared ones")
    p.add_argument("--b", default="", metavar="'OPTIONS'", help="B's options over the shared ones")
    p.add_argument("--a-cmd", metavar="CMD", help="shell command run before each A slot")
    p.add_argument("--b-cmd", metavar="CMD", help="shell command run before each B slot")
    p.add_argument("--restore-cmd", metavar="CMD", help="run on every exit path, signals included")
    p.add_argument(
        "--precision",
        type=precision,
        default=1.0,
        metavar="PCT",
        help="stop when B/A is known to ±PCT %% (95 %% interval; default 1)",
    )
    # 120: enough ABBA blocks at the default slots to see a 5 % change on a quiet box
    # (bench/stat_power.py; the figures: BENCHMARKS.md, "Power and false alarms").
    p.add_argument("--max-seconds", type=positive_float, default=120.0, help="default 120")
    # Short slots: the closer A and B are in time, the more of the box's drift a
    # block cancels (bench/stat_power.py measured these defaults).
    p.add_argument("--window", type=positive_float, default=0.5, help="measured per slot (0.5 s)")
    p.add_argument(
        "--settle", type=non_negative_float, default=0.2, help="after each switch (0.2 s)"
    )
    p.add_argument(
        "--metric",
        choices=("ops", "cpu"),
        default="ops",
        help="ops: ops/s (default); cpu: rounds per CPU-second of the ends, which a "
        "loaded box's stolen time does not move (a cost per round, not a wait)",
    )
    add_profile_option(p)
    p.add_argument("--json", metavar="FILE", help="write the record (compare and replay read it)")
    p.add_argument("--quiet", "-q", action="store_true", help="only the result")


class _OptionSetParser(argparse.ArgumentParser):
    """Parses one --a/--b value; a bad option is a UsageError (one line, exit 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def option_set(args: argparse.Namespace, flag: str, text: str) -> tuple[RunConfig, int | None]:
    """The shared options with `text` (e.g. '--placement cross') on top."""
    sub = _OptionSetParser(prog=f"ipctop ab {flag}", add_help=False)
    add_workload_options(sub)
    sub.add_argument("--pairs", "--groups", "--rooms", dest="pairs", type=count(1, MAX_PAIRS))
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"{flag} {text!r}: {exc}") from None
    ns = sub.parse_args(tokens, namespace=argparse.Namespace(**vars(args)))
    config = run_config(ns)
    Engine(config).counters.close()  # validates workload x placement x engine now
    return config, ns.pairs


# One ABBA block: A's windows and B's.
Blocks = tuple[list[float], list[float]]
# analysis.ab_latency.Block: each slot's percentiles, by side then figure.
LatBlock = dict[str, dict[str, list[float]]]


@dataclass
class Side:
    name: str  # "A" or "B"
    config: RunConfig
    pairs: int
    options: str
    cmd: str | None
    windows: list[float]
    latency_note: str = ""


def run_hook(flag: str, cmd: str | None) -> None:
    if not cmd:
        return
    done = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if done.returncode != 0:
        err = done.stderr.strip() or "(no stderr)"
        raise HookFailed(f"{flag} {cmd!r} failed with exit {done.returncode}: {err}")


def run(args: argparse.Namespace) -> int:
    if args.json:  # before the first pair: a result that cannot be saved is found out now
        check_output_file(args.json, "--json")
    sides = {}
    for name in "AB":
        config, pairs = option_set(args, f"--{name.lower()}", getattr(args, name.lower()))
        sides[name] = Side(
            name,
            config,
            pairs or args.pairs,
            getattr(args, name.lower()),
            getattr(args, f"{name.lower()}_cmd"),
            [],
        )
    live = sides["A"].config == sides["B"].config and sides["A"].pairs == sides["B"].pairs
    live = live and bool(sides["A"].cmd or sides["B"].cmd)
    kind = resolve_engine(sides["A"].config.engine)
    if not args.quiet:
        print(_header(sides, kind, args, live), flush=True)
    cpus = sorted({c for s in sides.values() for c in s.config.cpus})
    profiler = start_profiler(args, cpus)
    said = EngineWarnings()
    outside = OutsideCpu()
    try:
        with profiler or nullcontext():  # perf stops on every path
            stop = SteinStop(args.precision)
            blocks, lat_blocks, results, elapsed = _interleave(
                sides, args, live, said, stop, profiler
            )
            profiles = {n: profiler.take(n) for n in "AB"} if profiler else None
    finally:
        _restore(args.restore_cmd)
    a, b = sides["A"], sides["B"]
    stalls = ab_stalls([(n, r.stalls) for n, r in results], blocks)  # said, recorded
    rated = len(block_log_ratios(blocks))  # a block whose side kept no window gave none
    try:
        d = stop.difference(blocks)
    except TooFewWindows:
        left = f", {rated} with a window kept on both sides" if rated < len(blocks) else ""
        raise UsageError(
            f"--max-seconds {args.max_seconds:g} allowed {len(blocks)} ABBA block(s) of "
            f"{elapsed / max(len(blocks), 1):.1f} s{left}; an interval needs at least 2"
        ) from None
    busy = busy_note(outside.pct(), args.metric)
    print(_result_line(d, rated, elapsed, args, stop, busy))
    if stalls is not None:
        print(stalls_line(stalls, len(blocks)))
    for s in (a, b):
        print(f"  {s.name}: {_summary_text(s.windows, unit(args))}")
    print(_latency_text(lat_blocks, sides))
    costs = {n: _side_costs(results, n) for n in "AB"}
    if profiles is not None:
        labels = (f"A ({_what(a)})", f"B ({_what(b)})")
        print(format_delta(labels, profiles["A"], profiles["B"], costs["A"], costs["B"]))
    if args.json:
        rec = ab_record(
            Box.of(read_box()), sides, blocks, results, d, args, kind, elapsed,
            latency=_latency_record(lat_blocks, sides), profiles=profiles, costs=costs,
            outside_pct=busy.outside_pct, not_judged=busy.not_judged, stalls=stalls,
        )  # fmt: skip
        rec.warnings = said.lines or None
        note, ok = write_or_keep(Path(args.json), lambda p: write_record(p, rec))
        print(f"{'' if ok else 'ipctop: '}{note}", file=sys.stderr)
        return 0 if ok else 1
    return 0


def _interleave(
    sides: dict[str, Side],
    args: argparse.Namespace,
    live: bool,
    said: EngineWarnings,
    stop: SteinStop,
    profiler: SpanProfiler | None = None,
) -> tuple[list[Blocks], list[LatBlock], list[tuple[str, RunResult]], float]:
    """Slots in ABBA order until the stop rule's block count or time is up.

    Each side's engine is opened once (objects, reaper); a slot adds its pairs,
    measures and removes them, which takes milliseconds where stopping an
    engine takes up to a second. With hooks and one setting, one engine runs
    throughout and the hooks flip the knob between slots."""
    blocks: list[Blocks] = []
    lat_blocks: list[LatBlock] = []
    results: list[tuple[str, RunResult]] = []
    t0 = time.monotonic()
    # The plan is the time allowed; a run that reaches its precision ends early.
    with ExitStack() as stack:
        bar = stack.enter_context(PlannedProgress("ab", args.max_seconds))
        engines = {}
        for name in "A" if live else "AB":
            engines[name] = stack.enter_context(Engine(sides[name].config))
            engines[name].start(sides[name].pairs if live else 0)
        if live:
            engines["B"] = engines["A"]
        while True:
            block_start = time.monotonic()
            got: dict[str, list[float]] = {"A": [], "B": []}
            lat = {"A": ab_latency.empty_side(), "B": ab_latency.empty_side()}
            for name in ORDER:
                side = sides[name]
                run_hook(f"--{name.lower()}-cmd", side.cmd)
                bar.begin(args.window + args.settle, f"block {len(blocks) + 1} · {name}")
                r = _slot(side, args, engines[name], live, profiler)
                bar.done()
                results.append((name, r))
                got[name].extend(r.windows)
                side.windows.extend(r.windows)
                side.latency_note = r.latency_note
                for key, value in ab_latency.slot_figures(r.latency_all).items():
                    lat[name][key].append(value)
            blocks.append((got["A"], got["B"]))
            lat_blocks.append(lat)
            now = time.monotonic()
            d = stop.difference(blocks) if len(blocks) >= 2 else None
            if not args.quiet:
                print(_block_line(len(blocks), got, d, now - t0, unit(args)), flush=True)
            if stop.done(blocks):
                break
            if now - t0 + (now - block_start) > args.max_seconds:
                break
    # Read once the engines have stopped: an end that did not stop in time says so then.
    said.take([e for engine in dict.fromkeys(engines.values()) for e in engine.events])
    said.take([e for _, r in results for e in r.events])
    return blocks, lat_blocks, results, time.monotonic() - t0


def _slot(
    side: Side,
    args: argparse.Namespace,
    engine: Engine,
    live: bool,
    profiler: SpanProfiler | None = None,
) -> RunResult:
    # The span closes while the slot's pairs still exist: it reads their threads then.
    span = profiler.span(engine, side.name) if profiler else nullcontext()
    if live:
        with span:
            return _measure(engine, args)
    try:
        # In bulk, each pair whole by itself: a signal stops the start after the pair
        # being made, not after all of them (seconds at 150 pairs on a loaded box).
        engine.add_pairs(side.pairs)
        with span:
            return _measure(engine, args)
    finally:
        engine.remove_all_pairs()


def _measure(engine: Engine, args: argparse.Namespace) -> RunResult:
    interval = min(WINDOW_S, args.window)
    cpu = args.metric == "cpu"
    # Where the time goes is read for --metric cpu, and for the profile's counters.
    detail = cpu or args.profile
    r = measure_engine(engine, args.window, args.settle, interval, detail=detail)
    if not cpu:
        return r
    # The windows ops/s keeps, stalled ones left out alike (the sampler's interval is
    # `interval`: the window is never shorter).
    return replace(r, windows=cpu_rates(r.timeline, interval, r.stalls))


def _side_costs(results: list[tuple[str, RunResult]], name: str) -> Costs | None:
    """One side's per-round counters over all its slots (the delta's counter table)."""
    return merge([r.costs for side, r in results if side == name and r.costs is not None])


def _restore(cmd: str | None) -> None:
    if not cmd:
        return
    # A signal raised inside subprocess.run would kill the restore and leave the knob
    # changed: it waits until the command has finished, then stops the run.
    with deferred():
        done = subprocess.run(cmd, shell=True, capture_output=True, text=True)
        if done.returncode != 0:
            err = done.stderr.strip() or "(no stderr)"
            print(f"ipctop: --restore-cmd {cmd!r} failed with exit {done.returncode}: {err}",
                  file=sys.stderr)  # fmt: skip


def _what(s: Side) -> str:
    parts = [p for p in (s.options, f"cmd {s.cmd!r}" if s.cmd else "") if p]
    return " ".join(parts) or "(the shared options)"


def _header(sides: dict[str, Side], kind: str, args: argparse.Namespace, live: bool) -> str:
    a = sides["A"]
    what = _what
    how = "one engine, hooks between slots" if live else "an engine per side, pairs per slot"
    return (
        f"ipctop ab · A: {what(a)} · B: {what(sides['B'])} · {a.config.workload} · "
        f"{a.pairs} pair(s) · engine {kind} · CPUs {cpu_text(list(a.config.cpus))} · "
        f"{ORDER} slots of {args.settle:g} s settle + {args.window:g} s · {how}"
    )


def unit(args: argparse.Namespace) -> str:
    return "rounds/CPU-s" if args.metric == "cpu" else "ops/s"


def _block_line(
    n: int, got: dict[str, list[float]], d: Difference | None, t: float, unit: str
) -> str:
    a, b = (f"{sum(xs) / len(xs):,.0f}" if xs else "-" for xs in (got["A"], got["B"]))
    tail = f" · B/A {fmt_diff(d)} after {n} blocks" if d else ""
    return f"block {n} ({t:.0f} s): A {a}  B {b} {unit}{tail}"


def _result_line(
    d: Difference,
    n: int,
    elapsed: float,
    args: argparse.Namespace,
    stop: SteinStop,
    busy: BusyNote | None = None,
) -> str:
    planned = stop.plan is not None and n >= stop.plan.blocks
    if stop.reached:
        why = "the planned blocks done"
    elif planned:
        why = "time up: all blocks spread more than the pilot's"
    else:
        why = "time up"
    verdict = BUSY_VERDICT if busy and busy.not_judged else d.verdict
    line = (
        f"B/A: {fmt_diff(d)} · {verdict} · {d.test}, n={n} blocks "
        f"({n * len(ORDER)} slots), {elapsed:.0f} s ({why}; ±{d.half_width_pct:.1f} %)"
        f"\n  stop rule: {stop.describe()}"
    )
    for note in d.notes:  # which arm made the interval, when it was not the blocks' own
        line += f"\n  {note}"
    if busy is not None and busy.outside_pct is not None:
        line += f"\n  other processes used {busy.outside_pct:.0f} % of a CPU meanwhile"
    if busy is not None and busy.not_judged:
        return line + f"\n  {busy.not_judged}"
    if d.verdict == NO_DIFFERENCE:
        # What "none shown" is worth: a change inside the half-width could not be seen.
        line += (
            f"\n  this run could not tell a change under about ±{d.half_width_pct:.1f} % from noise"
        )
    return line


def _latency_text(lat_blocks: list[LatBlock], sides: dict[str, Side]) -> str:
    table = format_ab_latency(lat_blocks)
    a, b = sides["A"].latency_note, sides["B"].latency_note
    notes = a if a == b else f"A: {a} · B: {b}"
    if table is None:
        # A note already says "latency n/a (why)" or "latency off": it is the line.
        return notes if notes.startswith("latency") else f"latency n/a ({notes})"
    return f"{table}\n  {notes}"


def _latency_record(lat_blocks: list[LatBlock], sides: dict[str, Side]) -> AbLatency:
    diffs = ab_latency.differences(lat_blocks)
    notes = {s.name: s.latency_note for s in sides.values()}
    result = {k: {**d.to_dict(), "verdict": ab_latency.verdict(d)} for k, d in diffs.items()}
    # blocks: per block and side, each slot's percentile in ns
    return AbLatency.model_validate({"notes": notes, "blocks": lat_blocks, "result": result})


def _summary_text(windows: list[float], unit: str) -> str:
    if len(windows) < 2:
        return f"{len(windows)} window(s)"
    s = summarize(windows)
    return (
        f"geometric mean {s.figure:,.0f} {unit} [{s.low:,.0f}, {s.high:,.0f}] {s.basis} "
        "(within-run noise only; B/A rests on the blocks)"
    )
