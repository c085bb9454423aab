"""`ipctop check --load`: the optional load step, hackbench by groups.

The rest of check asks whether IPC scales with CPUs; this step asks the
seeds' other question, whether it holds as the load grows on the same CPUs.
Fixed hackbench work (20 fds, 50 loops, threads, socketpairs) at 1, 2 and 4
groups (--quick: 1 and 2), every load run once per round and the rounds
repeated, so a drift of a shared box falls on every load alike. A knee
(analysis/load_scaling.py: a cost-per-group interval above the cheapest
smaller load's, more than 10 % over it) is a warning: it is the kernel's
shape under load, which check reports, not a fault it can name.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ..analysis.load_scaling import LoadPoint, find_knee
from ..analysis.verdicts import OK, WARN, Verdict
from ..engine.workloads.hackbench_groups import run_fixed
from ..errors import ResourceError

FDS, LOOPS = 20, 50
LOADS = {"full": (1, 2, 4), "quick": (1, 2)}
ROUNDS = {"full": 5, "quick": 3}
SUBJECT = "hackbench by load"


def add_load_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--load",
        action="store_true",
        help="also run hackbench by load on the same CPUs (1, 2, 4 groups; --quick: 1, 2) "
        "and name a knee with its interval",
    )


def measure_load(say: Callable[[str], None], cpus: list[int], quick: bool) -> list[LoadPoint]:
    """Seconds per run at each load, loads interleaved round by round."""
    timing = "quick" if quick else "full"
    loads = LOADS[timing]
    say(
        f"load: hackbench {FDS} fds · {LOOPS} loops · threads · socket · groups "
        f"{','.join(map(str, loads))} · {ROUNDS[timing]} rounds"
    )
    runs: dict[int, list[float]] = {g: [] for g in loads}
    for _ in range(ROUNDS[timing]):
        for g in loads:
            runs[g].append(run_fixed(g, FDS, LOOPS, 100, "socket", "threads", cpus).seconds)
    points = [LoadPoint(g, tuple(s), messages=g * FDS * FDS * LOOPS) for g, s in runs.items()]
    for p in points:
        t = p.time
        span = f" [{t.low:.3g}, {t.high:.3g}]" if t.low is not None and t.high is not None else ""
        say(f"  {p.units} group(s): {t.median:.3g} s{span}, {p.cost()[0] * 1e3:.3g} ms/group")
    return points


def judge_load(points: list[LoadPoint]) -> Verdict:
    knee = find_knee(points)
    if knee is not None:
        return Verdict(WARN, SUBJECT, knee.line("group"))
    loads = ", ".join(str(p.units) for p in points)
    return Verdict(OK, SUBJECT, f"hackbench's cost per group held over {loads} groups")


def load_step(say: Callable[[str], None], cpus: list[int], quick: bool) -> Verdict:
    """Measure and judge; a limit too low for the step is a warning, not the check's end."""
    try:
        return judge_load(measure_load(say, cpus, quick))
    except ResourceError as exc:
        return Verdict(WARN, SUBJECT, f"load step not run: {exc}")
