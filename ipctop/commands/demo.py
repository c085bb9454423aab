"""`ipctop demo [--pace 8]`: a scripted story on the real engine, for a speaker.

1 pair, a pair more per step up to every CPU, cross placement against the
same-core curve as a baseline, then the verdict in presentation view. Each
step waits for a settled reading and at least --pace seconds; `n` steps on,
`space` holds the story. The pairs, the engine and the cleanup are the
monitor's own.
"""

from __future__ import annotations

import argparse
import functools

from .common import (
    add_workload_options,
    engine_config,
    positive_float,
    resolve_cpus,
    workload_names,
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_workload_options(p)
    p.add_argument(
        "--pace",
        type=positive_float,
        default=8.0,
        metavar="S",
        help="at least S seconds per step, and until its reading settles (8)",
    )
    p.add_argument("--interval", type=positive_float, default=0.5, help="sample interval (0.5)")
    p.add_argument("--theme", default=None, help="Textual theme, e.g. textual-light")
    p.add_argument(
        "--baseline",
        metavar="FILE",
        help="compare against this record instead of the same-core curve the demo measures",
    )


def run(args: argparse.Namespace) -> int:
    from textual.theme import BUILTIN_THEMES

    from ..errors import UsageError
    from ..live.baseline import load_baseline
    from ..live.sources import LiveSource
    from ..tui.demo_app import DemoApp
    from ..tui.launch import run_app

    if args.theme is not None and args.theme not in BUILTIN_THEMES:
        raise UsageError(
            f"--theme: unknown theme {args.theme!r}; choose from {', '.join(BUILTIN_THEMES)}"
        )
    if args.placement != "same":
        raise UsageError("demo: the story starts on one CPU per pair; leave --placement out")
    baseline = load_baseline(args.baseline) if args.baseline else None
    (workload,) = workload_names(args.workload)[:1]
    cpus = resolve_cpus(args.cpus)
    source = LiveSource(engine_config(args, workload, cpus), args.interval)
    return run_app(
        source,
        1,
        theme=args.theme,
        baseline=baseline,
        make_app=functools.partial(DemoApp, pace=args.pace),
    )
