#!/usr/bin/env python3
"""What one sample asks of the kernel: strace on the sampling thread alone.

Starts --pairs sysv-sem pairs (default 256: 512 ends) spread over every
allowed CPU, as bench/sampler_scale.py does, and takes --samples samples
0.5 s apart on a thread of their own while `strace -p` follows that thread
only (not the ends, not the interpreter's start): first with the sampler of
7125c1b (sampler_scale.py's Before), then with today's, each under an strace
of its own. Prints, per sample, the calls strace -c counted by name and every
file opened by path.

    python bench/sampler_files.py [--pairs 256] [--samples 20]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sampler_scale import Before  # noqa: E402  (this folder: the script's own)

from ipctop.engine.config import RunConfig  # noqa: E402
from ipctop.engine.engine import Engine, resolve_engine  # noqa: E402
from ipctop.engine.sampler import Sampler  # noqa: E402

_CALL = re.compile(r"^(\w+)\(")
_OPEN = re.compile(r'^open(?:at)?\((?:AT_FDCWD, )?"([^"]+)"')
_ROW = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$")


def traced(sampler: Sampler, samples: int, out: Path) -> str:
    """Take `samples` samples on a new thread under `strace -C -p` of that
    thread; strace's output (the calls, then its summary) goes to `out`."""
    ready, go, done = threading.Event(), threading.Event(), threading.Event()
    tid: list[int] = []

    def run() -> None:
        tid.append(threading.get_native_id())
        ready.set()
        go.wait()
        for _ in range(samples):
            time.sleep(0.5)
            sampler.sample()
        done.set()

    t = threading.Thread(target=run, name="sampler-files")
    t.start()
    ready.wait()
    strace = subprocess.Popen(
        ["strace", "-C", "-qq", "-p", str(tid[0]), "-o", str(out)],
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)  # attached (strace says nothing when it is: -qq)
    go.set()
    done.wait()
    strace.send_signal(signal.SIGINT)
    _, err = strace.communicate(timeout=30)
    t.join()
    return err


def per_sample(out: Path) -> tuple[Counter[str], Counter[str], list[str]]:
    """Calls by name (strace's summary), opens by path, and the summary's lines."""
    calls: Counter[str] = Counter()
    opens: Counter[str] = Counter()
    summary: list[str] = []
    in_summary = False
    for line in out.read_text().splitlines():
        if line.startswith("% time"):
            in_summary = True
        if in_summary:
            summary.append(line)
            row = _ROW.match(line)
            if row and row.group(2) != "total":
                calls[row.group(2)] += int(row.group(1))
            continue
        m = _OPEN.match(line)
        if m:
            opens[m.group(1)] += 1
    return calls, opens, summary


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", type=int, default=256)
    p.add_argument("--samples", type=int, default=20)
    args = p.parse_args()
    cpus = tuple(sorted(os.sched_getaffinity(0)))
    kind = resolve_engine("native")
    config = RunConfig(workload="sysv-sem", placement="free", cpus=cpus, engine=kind)
    with Engine(config) as engine, tempfile.TemporaryDirectory() as tmp:
        engine.start(args.pairs)
        load = os.getloadavg()[0]
        print(f"engine {kind}; {len(cpus)} CPUs; {2 * args.pairs} ends; load {load:.1f}")
        for name, sampler in (("7125c1b", Before(engine, 0.5)), ("today", Sampler(engine, 0.5))):
            sampler.sample()
            out = Path(tmp) / f"{name}.strace"
            err = traced(sampler, args.samples, out)
            sampler.close()
            if err.strip():
                print(f"strace said: {err.strip()}")
            calls, opens, summary = per_sample(out)
            n = args.samples
            print(f"\n{name}: per sample (n = {n} samples, 0.5 s apart, strace -C -p the thread;")
            print("  clock_nanosleep is the bench's own sleep between samples)")
            print("  calls: " + ", ".join(f"{c} {k / n:g}" for c, k in calls.most_common()))
            print("  opens: " + ", ".join(f"{f} {k / n:g}" for f, k in opens.most_common()))
            print("  strace's summary over the whole run:")
            print("\n".join("    " + line for line in summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
