#!/usr/bin/env python3
"""ipctop's chat rooms against the C reference (bench/ref/chat.c), in A B B A blocks.

A is bench/ref/bin/chat (built with `make -C bench/ref bin/chat` if missing),
B is ipctop's chat workload on the native engine (loops_chat.c), with the same
rooms, transport, message size and CPU set: both let the scheduler place
their threads within the set (the reference's --cpus mask, ipctop's free
placement under the calling thread's mask). Each slot is one fresh run of
--warmup then --seconds; a block's figure is log(B rate) - log(A rate), and
B/A comes with its 95 % interval from a t on the blocks' log ratios
(analysis/stats.paired_difference). The bar, as hackbench's: ipctop's rate
within 5 % of the reference's.

    python bench/chat_fidelity.py [--rooms 2] [--transport tcp|unix] [--cpus 0,1]
        [--seconds 5] [--warmup 1] [--blocks 6]

Figures need a quiet box.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from abba import print_verdict, run_blocks  # noqa: E402

from ipctop.box import read_box  # noqa: E402
from ipctop.cpus import format_cpu_list  # noqa: E402

REF = HERE / "ref" / "bin" / "chat"


def reference_cmd(args: argparse.Namespace, cpus: list[int]) -> list[str]:
    if not REF.exists():
        subprocess.run(["make", "-s", "-C", str(HERE / "ref"), "bin/chat"], check=True)
    return [
        str(REF), "--rooms", str(args.rooms), "--transport", args.transport,
        "--cpus", format_cpu_list(cpus), "--seconds", str(args.seconds),
        "--warmup", str(args.warmup),
    ]  # fmt: skip


def reference_slot(cmd: list[str]) -> float:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"chat reference failed ({r.returncode}): {r.stderr.strip()[:200]}")
    return float(json.loads(r.stdout)["delivered_per_s"])


def ipctop_slot(args: argparse.Namespace, cpus: list[int]) -> float:
    from ipctop.engine.config import RunConfig
    from ipctop.engine.engine import Engine
    from ipctop.engine.workloads.hackbench_groups import on_cpus
    from ipctop.live.measure import measure_engine

    config = RunConfig(
        workload="chat", placement="free", mode="threads", cpus=tuple(cpus),
        engine="native", transport=args.transport, size=args.size,
    )  # fmt: skip
    with on_cpus(cpus), Engine(config) as engine:
        engine.start(args.rooms)
        return measure_engine(engine, args.seconds, args.warmup).total_ops_per_s


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rooms", type=int, default=2)
    p.add_argument("--transport", choices=("tcp", "unix"), default="tcp")
    p.add_argument("--size", type=int, default=100)
    p.add_argument("--cpus", help="e.g. 0,1 (default: every allowed CPU)")
    p.add_argument("--seconds", type=float, default=5.0, help="measured per slot (5)")
    p.add_argument("--warmup", type=float, default=1.0, help="before each slot (1)")
    p.add_argument("--blocks", type=int, default=6, help="ABBA blocks (6)")
    args = p.parse_args()
    from ipctop.commands.common import resolve_cpus

    if args.size != 100:
        raise SystemExit("the reference sends 100-byte messages only: --size 100")
    cpus = resolve_cpus(args.cpus)
    cmd = reference_cmd(args, cpus)
    box = read_box()
    print(
        f"chat fidelity · {args.rooms} room(s) · {args.transport} · {args.size} B · CPUs "
        f"{format_cpu_list(cpus)} · {args.warmup:g} s + {args.seconds:g} s a slot · "
        f"{args.blocks} ABBA block(s)"
    )
    print(f"box: kernel {box.kernel_release} · {box.cpu_model} · {len(box.online)} CPUs online")
    print(f"A: {' '.join(cmd)}")
    print("B: ipctop chat (native, loops_chat.c), placement free")
    blocks = run_blocks(
        args.blocks,
        lambda: [reference_slot(cmd)],
        lambda: [ipctop_slot(args, cpus)],
        "reference",
        lambda rate: f"{rate:,.0f} msgs/s",
    )
    print_verdict(blocks, "ipctop/reference rate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
