#!/usr/bin/env python3
"""The monitor's frame with every CPU of a big box against 2 of its CPUs (issue 29).

    python bench/view_cost.py --out DIR [--pairs 64] [--record-pairs 2] [--blocks 4] [--frames 12]

Issue 29 asks that the monitor at 64 CPUs cost at most twice what it costs at
2. A frame's cost grows with what it shows: a row per CPU in the CPUs panel,
a column per CPU of /proc/interrupts behind the IPI rows, per-CPU switches.
So on one box (the lab's 64-CPU guest; any box with more than 2 CPUs) this
makes two session records with `draw_cost.py --make-record`: the same
--record-pairs pairs (sysv-msg, same core) with every allowed CPU in the run,
and with the first two only. Each is then drawn at --pairs pairs (widened as
draw_cost.py does: 64 pairs are 128 ends) by the real app, headless at
120x40, in its own draw_cost.py process, --frames measured frames after its
warm-up; the processes run in ABBA order (2 CPUs as A, all as B), so a
drift of the box falls on both sides alike.

The unit is the block: one log ratio of its all-CPU frames to its 2-CPU
frames, and the interval is over the blocks (analysis.stats.paired_difference,
n = --blocks). Nothing else should run: the draw is one thread, and in an
emulated guest its vCPU must not share the host with the pairs' (the records
are made first, and no pairs run while frames are drawn). Wall times in a
guest are emulation; a ratio of CPU times in one guest is what it claims.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ipctop.analysis.stats import fmt_diff, paired_difference  # noqa: E402

DRAW = Path(__file__).resolve().parent / "draw_cost.py"


def make(path: Path, pairs: int, cpus: int, seconds: float) -> str:
    argv = [sys.executable, str(DRAW), "--make-record", str(path), "--pairs", str(pairs)]
    argv += ["--cpus", str(cpus), "--seconds", str(seconds)]
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


def draw(record: Path, pairs: int, frames: int, out: Path) -> list[float]:
    argv = [sys.executable, str(DRAW), str(record), "--pairs", str(pairs)]
    argv += ["--frames", str(frames), "--json", str(out)]
    subprocess.run(argv, check=True, capture_output=True, text=True)
    got = json.loads(out.read_text())
    return [float(x) for x in got["frames_ms"]]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="folder for the two records and the result")
    p.add_argument("--pairs", type=int, default=64, help="drawn (64: 128 ends)")
    p.add_argument("--record-pairs", type=int, default=2, help="run while recording")
    p.add_argument("--seconds", type=float, default=10.0, help="each record's run")
    p.add_argument("--blocks", type=int, default=4)
    p.add_argument("--frames", type=int, default=12, help="measured frames a process")
    args = p.parse_args()
    ncpus = len(os.sched_getaffinity(0))
    if ncpus <= 2:
        print(f"view_cost: {ncpus} CPU(s) allowed here: nothing to set against 2", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    recs = {"2": out / "view-2cpu.json", "all": out / "view-all.json"}
    print(make(recs["2"], args.record_pairs, 2, args.seconds), flush=True)
    print(make(recs["all"], args.record_pairs, 0, args.seconds), flush=True)
    blocks: list[tuple[list[float], list[float]]] = []
    frames = out / "frames.json"
    for b in range(args.blocks):
        a1 = draw(recs["2"], args.pairs, args.frames, frames)
        b1 = draw(recs["all"], args.pairs, args.frames, frames)
        b2 = draw(recs["all"], args.pairs, args.frames, frames)
        a2 = draw(recs["2"], args.pairs, args.frames, frames)
        blocks.append((a1 + a2, b1 + b2))
        print(
            f"block {b + 1}: 2 CPUs {statistics.median(a1 + a2):.2f} ms a frame, "
            f"{ncpus} CPUs {statistics.median(b1 + b2):.2f} (medians of {2 * args.frames})",
            flush=True,
        )
    d = paired_difference(blocks)
    ratio = 1.0 + d.diff_pct / 100.0
    low, high = 1.0 + d.low_pct / 100.0, 1.0 + d.high_pct / 100.0
    med2 = statistics.median(x for a, _ in blocks for x in a)
    medn = statistics.median(x for _, b in blocks for x in b)
    print(
        f"frame CPU, {args.pairs} pairs drawn, 120x40: 2 CPUs {med2:.2f} ms, {ncpus} CPUs "
        f"{medn:.2f} ms (medians over all frames); {ncpus}/2 = {ratio:.2f} [{low:.2f}, {high:.2f}] "
        f"({fmt_diff(d)}; n = {len(blocks)} ABBA blocks of processes, {args.frames} frames each); "
        f"load average {os.getloadavg()[0]:.2f} at the end"
    )
    result = {
        "cpus": ncpus,
        "pairs_drawn": args.pairs,
        "record_pairs": args.record_pairs,
        "frames_per_process": args.frames,
        "blocks": [{"two": a, "all": b} for a, b in blocks],
        "ratio": ratio,
        "low": low,
        "high": high,
        "median_ms": {"two": med2, "all": medn},
        "unit": "ABBA block of draw_cost.py processes",
    }
    (out / "view-cost.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
