#!/usr/bin/env python3
"""What sysv-lifecycle's keyed queues cost against IPC_PRIVATE, side by side in one run.

Builds bench/ref/msgget_keys.c and runs it (in a private IPC namespace when
root, so no other queue shares the id space): A B B A blocks of msgget and
IPC_RMID of M new queues each way; prints each block's keyed/private ratio
and their median with the range over blocks.

    python bench/msgget_keys.py [--queues 4095] [--blocks 8]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queues", type=int, default=4095)
    p.add_argument("--blocks", type=int, default=8)
    args = p.parse_args()
    out = HERE / "ref" / "bin" / "msgget_keys"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cc", "-O2", "-o", str(out), str(HERE / "ref" / "msgget_keys.c")], check=True)
    cmd = [str(out), str(args.queues), str(args.blocks)]
    if os.geteuid() == 0 and shutil.which("unshare"):
        cmd = ["unshare", "-i", *cmd]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr.strip(), file=sys.stderr)
        return r.returncode
    rows = [[float(x) for x in line.split()[1:]] for line in r.stdout.splitlines()[1:]]
    get = [k / p for p, k, _, _ in rows]
    rmid = [k / p for _, _, p, k in rows]
    print(f"load average {os.getloadavg()[0]:.1f}; {args.queues} queues, {len(rows)} ABBA blocks")
    for name, ratios, col in (("msgget", get, 0), ("IPC_RMID", rmid, 2)):
        private = statistics.median(row[col] for row in rows)
        keyed = statistics.median(row[col + 1] for row in rows)
        print(f"{name:8s} private {private:>11,.0f}/s  keyed {keyed:>11,.0f}/s  "
              f"keyed/private median {statistics.median(ratios):.2f} "
              f"(blocks {min(ratios):.2f}..{max(ratios):.2f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
