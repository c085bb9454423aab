#!/usr/bin/env python3
"""ipctop's sysv-lifecycle against msgbench in C, phase by phase, in one run.

A B B A blocks on one CPU: A is bench/ref/msgbench.c (M IPC_PRIVATE queues,
in a private IPC namespace), B is ipctop's native sysv-lifecycle with one
unit of M queues on the same CPU. Each side runs --repeats repeats per slot
(ipctop's first repeat of a slot is left out, as its start-up); a phase's rate
is M calls over that phase's time, and a slot's figure is the mean over its
repeats. Prints each phase's ipctop/C ratio per block, their median and range,
and how ipctop keyed its queues (IPC_PRIVATE in an own namespace needs root).

    python bench/msgbench_fidelity.py [--queues 16384] [--repeats 5] [--blocks 6]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ipctop.engine.engine import Engine, RunConfig, resolve_engine  # noqa: E402
from ipctop.engine.workloads.msgbench import LIFECYCLE_OPS, keys_text  # noqa: E402


def build() -> Path:
    out = HERE / "ref" / "bin" / "msgbench"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cc", "-O2", "-o", str(out), str(HERE / "ref" / "msgbench.c")], check=True)
    return out


def c_slot(binary: Path, cpu: int, m: int, repeats: int) -> list[float]:
    cmd = ["taskset", "-c", str(cpu), str(binary), str(m), str(repeats)]
    if os.geteuid() == 0 and shutil.which("unshare"):
        cmd = ["unshare", "-i", *cmd]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    rows = [[int(x) for x in line.split()] for line in r.stdout.splitlines()]
    return [statistics.fmean(m / (row[k] / 1e9) for row in rows) for k in range(len(LIFECYCLE_OPS))]


def ipctop_slot(cpu: int, m: int, repeats: int) -> tuple[list[float], str]:
    cfg = RunConfig("sysv-lifecycle", "same", "threads", (cpu,), "native", queues=m)
    with Engine(cfg) as e:
        e.start(1)
        area = e.pairs[0].res.py[0]
        deadline = time.monotonic() + 120
        while area.repeats() < 1:
            if time.monotonic() > deadline:
                raise SystemExit("ipctop's msgbench did not finish a repeat in 120 s")
            time.sleep(0.005)
        mark = e.workload.phase_mark(e.pairs)
        while area.repeats() < 1 + repeats:
            time.sleep(0.005)
        stats = e.workload.phase_stats(e.pairs, since=mark)
        keys = area.keys() or "unknown"
    return [stats[name]["avg"] for name in LIFECYCLE_OPS], keys


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queues", type=int, default=16384)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--blocks", type=int, default=6)
    args = p.parse_args()
    if resolve_engine() != "native":
        print("needs the native engine (the C extension is not built)", file=sys.stderr)
        return 2
    binary = build()
    cpu = min(os.sched_getaffinity(0))
    print(f"# load average {os.getloadavg()[0]:.1f}; {args.queues} queues, {args.repeats} repeats "
          f"per slot, {args.blocks} ABBA blocks on CPU {cpu}; engine native")  # fmt: skip
    ratios: list[list[float]] = [[] for _ in LIFECYCLE_OPS]
    rates: dict[str, list[list[float]]] = {"C": [], "ipctop": []}
    keys = ""
    for block in range(args.blocks):
        got: dict[str, list[list[float]]] = {"C": [], "ipctop": []}
        for side in ("C", "ipctop", "ipctop", "C"):
            if side == "C":
                got[side].append(c_slot(binary, cpu, args.queues, args.repeats))
            else:
                r, keys = ipctop_slot(cpu, args.queues, args.repeats)
                got[side].append(r)
        mean = {s: [statistics.fmean(v[k] for v in got[s]) for k in range(len(LIFECYCLE_OPS))]
                for s in got}  # fmt: skip
        for s in mean:
            rates[s].append(mean[s])
        line = []
        for k, name in enumerate(LIFECYCLE_OPS):
            ratios[k].append(mean["ipctop"][k] / mean["C"][k])
            line.append(f"{name} {ratios[k][-1]:.3f}")
        print(f"block {block + 1}: " + "  ".join(line), flush=True)
    print(f"# ipctop's queues: {keys_text(keys)}")
    print(f"{'phase':9s} {'C [/s]':>12s} {'ipctop [/s]':>12s}  ipctop/C median (blocks)")
    for k, name in enumerate(LIFECYCLE_OPS):
        c = statistics.median(b[k] for b in rates["C"])
        ours = statistics.median(b[k] for b in rates["ipctop"])
        rs = ratios[k]
        print(f"{name:9s} {c:>12,.0f} {ours:>12,.0f}  {statistics.median(rs):.3f} "
              f"({min(rs):.3f} .. {max(rs):.3f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
