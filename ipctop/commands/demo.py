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
    positive_float,
    run_config,
)
from .screen_options import add_screen_options, screen_settings


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
    add_screen_options(
        p,
        present=False,  # the story ends in presentation view by itself
        screenshots=None,
        baseline="compare against this record instead of the same-core curve the demo measures",
    )


def run(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    from ..live.sources import LiveSource
    from ..tui.demo_app import DemoApp
    from ..tui.run_app import run_app

    theme, baseline = screen_settings(args)
    if args.placement != "same":
        raise UsageError("demo: the story starts on one CPU per pair; leave --placement out")
    source = LiveSource(run_config(args), args.interval)
    return run_app(
        source,
        1,
        theme=theme,
        baseline=baseline,
        make_app=functools.partial(DemoApp, pace=args.pace),
    )
