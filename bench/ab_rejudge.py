"""Judge kept `ipctop ab --json` A/A records again with today's stop rule.

A record keeps every ABBA block, so ab's stop rule can be replayed on it:
where the rule would have stopped, and what it would have said there. A rule
that wants more blocks than the record holds gets all of them (the real run
would have gone on to its time limit, which the record's own run reached or
not). Usage: python bench/ab_rejudge.py DIR [DIR ...] (files aa-*.json; with
`--pattern 'ab-*.json'` the A/B records of bench/stat_power.py, whose calls are
detections).
"""

from __future__ import annotations

import argparse
import glob
import json
import os

from scipy.stats import beta

from ipctop.analysis.stats import NO_DIFFERENCE
from ipctop.analysis.stopping import SteinStop

Blocks = list[tuple[list[float], list[float]]]


def replay(blocks: Blocks, precision_pct: float) -> tuple[int, SteinStop]:
    """How many blocks the rule takes, and the rule (its plan) after them."""
    stop = SteinStop(precision_pct)
    for k in range(2, len(blocks) + 1):
        if stop.done(blocks[:k]):
            return k, stop
    return len(blocks), stop


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    low = float(beta.ppf(0.025, k, n - k + 1)) if k else 0.0
    high = float(beta.ppf(0.975, k + 1, n - k)) if k < n else 1.0
    return 100 * low, 100 * high


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--pattern", default="aa-*.json", help="record files in each DIR")
    args = ap.parse_args()
    paths = sorted(p for d in args.dirs for p in glob.glob(os.path.join(d, args.pattern)))
    if not paths:
        raise SystemExit(f"no {args.pattern} in {' '.join(args.dirs)}")
    old_calls = new_calls = 0
    for path in paths:
        with open(path) as f:
            ab = json.load(f)["ab"]
        blocks: Blocks = [(b["A"], b["B"]) for b in ab["blocks"]]
        used, stop = replay(blocks, float(ab["precision_pct"]))
        d = stop.difference(blocks[:used])
        old = ab["result"]["verdict"]
        old_calls += old != NO_DIFFERENCE
        new_calls += d.verdict != NO_DIFFERENCE
        print(
            f"{os.path.basename(path)}: recorded {old} after {len(blocks)} blocks; "
            f"now {d.verdict} {d.diff_pct:+.2f} % [{d.low_pct:+.2f}, {d.high_pct:+.2f}] "
            f"after {used} blocks (df {d.df:g})"
        )
    n = len(paths)
    for what, k in (("as recorded", old_calls), ("with today's rule", new_calls)):
        low, high = clopper_pearson(k, n)
        print(f"called a change {what}: {k} of {n} = {100 * k / n:.1f} % [{low:.1f}, {high:.1f}]")


if __name__ == "__main__":
    main()
