#!/usr/bin/env python3
"""ipctop against a hand-written C loop, side by side in one run.

For each workload, at 1 pair and at all CPUs, runs the C reference
(bench/ref/pingpong.c, pthreads, pinned), ipctop's native engine and its
Python engine, interleaved, `--repeat` times each, and prints the ratio of
medians ipctop / reference. Target: native >= 0.95.

    python bench/fidelity.py [--seconds 3] [--repeat 3] [--workloads sysv-msg,sysv-sem]
                             [--no-python] [--no-latency]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ipctop.box import read_box  # noqa: E402
from ipctop.cpus import choose_cpus, read_topology  # noqa: E402
from ipctop.engine.config import RunConfig  # noqa: E402
from ipctop.engine.engine import resolve_engine  # noqa: E402
from ipctop.engine.workloads import WORKLOADS, make_workload  # noqa: E402
from ipctop.errors import UsageError  # noqa: E402
from ipctop.live.measure import measure  # noqa: E402

DEFAULT = "sysv-msg,sysv-sem,sysv-msg-shared"
NO_REFERENCE = ("sysv-lifecycle",)


def build_reference() -> Path:
    out = HERE / "ref" / "bin" / "pingpong"
    out.parent.mkdir(parents=True, exist_ok=True)
    src = HERE / "ref" / "pingpong.c"
    if not out.exists() or out.stat().st_mtime < src.stat().st_mtime:
        subprocess.run(["gcc", "-O2", "-pthread", "-o", str(out), str(src), "-lrt"], check=True)
    return out


def placement_for(workload: str, args) -> str:
    """spin is meaningless on one CPU (both refuse it): it runs cross-core here."""
    return "cross" if workload == "spin" and args.placement == "same" else args.placement


def run_reference(exe: Path, workload: str, pairs: int, cpus: list[int], args) -> float:
    extra = []
    if workload == "sysv-sem-multi":
        # ipctop's unit is 4 threads on one CPU; give the reference the same threads and CPUs.
        extra = ["--threads", str(4 * pairs)]
        cpus = cpus[:pairs]
    cmd = [
        str(exe),
        *extra,
        "--workload", workload,
        "--pairs", str(pairs),
        "--cpus", ",".join(map(str, cpus)),
        "--placement", placement_for(workload, args),
        "--mode", args.mode,
        "--seconds", str(args.seconds),
        "--warmup", str(args.warmup),
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return float(json.loads(out.strip().splitlines()[-1])["total_ops_per_s"])


def run_ipctop(engine: str, workload: str, pairs: int, cpus: list[int], args) -> float:
    config = RunConfig(workload, placement_for(workload, args), args.mode, tuple(cpus), engine,
                          latency=not args.no_latency)  # fmt: skip
    return measure(config, pairs, args.seconds, warmup=args.warmup).total_ops_per_s


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--workloads", default=DEFAULT, help=f"comma-separated (default {DEFAULT}); 'all'"
    )
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--warmup", type=float, default=0.5)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--placement", default="same")
    p.add_argument("--mode", default="threads")
    p.add_argument("--no-python", action="store_true", help="skip the Python engine")
    p.add_argument(
        "--no-latency",
        action="store_true",
        help="ipctop without round timing (the C loop has none)",
    )
    args = p.parse_args()

    names = list(WORKLOADS) if args.workloads == "all" else args.workloads.split(",")
    # msgbench's life-cycle rates have no ping-pong reference loop in bench/ref.
    names = [n for n in names if n not in NO_REFERENCE]
    cpus = choose_cpus(None, read_topology())
    box = read_box()
    exe = build_reference()
    engines = ["native"] if resolve_engine() == "native" else []
    if not args.no_python:
        engines.append("python")
    print(
        f"# box: {box.cpu_model} · {len(cpus)} CPUs ({os.uname().machine}) · "
        f"kernel {box.kernel_release} · Python {box.python}"
    )
    print(
        f"# {args.placement} placement · {args.mode} · {args.seconds:g} s x {args.repeat}, "
        f"medians; ratio = ipctop / C reference"
    )
    timing = "off" if args.no_latency else f"1 round in {RunConfig.latency_every} timed"
    print(f"# ipctop's latency timing: {timing} (ipctop's default: on)")
    header = f"{'workload':<18}{'pairs':>6}{'C ref ops/s':>14}"
    for e in engines:
        header += f"{e + ' ops/s':>15}{e + ' ratio':>14}"
    print(header)
    for name in names:
        for pairs in sorted({1, len(cpus)}):
            runs: dict[str, list[float]] = {"ref": [], **{e: [] for e in engines}}
            skip = {}
            for e in engines:
                try:
                    make_workload(name).check(placement_for(name, args), e)
                except UsageError as exc:
                    skip[e] = str(exc)
            try:
                for _ in range(args.repeat):  # interleaved so drift hits all alike
                    runs["ref"].append(run_reference(exe, name, pairs, cpus, args))
                    for e in engines:
                        if e not in skip:
                            runs[e].append(run_ipctop(e, name, pairs, cpus, args))
            except subprocess.CalledProcessError as exc:
                print(f"{name:<18}{pairs:>6}  reference failed: {exc.stderr.strip()}")
                continue
            ref = statistics.median(runs["ref"])
            line = f"{name:<18}{pairs:>6}{ref:>14,.0f}"
            for e in engines:
                if e in skip:
                    line += f"{'n/a':>15}{'n/a':>14}"
                    continue
                med = statistics.median(runs[e])
                line += f"{med:>15,.0f}{med / ref:>14.3f}"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
