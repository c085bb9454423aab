"""Soak: add and remove pairs and switch workloads many times, then count leaks.

    python -m ipctop.soak --cycles 1000 [--second-monitor 10 --serve-killed 10]

Exits 1 if any SysV object, POSIX queue, file descriptor, thread or child
process outlived the cycles, or a process case (soak/soak_cases.py: a second
monitor beside a first, `ipctop serve` SIGKILLed with a browser connected)
went wrong. The test suite runs 50 cycles and a few of each case.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import threading
from dataclasses import dataclass
from typing import TextIO

import psutil

from ..cpus import choose_cpus, read_topology
from ..engine.config import RunConfig
from ..engine.engine import Engine
from ..engine.reaper import live_objects, tag_of
from ..engine.workloads import WORKLOADS, make_workload
from ..errors import UsageError


@dataclass(frozen=True)
class Census:
    objects: int
    queues: int
    fds: int
    threads: int
    children: int

    def leaks_since(self, before: Census) -> list[str]:
        return [
            f"{name}: {getattr(before, name)} -> {getattr(self, name)}"
            for name in ("objects", "queues", "fds", "threads", "children")
            if getattr(self, name) > getattr(before, name)
        ]


def census() -> Census:
    me = psutil.Process()
    mq = os.listdir("/dev/mqueue") if os.path.isdir("/dev/mqueue") else []
    return Census(
        objects=sum(1 for _, _, key, _ in live_objects() if tag_of(key) is not None),
        queues=sum(1 for name in mq if name.startswith("ipctop")),
        fds=len(os.listdir("/proc/self/fd")),
        threads=threading.active_count(),
        children=len([c for c in me.children(recursive=True) if c.status() != "zombie"]),
    )


def runnable(mode: str) -> list[str]:
    out = []
    for name in WORKLOADS:
        try:
            make_workload(name).check("same", "native")
        except UsageError:
            continue
        out.append(name)
    return out


def soak(cycles: int, cpus: list[int], seed: int = 1, out: TextIO = sys.stdout) -> list[str]:
    rng = random.Random(seed)
    before = census()
    modes = ("threads", "processes")
    engine: Engine | None = None
    try:
        for i in range(cycles):
            if engine is None or i % 10 == 0:  # switch workload and mode
                if engine is not None:
                    engine.stop()
                mode = rng.choice(modes)
                name = rng.choice(runnable(mode))
                engine = Engine(RunConfig(name, "same", mode, tuple(cpus)))
                engine.start(1)
            if rng.random() < 0.5 or not engine.pairs:
                engine.add_pair()
            else:
                engine.remove_pair()
            if (i + 1) % 100 == 0:
                print(f"{i + 1} cycles", file=out, flush=True)
    finally:
        if engine is not None:
            engine.stop()
    return census().leaks_since(before)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="add/remove/switch soak with a leak census")
    p.add_argument("--cycles", type=int, default=1000)
    p.add_argument("--cpus", default=None)
    p.add_argument("--second-monitor", type=int, default=0, metavar="N",
                   help="N times: a second monitor starts beside a first and quits")  # fmt: skip
    p.add_argument("--serve-killed", type=int, default=0, metavar="N",
                   help="N times: SIGKILL of `ipctop serve` with a browser connected")  # fmt: skip
    args = p.parse_args(argv)
    cpus = choose_cpus(args.cpus, read_topology())
    before = census()
    leaks = soak(args.cycles, cpus) if args.cycles else []
    problems = []
    if args.second_monitor or args.serve_killed:
        from .soak_cases import second_monitor, serve_killed

        problems += second_monitor(args.second_monitor, cpus) if args.second_monitor else []
        problems += serve_killed(args.serve_killed) if args.serve_killed else []
        leaks = census().leaks_since(before)
    for problem in problems:
        print(f"FAILED {problem}")
    for leak in leaks:
        print(f"LEAK {leak}")
    print("no leaks" if not leaks else f"{len(leaks)} kind(s) of leak")
    return 1 if leaks or problems else 0


if __name__ == "__main__":
    sys.exit(main())
