#!/usr/bin/env python3
"""The sampler's CPU a reading: two checkouts side by side, a process each, ABBA.

    python bench/sampler_ab.py --a /path/to/older/checkout [--b .] [--pairs 1024]
                               [--runs 4] [--readings 30] [--json FILE]

Each run is a fresh process of one checkout (its own Python code and its own
built extension, so C and Python changes are measured together) that starts
--pairs sysv-msg pairs on the first two allowed CPUs, raises itself above them
as the monitor does, lets them run 5 s, and times --readings Sampler.sample()
calls 0.5 s apart on its own thread's CPU clock. A run's figure is its median
reading. Runs go A B B A ..., so a drifting box favours neither side; B/A is
stats.paired_difference over the ABBA blocks (the run is the replicate, two of
each side a block), printed with both sides' medians and the load average.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ipctop.analysis.stats import fmt_diff, paired_difference  # noqa: E402

ONE_RUN = r"""
import json, os, statistics, sys, time
root, pairs, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, root)
import ipctop
assert ipctop.__file__.startswith(root), ipctop.__file__
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.engine.sampler import Sampler
from ipctop.live.priority import MonitorPriority
cpus = tuple(sorted(os.sched_getaffinity(0)))[:2]
kept = []  # a monitor keeps its recent samples; so does this
with Engine(RunConfig(workload="sysv-msg", placement="same", cpus=cpus)) as engine:
    engine.start(pairs)
    raised = MonitorPriority()
    tids = {e.tid for p in engine.pairs for e in p.ends}
    raised.apply(tids)
    sampler = Sampler(engine, 0.5)
    sampler.sample()
    time.sleep(5)
    load = os.getloadavg()[0]
    costs = []
    for _ in range(n):
        time.sleep(0.5)
        t0 = time.thread_time()
        kept.append(sampler.sample())
        costs.append((time.thread_time() - t0) * 1e3)
        del kept[:-20]
    sampler.close()
    raised.restore(tids)
print(json.dumps({"median_ms": statistics.median(costs), "load": load}))
"""


def one(root: str, pairs: int, readings: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", ONE_RUN, root, str(pairs), str(readings)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--a", required=True, help="the older checkout (its extension built)")
    p.add_argument("--b", default=str(ROOT), help="the newer checkout (default: this one)")
    p.add_argument("--pairs", type=int, default=1024)
    p.add_argument("--runs", type=int, default=4, help="runs of each side (even: ABBA)")
    p.add_argument("--readings", type=int, default=30)
    p.add_argument("--json", help="write every run's figures here")
    args = p.parse_args()
    if args.runs < 4 or args.runs % 2:
        p.error("--runs: an even number, at least 4 (two ABBA blocks for an interval)")
    a_root, b_root = str(Path(args.a).resolve()), str(Path(args.b).resolve())
    runs: list[tuple[str, dict]] = []
    blocks = []
    for _ in range(max(1, args.runs // 2)):
        got = {"A": [], "B": []}
        for side in "ABBA":
            r = one(a_root if side == "A" else b_root, args.pairs, args.readings)
            runs.append((side, r))
            got[side].append(r["median_ms"])
            print(f"  {side}: {r['median_ms']:.2f} ms a reading (load {r['load']:.0f})", flush=True)
        blocks.append((got["A"], got["B"]))
    a = statistics.median(x for xs, _ in blocks for x in xs)
    b = statistics.median(x for _, xs in blocks for x in xs)
    d = paired_difference(blocks)
    print(
        f"{args.pairs} pairs on 2 CPUs: A {a:.2f} ms CPU a reading, B {b:.2f} ms (medians of "
        f"{2 * len(blocks)} runs each, {args.readings} readings a run); B/A {fmt_diff(d)} "
        f"(unit: ABBA blocks of runs, n={len(blocks)}); at 2 readings/s {a / 5:.2f} % -> "
        f"{b / 5:.2f} % of one CPU"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"a": a_root, "b": b_root, "runs": runs}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
