"""`ipctop hackbench`: the seeds' fixed work, printed as rt-tests' hackbench prints it."""

from __future__ import annotations

import argparse

from ..engine.workloads.hackbench_groups import (
    DEFAULT_FDS,
    DEFAULT_LOOPS,
    DEFAULT_SIZE,
    TRANSPORTS,
    run_fixed,
)
from .common import count, cpu_text, resolve_cpus

# hackbench says process and thread; ipctop's other commands say processes and threads.
MODE_NAMES = {"process": "processes", "processes": "processes", "thread": "threads",
              "threads": "threads"}  # fmt: skip


def add_load_options(p: argparse.ArgumentParser) -> None:
    """What a hackbench run is, beside its groups (hackbench's own option names)."""
    p.add_argument("--fds", "-f", type=count(1, 1024), default=DEFAULT_FDS,
                   help=f"senders and receivers per group (default {DEFAULT_FDS})")  # fmt: skip
    p.add_argument("--loops", "-l", type=count(1, 10**9), default=DEFAULT_LOOPS,
                   help=f"messages each sender writes to each receiver ({DEFAULT_LOOPS})")  # fmt: skip
    p.add_argument("--size", "-s", type=count(1, 1 << 24), default=DEFAULT_SIZE,
                   help=f"bytes per message (default {DEFAULT_SIZE})")  # fmt: skip
    p.add_argument("--transport", choices=TRANSPORTS, default="socket",
                   help="socket (a unix socketpair per receiver, the default) or pipe")  # fmt: skip
    p.add_argument("--mode", choices=sorted(MODE_NAMES), default="process",
                   help="process (hackbench's default) or thread")  # fmt: skip
    p.add_argument("--cpus", help="CPUs the tasks may run on, e.g. 0-3 (default: the allowed set)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--groups", "-g", type=count(1, 100_000), default=10,
                   help="groups of 2 x --fds tasks (default 10, as hackbench)")  # fmt: skip
    add_load_options(p)


def run(args: argparse.Namespace) -> int:
    cpus = resolve_cpus(args.cpus)
    mode = MODE_NAMES[args.mode]
    word = "process" if mode == "processes" else "threaded"  # hackbench's own words
    tasks = args.groups * 2 * args.fds
    print(
        f"Running in {word} mode with {args.groups} groups using {2 * args.fds} file "
        f"descriptors each (== {tasks} tasks)"
    )
    print(f"Each sender will pass {args.loops} messages of {args.size} bytes")
    run = run_fixed(args.groups, args.fds, args.loops, args.size, args.transport, mode, cpus)
    print(f"Time: {run.seconds:.3f}")
    print(
        f"# ipctop hackbench · {args.transport} · CPUs {cpu_text(cpus)} · engine native (C), "
        f"{run.tasks_line}"
    )
    return 0
