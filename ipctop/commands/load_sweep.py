"""`ipctop sweep -w hackbench --groups 1,2,4,8`: load grows, the CPU set stays.

Each repeat of a load is a fresh hackbench run (tasks made, work done, tasks
reaped), so the run is the replicate and each load is summarised once over
its repeats. Loads run in the order given, every repeat of one before the
next, as the seeds ran them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..analysis.load_scaling import PROJECT_TO, LoadPoint, RatePoint, find_collapse, find_knee
from ..engine.stalls import STALL
from ..engine.workloads.hackbench_groups import (
    FixedRun,
    check_message,
    check_transport,
    forked_by,
    group_load,
    run_fixed,
    tasks_line,
)
from ..engine.workloads.load_limits import check_load
from ..errors import UsageError
from ..output.records.record import StepUnit
from .common import cpu_text, engine_config, resolve_cpus
from .load_record import add_load, check_record_path, median_run, new_record, recording

if TYPE_CHECKING:  # the engine is imported only when rooms run
    from ..live.measure import ThreadResult

MAX_GROUPS = 100_000


def parse_loads(text: str, flag: str = "--groups") -> list[int]:
    """'1,2,4,8' -> [1, 2, 4, 8]: whole numbers from 1, each once, ascending."""
    try:
        loads = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise UsageError(f"{flag} {text!r}: give whole numbers separated by commas") from None
    if not loads or loads[0] < 1 or loads[-1] > MAX_GROUPS:
        raise UsageError(f"{flag} {text!r}: each load must be 1..{MAX_GROUPS}")
    return loads


def run(args: argparse.Namespace) -> int:
    if args.csv:
        # csvout's columns are a pair sweep's (pairs, pair, role): a load's rows do not fit.
        raise UsageError("--csv: a load sweep (--groups, --rooms) writes no CSV; --json does")
    if getattr(args, "rooms", None) is not None:
        return run_rooms(args)
    if args.workload != "hackbench":
        raise UsageError("--groups sweeps the hackbench workload (-w hackbench)")
    loads = parse_loads(args.groups)
    check_record_path(args.json)
    cpus = resolve_cpus(args.cpus)
    transport = check_transport(args.transport)
    size = args.size or 100
    loops = args.loops
    check_message(transport, size)
    # The largest load is checked before the first task of the first one starts.
    check_load(group_load(loads[-1], args.fds, args.mode, fixed=True))
    print(
        f"ipctop sweep · hackbench · {args.fds} fds · {loops} loops · {size} B · {transport} · "
        f"{args.mode} · engine native (C), {tasks_line(forked_by(args.mode))} · "
        f"CPUs {cpu_text(cpus)} · groups "
        f"{','.join(map(str, loads))} · {args.repeat} fresh run(s) per load"
    )
    print(
        f"{'groups':>6} {'tasks':>6}  {'time [s], 95 % interval':<28} {'msgs/s':>10} "
        f"{'ms/group':>9}  projection {PROJECT_TO} groups [s]"
    )
    points: list[LoadPoint] = []
    with recording(args.json) as rec:
        rec.append(
            new_record(
                "hackbench", "group", args.mode, "free", cpus, repeat=args.repeat, fds=args.fds,
                loops=loops, size=size, transport=transport,
                messages_per_group=args.fds * args.fds * loops,
            )
        )  # fmt: skip
        for g in loads:
            runs = [
                run_fixed(g, args.fds, loops, size, transport, args.mode, cpus, per_group=True)
                for _ in range(args.repeat)
            ]
            seconds = tuple(r.seconds for r in runs)
            p = LoadPoint(g, seconds, messages=g * args.fds * args.fds * loops)
            points.append(p)
            rates = [p.messages / s for s in seconds]
            per_group = args.fds * args.fds * loops
            add_load(rec[0], g, rates, _groups(runs[median_run(rates)], 2 * args.fds, per_group))
            print(_row(p, args.fds), flush=True)
    knee = find_knee(points)
    if knee is not None:
        print(knee.line("group"))
    elif len(points) >= 2 and all(p.time.low is not None for p in points):
        print(
            f"no knee shown: no load's cost per group is, interval above interval, more than "
            f"10 % over the cheapest smaller load's ({len(points)} loads)"
        )
    else:
        print("no knee judged: it needs two or more loads of two or more runs (--repeat 2)")
    if args.repeat < 2:
        print("ipctop: note: --repeat 1 gives no interval", file=sys.stderr)
    return 0


def _groups(run: FixedRun, ends: int, messages: int) -> list[StepUnit]:
    """A fixed run's groups, each at its messages over its own time (to its last task's end)."""
    return [
        StepUnit(unit=g, ends=ends, ops_per_s=messages / s if s > 0 else 0.0, cpus=list(where))
        for g, (s, where) in enumerate(zip(run.group_seconds, run.group_cpus, strict=True))
    ]


def _rooms(threads: Sequence[ThreadResult]) -> list[StepUnit]:
    """A run's rooms: each the sum of its ends' rates, as the monitor's rows."""
    by_room: dict[int, list[ThreadResult]] = {}
    for t in threads:
        by_room.setdefault(t.at_end.pair, []).append(t)
    return [
        StepUnit(
            unit=r,
            ends=len(ends),
            ops_per_s=sum(t.ops_per_s for t in ends),
            cpus=sorted({c for t in ends if (c := t.at_end.last_cpu) is not None}),
        )
        for r, ends in sorted(by_room.items())
    ]


