#!/usr/bin/env python3
"""What the sampler's per-end reading costs a sample: the Python pass against the native one.

Plants every end of N pairs in a counter block as native ends leave their
slots between two readings (rounds, and a fresh answer to the last request:
CPU, time, switch counts), and times, in ABBA blocks on one thread's CPU clock:
  A: end_figures.PythonEnds.step, an end at a time in Python (the sampler's
     reading before the native pass);
  B: end_pass.NativeEnds.step, two native calls.
No end runs: this script writes the slots, so 1,024 pairs start no thread.
Prints ms of CPU a reading for each, B/A with its interval (unit: ABBA
blocks), the share of one CPU at 2 samples a second, and whether both passes
made the same figures.

    python bench/end_pass_read.py [--pairs 256,1024] [--blocks 12] [--readings 5]
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ipctop.analysis.stats import fmt_diff, paired_difference  # noqa: E402
from ipctop.engine import objects  # noqa: E402
from ipctop.engine.counters import SLOT_OFFSETS, SLOT_SIZE, CounterBlock  # noqa: E402
from ipctop.engine.end_figures import EndPass, PythonEnds  # noqa: E402
from ipctop.engine.end_launch import End  # noqa: E402
from ipctop.engine.end_pass import NativeEnds  # noqa: E402


class Plant:
    """N ends' slots as they stand at reading k: every end answered request k."""

    def __init__(self, block: CounterBlock, ends: int) -> None:
        self.block, self.ends, self.k = block, ends, 0

    def next(self) -> float:
        """Advance the ends to the next reading; its monotonic time."""
        self.k += 1
        k, buf = self.k, self.block.buf
        at = 1000.0 + 0.5 * k
        for slot in range(self.ends):
            off = slot * SLOT_SIZE
            struct.pack_into("<QQii", buf, off, 3000 * k + slot, 0, 10_000 + slot, 1)
            struct.pack_into("<I", buf, off + SLOT_OFFSETS["stats_ack"], k)
            answer = (slot % 2, int((at - 0.05) * 1e9), 300 * k + slot, 3 * k)
            struct.pack_into("<iQQQ", buf, off + SLOT_OFFSETS["cpu"], *answer)
        return at


def run(npairs: int, args: argparse.Namespace) -> None:
    n = 2 * npairs
    block = CounterBlock(n)
    ends = [End(i // 2, "AB"[i % 2], i, None, 1, tid=10_000 + i) for i in range(n)]
    pairs: list[Any] = [
        SimpleNamespace(index=i, ends=tuple(ends[2 * i : 2 * i + 2]), state="running",
                        started=990.0, active=True)
        for i in range(npairs)
    ]  # fmt: skip
    plant = Plant(block, n)

    def no_proc(ids: list[tuple[int, int]], detail: bool) -> list[Any]:
        assert not ids, "every planted end answers: no /proc read"
        return []

    ref = PythonEnds(no_proc, lambda pid, tid: None)
    new = NativeEnds(no_proc, lambda pid, tid: None, objects._native)

    def timed(reader: EndPass) -> float:
        spent = 0.0
        for _ in range(args.readings):
            now = plant.next()
            t0 = time.thread_time()
            reader.step(block.buf, ends, pairs, now, 0.5, False, 0)
            spent += time.thread_time() - t0
        return spent / args.readings * 1e3

    timed(ref), timed(new)  # each pass's first reading (every end new) left out
    blocks = []
    for _ in range(args.blocks):
        a1, b1, b2, a2 = timed(ref), timed(new), timed(new), timed(ref)
        blocks.append(([a1, a2], [b1, b2]))
    # From the same reading on, both see the same slots: their figures must agree.
    for _ in range(2):
        now = plant.next()
        a = ref.step(block.buf, ends, pairs, now, 0.5, False, 0)
        b = new.step(block.buf, ends, pairs, now, 0.5, False, 0)
    same = repr(a.threads) == repr(b.threads) and a.progress == b.progress
    block.close()
    ma = sorted(x for pa, _ in blocks for x in pa)[len(blocks)]
    mb = sorted(x for _, pb in blocks for x in pb)[len(blocks)]
    d = paired_difference(blocks)
    print(
        f"{npairs} pairs ({n} ends): Python pass {ma:.2f} ms a reading, native pass {mb:.2f} ms "
        f"(medians of {2 * len(blocks)} x {args.readings} readings); B/A {fmt_diff(d)}; "
        f"at 2 samples/s {ma / 5:.2f} % -> {mb / 5:.2f} % of one CPU; figures identical: {same}"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", default="256,1024")
    p.add_argument("--blocks", type=int, default=12)
    p.add_argument("--readings", type=int, default=5)
    args = p.parse_args()
    if objects._native is None or not hasattr(objects._native, "ends_figures"):
        print("the native end pass is not built (pip install -e .)", file=sys.stderr)
        return 2
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for npairs in (int(x) for x in args.pairs.split(",")):
        run(npairs, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
