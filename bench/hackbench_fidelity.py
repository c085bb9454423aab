#!/usr/bin/env python3
"""ipctop's hackbench against rt-tests' hackbench binary, in A B B A blocks.

A is rt-tests' `hackbench` (the Debian package rt-tests installs it), B is
ipctop's fixed-work run (native/hackbench_fixed.c) with the same groups,
fds, loops, size, transport and mode, on the same CPU set (taskset for A,
the calling thread's affinity for B: both are a mask the scheduler places
tasks within). Each slot is --runs fresh runs; a block's figure is
log(mean B time) - log(mean A time), and the ratio B/A comes with its 95 %
interval from a t on the blocks' log ratios (analysis/stats.paired_difference).
The issue's bar: ipctop's time within 5 % of hackbench's.

    python bench/hackbench_fidelity.py [--groups 10] [--fds 20] [--loops 100] [--size 100]
        [--transport socket|pipe] [--mode process|thread] [--cpus 0,1] [--runs 3] [--blocks 6]

hackbench prints its time to the millisecond: give it work of a second or
more (groups x loops) for a ratio that means something. Figures need a quiet box.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from abba import print_verdict, run_blocks  # noqa: E402

from ipctop.box import read_box  # noqa: E402
from ipctop.cpus import format_cpu_list  # noqa: E402
from ipctop.engine.workloads.hackbench_groups import forked_by, run_fixed, tasks_line  # noqa: E402

TIME = re.compile(r"^Time: ([0-9.]+)$", re.M)


def hackbench_cmd(args: argparse.Namespace, cpus: list[int]) -> list[str]:
    binary = shutil.which("hackbench")
    if binary is None:
        raise SystemExit("hackbench not found: apt-get install rt-tests")
    cmd = ["taskset", "-c", format_cpu_list(cpus), binary, "-g", str(args.groups)]
    cmd += ["-f", str(args.fds), "-l", str(args.loops), "-s", str(args.size)]
    if args.transport == "pipe":
        cmd.append("-p")
    cmd.append("-T" if args.mode == "thread" else "-P")
    return cmd


def rt_tests_slot(cmd: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        m = TIME.search(r.stdout)
        if r.returncode != 0 or m is None:
            raise SystemExit(f"hackbench failed ({r.returncode}): {r.stderr.strip()[:200]}")
        times.append(float(m.group(1)))
    return times


def ipctop_slot(args: argparse.Namespace, cpus: list[int], runs: int) -> list[float]:
    mode = "threads" if args.mode == "thread" else "processes"
    return [
        run_fixed(args.groups, args.fds, args.loops, args.size, args.transport, mode, cpus).seconds
        for _ in range(runs)
    ]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--groups", type=int, default=10)
    p.add_argument("--fds", type=int, default=20)
    p.add_argument("--loops", type=int, default=100)
    p.add_argument("--size", type=int, default=100)
    p.add_argument("--transport", choices=("socket", "pipe"), default="socket")
    p.add_argument("--mode", choices=("process", "thread"), default="process")
    p.add_argument("--cpus", help="e.g. 0,1 (default: every allowed CPU)")
    p.add_argument("--runs", type=int, default=3, help="fresh runs per slot (3)")
    p.add_argument("--blocks", type=int, default=6, help="ABBA blocks (6)")
    args = p.parse_args()
    from ipctop.commands.common import resolve_cpus

    cpus = resolve_cpus(args.cpus)
    cmd = hackbench_cmd(args, cpus)
    box = read_box()
    print(
        f"hackbench fidelity · {args.groups} groups · {args.fds} fds · {args.loops} loops · "
        f"{args.size} B · {args.transport} · {args.mode} · CPUs {format_cpu_list(cpus)} · "
        f"{args.runs} run(s) a slot · {args.blocks} ABBA block(s)"
    )
    print(f"box: kernel {box.kernel_release} · {box.cpu_model} · {len(box.online)} CPUs online")
    print(f"A: {' '.join(cmd)}")
    mode = "threads" if args.mode == "thread" else "processes"
    print(f"B: ipctop hackbench (native, hackbench_core.h; {tasks_line(forked_by(mode))})")
    print(f"load average at the start: {os.getloadavg()}")
    blocks = run_blocks(
        args.blocks,
        lambda: rt_tests_slot(cmd, args.runs),
        lambda: ipctop_slot(args, cpus, args.runs),
        "hackbench",
        lambda seconds: f"{seconds:.3f} s",
    )
    # Times, not rates: the same log-ratio arithmetic, read as B's time over A's.
    print_verdict(blocks, "ipctop/hackbench time")
    print(f"load average at the end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
