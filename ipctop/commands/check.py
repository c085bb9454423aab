"""`ipctop check`: a verdict on a new box in about a minute (15 s with --quick).

The box facts come first, then a fixed set of short runs: sysv-msg and
sysv-sem same-core at every pair count from 1 to the CPU count (1, 2, 4, ...
N-1, N on big boxes), so a peak followed by a drop fails; 1 pair cross-core of
each; the shared queue at every CPU. Each run warms up once, then measures a
few windows and keeps the median one, so one hiccup of a noisy box does not
make the verdict; every line carries the median of its sampler intervals with
a 95 % interval. The 1-pair sysv-msg run doubles as an A/A calibration (its
intervals split into interleaved halves): the box's noise floor. The judging
lives in analysis/verdicts.py and analysis/check_curve.py (thresholds there);
the runs themselves in check_runs.py.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from ..analysis.check_curve import NoiseFloor, aa_noise_floor, judge_baselines, judge_noise
from ..analysis.readings import CheckReadings
from ..analysis.stats import TooFewWindows, summarize
from ..analysis.verdicts import FAIL, Verdict, exit_code, judge_check, overall
from ..box import BoxFacts, describe, read_box
from ..engine.config import RunConfig
from ..engine.engine import ENGINES, resolve_engine
from ..errors import RecordError, UsageError
from ..output.records.output_paths import check_output_file, write_or_keep
from ..output.records.record import NoiseFloor as RecordedFloor
from ..output.records.record import Record, Sessions, Step, unrated
from ..output.records.record_box import Box
from ..output.records.record_io import read_record, write_record
from ..output.records.spread_store import find_spread, read_spreads
from ..plain import to_plain
from .check_load import add_load_option, load_step
from .check_runs import TIMING, CheckRunner, Printer, measure_all, planned_runs
from .check_sessions import measure_sessions, remember_spread
from .common import (
    add_metrics_option,
    add_profile_option,
    count,
    cpu_text,
    metrics_endpoint,
    resolve_cpus,
    start_profiler,
)
from .progress import PlannedProgress

SCHEMA = "ipctop.check/1"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help="about 15 s instead of about a minute")
    p.add_argument("--json", action="store_true", help="print one machine-readable result")
    p.add_argument("--cpus", help="CPUs to use, e.g. 0-3,8 (default: the allowed set)")
    p.add_argument(
        "--engine", choices=ENGINES, default="auto", help="native (C) or python (fallback)"
    )
    add_metrics_option(p)
    add_profile_option(p)
    add_load_option(p)
    p.add_argument(
        "--record", metavar="FILE", help="write sysv-msg's curve and the noise floor as a record"
    )
    p.add_argument(
        "--sessions",
        type=count(2, 100),
        metavar="K",
        help="also start K separate sessions (1 pair, 3 runs each) and measure how much "
        "sessions differ beyond their runs: the spread compare --session-sd takes",
    )
    p.add_argument(
        "--baseline",
        metavar="FILE",
        help="a known-good record of the same CPU model (check --record): absolute rates "
        "against it, with intervals",
    )


def run(args: argparse.Namespace) -> int:
    if args.record:  # before the first run: a result that cannot be saved is found out now
        check_output_file(args.record, "--record")
    kind = resolve_engine(args.engine)
    cpus = resolve_cpus(args.cpus)
    box = read_box()
    baseline = _read_baseline(args.baseline, box) if args.baseline else None
    timing = TIMING["quick" if args.quick else "full"]
    say = Printer(quiet=args.json)
    say(f"ipctop check · engine {kind} · CPUs {cpu_text(cpus)}")
    for line in describe(box):
        say(line)
    say("")

    profiler = start_profiler(args, cpus)
    with (
        metrics_endpoint(args) as metrics,
        PlannedProgress("check", planned_runs(len(cpus)) * timing.seconds) as bar,
        profiler or nullcontext(),  # perf stops on every path
    ):
        runner = CheckRunner(say, kind, cpus, timing, bar, metrics, profiler)
        readings = measure_all(runner)
        load = load_step(say, cpus, args.quick) if args.load else None

    spread = None
    if args.sessions:
        seconds, warmup = (1.0, 0.3) if args.quick else (2.0, 0.5)
        spread = measure_sessions(args.sessions, cpus[:1], kind, seconds, warmup, say)
        say(remember_spread(spread, "check --sessions", cpus[:1]))
    verdicts = judge_check(box, cpus, readings)
    floor = _noise_floor(readings)
    verdicts.append(judge_noise(*floor))
    if baseline is not None:
        verdicts.extend(_against(baseline, readings))
    if load is not None:
        verdicts.append(load)
    code = exit_code(verdicts)
    if args.record:
        rec = _record(box, cpus, kind, readings, floor[0], args)
        rec.warnings = runner.warnings.lines or None
        rec.sessions = Sessions.model_validate(to_plain(spread)) if spread else None
        said, ok = write_or_keep(Path(args.record), lambda p: write_record(p, rec))
        if ok:
            say(said)
        else:  # the result lives on in the temp dir, but the run did not do what was asked
            print(f"ipctop: {said}", file=sys.stderr)
            code = max(code, 1)
    if args.json:
        result = _result(box, cpus, kind, args.quick, readings, verdicts, code)
        result["noise"] = to_plain(floor[0]) if floor[0] else None
        result["sessions"] = to_plain(spread) if spread else None  # optional
        result["warnings"] = runner.warnings.lines  # optional: what the engines warned about
        if profiler is not None:
            result["profiles"] = runner.profiles  # optional: run label -> profile
        print(json.dumps(result))
    else:
        say("")
        for v in verdicts:
            say(_mark(v) + v.line)
        if spread is not None:
            say("  " + spread.line())
        status = overall(verdicts)
        fails = sum(v.status == FAIL for v in verdicts)
        say(f"\ncheck: {status}" + (f" ({fails} failed)" if fails else ""))
    return code


def _mark(v: Verdict) -> str:
    return {"ok": "  ", "warn": "? ", "fail": "! "}[v.status]


def _noise_floor(readings: CheckReadings) -> tuple[NoiseFloor | None, str]:
    run = readings.one.get("sysv-msg")
    if run is None or run.error:
        return None, "the 1-pair sysv-msg run did not run"
    try:
        return aa_noise_floor(run.windows, run.seconds), ""
    except TooFewWindows as exc:
        return None, str(exc)


def _read_baseline(path: str, box: BoxFacts) -> Record:
    rec = read_record(path)
    theirs, mine = rec.box.cpu_model, box.cpu_model
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
    # A step with no rate has no windows to judge against.
    none = unrated(baseline)
    steps = {s.pairs: s for s in baseline.steps if s.pairs not in none}
    sd, df, no_spread = baseline_spread(baseline)
    runs = []
    for run in readings.runs():
        step = steps.get(run.pairs)
        if run.workload == cfg.workload and run.placement == "same" and step:
            runs.append((run, step.windows or step.repeats))
    if not runs:
        raise UsageError(f"--baseline {baseline.name} has no step this check measures")
    return judge_baselines(runs, baseline.name, sd, no_spread, df)


def baseline_spread(baseline: Record) -> tuple[float | None, float, str]:
    """The session spread for this check (a new session) against the baseline's: the
    one the record carries, else the one stored for this box, kernel and workload."""
    s = baseline.sessions
    if s is not None:  # the spread of a session's mean (analysis.sessions.session_term)
        sd, df = s.term()
        return sd, df, ""
    uname = os.uname()
    try:
        found = find_spread(
            read_spreads(), [(uname.nodename, uname.release)], baseline.config.workload
        )
    except RecordError as exc:
        return None, math.inf, str(exc)
    if found.spread is not None:
        return (*found.spread.term(), "")
    return (
        None,
        math.inf,
        (
            f"{found.why_not}; record the baseline with `check --sessions 5 --record`, or run "
            f"`ipctop sweep -w {baseline.config.workload} --sessions 5` once on this box"
        ),
    )


def _record(
    box: BoxFacts,
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
        Step(r.pairs, summarize(r.windows).figure, windows=list(r.windows))
        for r in runs
        if r is not None and not r.error and r.windows
    ]
    return Record(
        kind="sweep",
        box=Box.of(box),
        config=RunConfig.model_validate(
            {
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
            }
        ),
        steps=steps,
        noise=RecordedFloor.model_validate(to_plain(floor)) if floor else None,
    )


def _result(
    box: BoxFacts,
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
        "box": to_plain(box),
        "runs": [r.to_dict() for r in readings.runs()],
        "verdicts": [to_plain(v) for v in verdicts],
        "status": overall(verdicts),
        "exit_code": code,
    }
