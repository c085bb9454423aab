"""The monitor's frame with every CPU of a big box against 2 of its CPUs (issue 29).

    python bench/view_cost.py --out DIR [--pairs 64] [--record-pairs 2] [--blocks 6] [--frames 8]

Issue 29 asks that the monitor at 64 CPUs cost at most twice what it costs at
2. A frame's cost grows with what it shows: a row per CPU in the CPUs panel,
a column per CPU of /proc/interrupts behind the IPI rows, per-CPU switches.
So on one box (the lab's 64-CPU guest; any box with more than 2 CPUs) this
makes two session records with `draw_cost.py --make-record`: the same
--record-pairs pairs (sysv-msg, same core) with every allowed CPU in the run,
and with the first two only. Then, in this one process, the real app draws
them headless at 120x40, each widened to --pairs pairs as draw_cost.py does
(64 pairs are 128 ends): a side is a fresh app on one record, warmed up
(draw_cost.WARM frames, so every sparkline is full) and then --frames frames
measured as draw_cost.py measures them (the UI thread's CPU: feed, redraw,
composite). Sides run in ABBA order (2 CPUs as A, all as B), so a drift of
the box falls on both alike; one process, because in an emulated guest
starting Python over 9p costs minutes.

The unit is the block: one log ratio of its all-CPU frames to its 2-CPU
frames, and the interval is over the blocks (analysis.stats.paired_difference,
n = --blocks). Nothing else should run: the draw is one thread, and in an
emulated guest its vCPU must not share the host with the pairs' (the records
are made first, and no pairs run while frames are drawn). Wall times in a
guest are emulation; a ratio of CPU times in one guest is what it claims.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import draw_cost  # noqa: E402  (this folder)

from ipctop.analysis.stats import fmt_diff, paired_difference  # noqa: E402

DRAW = Path(__file__).resolve().parent / "draw_cost.py"


def make(path: Path, pairs: int, cpus: int, seconds: float) -> str:
    argv = [sys.executable, str(DRAW), "--make-record", str(path), "--pairs", str(pairs)]
    argv += ["--cpus", str(cpus), "--seconds", str(seconds)]
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


async def side(record: Path, pairs: int, frames: int) -> list[float]:
    """A fresh app on one record: warmed up, then `frames` frames' CPU (ms)."""
    info, samples = draw_cost.load(str(record), pairs)
    app = draw_cost.DrawApp(draw_cost.QuietSource(info), own_cpu=lambda _tids: 1.4)
    feed = draw_cost.stream(samples)
    async with app.run_test(size=draw_cost.SIZE) as pilot:
        await draw_cost.frames(app, pilot, feed, draw_cost.WARM)
        rows = await draw_cost.frames(app, pilot, feed, frames)
    return [r[0] for r in rows]


async def blocks_of(recs: dict[str, Path], args: argparse.Namespace, ncpus: int) -> list:
    blocks: list[tuple[list[float], list[float]]] = []
    for b in range(args.blocks):
        a1 = await side(recs["2"], args.pairs, args.frames)
        b1 = await side(recs["all"], args.pairs, args.frames)
        b2 = await side(recs["all"], args.pairs, args.frames)
        a2 = await side(recs["2"], args.pairs, args.frames)
        blocks.append((a1 + a2, b1 + b2))
        # After every block: a guest killed by the lab's --timeout still leaves its blocks.
        (Path(args.out) / "view-blocks.json").write_text(
            json.dumps([{"two": a, "all": b} for a, b in blocks]) + "\n"
        )
        print(
            f"block {b + 1}: 2 CPUs {statistics.median(a1 + a2):.2f} ms a frame, "
            f"{ncpus} CPUs {statistics.median(b1 + b2):.2f} (medians of {2 * args.frames})",
            flush=True,
        )
    return blocks


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="folder for the two records and the result")
    p.add_argument("--pairs", type=int, default=64, help="drawn (64: 128 ends)")
    p.add_argument("--record-pairs", type=int, default=2, help="run while recording")
    p.add_argument("--seconds", type=float, default=10.0, help="each record's run")
    p.add_argument("--blocks", type=int, default=6)
    p.add_argument("--frames", type=int, default=8, help="measured frames a side")
    p.add_argument(
        "--records",
        nargs=2,
        metavar=("TWO", "ALL"),
        help="draw these two records (e.g. brought back from a lab guest) instead of making them",
    )
    args = p.parse_args()
    ncpus = len(os.sched_getaffinity(0))
    if ncpus <= 2 and not args.records:
        print(f"view_cost: {ncpus} CPU(s) allowed here: nothing to set against 2", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.records:
        recs = {"2": Path(args.records[0]), "all": Path(args.records[1])}
    else:
        recs = {"2": out / "view-2cpu.json", "all": out / "view-all.json"}
        print(make(recs["2"], args.record_pairs, 2, args.seconds), flush=True)
        print(make(recs["all"], args.record_pairs, 0, args.seconds), flush=True)
    ncpus = len(draw_cost.load(str(recs["all"]), 1)[0].config.cpus)
    draw_cost.instrument()
    blocks = asyncio.run(blocks_of(recs, args, ncpus))
    d = paired_difference(blocks)
    ratio = 1.0 + d.diff_pct / 100.0
    low, high = 1.0 + d.low_pct / 100.0, 1.0 + d.high_pct / 100.0
    med2 = statistics.median(x for a, _ in blocks for x in a)
    medn = statistics.median(x for _, b in blocks for x in b)
    print(
        f"frame CPU, {args.pairs} pairs drawn, 120x40: 2 CPUs {med2:.2f} ms, {ncpus} CPUs "
        f"{medn:.2f} ms (medians over all frames); {ncpus}/2 = {ratio:.2f} [{low:.2f}, {high:.2f}] "
        f"({fmt_diff(d)}; n = {len(blocks)} ABBA blocks of apps, {args.frames} frames a side); "
        f"load average {os.getloadavg()[0]:.2f} at the end"
    )
    result = {
        "cpus": ncpus,
        "pairs_drawn": args.pairs,
        "record_pairs": args.record_pairs,
        "frames_per_side": args.frames,
        "blocks": [{"two": a, "all": b} for a, b in blocks],
        "ratio": ratio,
        "low": low,
        "high": high,
        "median_ms": {"two": med2, "all": medn},
        "unit": "ABBA block of fresh apps, one process",
    }
    (out / "view-cost.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