def _row(p: LoadPoint, fds: int) -> str:
    t = p.time
    if t.low is not None and t.high is not None:
        interval = f"{t.median:.4g} [{t.low:.4g}, {t.high:.4g}] n={t.n}"
    else:
        interval = f"{t.median:.4g} (n={t.n})"
    cost = p.cost()[0] * 1e3
    proj, lo, hi = p.projection()
    span = f" [{lo:.4g}, {hi:.4g}]" if lo is not None and hi is not None else ""
    tasks = 2 * fds * p.units
    return (
        f"{p.units:>6} {tasks:>6}  {interval:<28} {p.rate:>10,.0f} {cost:>9.4g}  {proj:.4g}{span}"
    )


def run_rooms(args: argparse.Namespace) -> int:
    """chat by rooms: each repeat a fresh engine, its rate over --seconds after --warmup."""
    from ..engine.engine import Engine
    from ..engine.workloads.chat import USERS, room_load
    from ..engine.workloads.hackbench_groups import on_cpus
    from ..live.measure import measure_engine, no_rate_of
    from ..live.priority import raise_monitor

    if args.workload != "chat":
        raise UsageError("--rooms sweeps the chat workload (-w chat)")
    loads = parse_loads(args.rooms, "--rooms")
    check_record_path(args.json)
    cpus = resolve_cpus(args.cpus)
    config = engine_config(args, "chat", cpus)
    probe = Engine(config)  # validates the options before any room starts
    try:
        # The largest load's ends must fit one engine: found out now, not after the rest ran.
        probe.check_slots(loads[-1])
    finally:
        probe.counters.close()
    check_load(room_load(loads[-1], config.transport or "tcp"))
    # free: the CPU set is a mask the ends inherit, and the scheduler places them in it
    mask = cpus if args.placement == "free" else None
    # 80 runnable threads a room: at the ends' nice the sampler's readings come
    # seconds late and every window is a stall. Raised (the ends drop back to
    # nice 0 as they start), it reads on time, as the pair sweep's does.
    priority = raise_monitor()
    note = f" · {priority.note}" if priority.note else ""
    print(
        f"ipctop sweep · chat · {USERS} users a room · {config.transport or 'tcp'} · "
        f"{args.placement} · {args.mode} · engine native · CPUs {cpu_text(cpus)} · rooms "
        f"{','.join(map(str, loads))} · {args.repeat} fresh run(s) per load of "
        f"{args.seconds:g} s after {args.warmup:g} s{note}"
    )
    print(f"{'rooms':>6} {'threads':>7}  {'messages/s, 95 % interval':<36} {'per room':>10} "
          f"{'us/message':>10}")  # fmt: skip
    points: list[RatePoint] = []
    unrated: list[int] = []
    with recording(args.json) as rec:
        rec.append(
            new_record(
                "chat", "room", args.mode, args.placement, cpus, repeat=args.repeat,
                seconds=args.seconds, warmup=args.warmup, size=config.size or 100,
                transport=config.transport or "tcp",
            )
        )  # fmt: skip
        for r in loads:
            results = []
            for _ in range(args.repeat):
                with on_cpus(mask), Engine(config) as engine:
                    engine.start(r)
                    results.append(measure_engine(engine, args.seconds, args.warmup))
            # A run whose every window stalled has no rate: no replicate, never a 0.
            rated = [x for x in results if x.no_rate is None]
            why = no_rate_of(results)
            if why is not None:
                unrated.append(r)
                add_load(rec[0], r, (), _rooms(results[0].threads), no_rate=why)
                print(f"{r:>6} {4 * USERS * r:>7}  no rate ({why})", flush=True)
            else:
                rates = [x.total_ops_per_s for x in rated]
                p = RatePoint(r, tuple(rates))
                points.append(p)
                add_load(rec[0], r, rates, _rooms(rated[median_run(rates)].threads))
                _rate_row(p)
            # Why a window was left out (a late reading: the sampler starved behind the
            # rooms' threads), once per load: a rate of 0 must not read as "no messages".
            said = dict.fromkeys(ev for x in results for ev in x.events if ev.startswith(STALL))
            for ev in said:
                print(f"ipctop: {r} room(s): {ev}", file=sys.stderr)
    collapse = find_collapse(points)
    if collapse is not None:
        print(collapse.line("room"))
    elif len(points) >= 2 and args.repeat >= 2:
        print(
            "no collapse shown: no load's rate is, interval below interval, more than 10 % "
            f"under the best smaller load's ({len(points)} loads)"
        )
    else:
        print("no collapse judged: it needs two or more loads of two or more runs (--repeat 2)")
    if unrated:
        where = ", ".join(map(str, unrated))
        print(
            f"ipctop: no rate at {where} room(s): nothing measured there (exit 1)",
            file=sys.stderr,
        )
        return 1
    return 0


def _rate_row(p: RatePoint) -> None:
    from ..engine.workloads.chat import USERS

    s = p.rate
    span = f" [{s.low:,.0f}, {s.high:,.0f}]" if s.low is not None else ""
    interval = f"{s.median:,.0f}{span} n={s.n}"
    # No message delivered in the window: there is no cost per message to show.
    cost = f"{1e6 / s.median:>10.3g}" if s.median > 0 else f"{'-':>10}"
    r = p.units
    print(f"{r:>6} {4 * USERS * r:>7}  {interval:<36} {s.median / r:>10,.0f} {cost}",
          flush=True)  # fmt: skip
    if s.median <= 0:
        print(
            f"ipctop: note: {r} room(s): no window measured a message (left out as stalls, "
            "said above, or none delivered); give them longer (--seconds, --warmup)",
            file=sys.stderr,
        )
