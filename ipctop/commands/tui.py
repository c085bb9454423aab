"""The live monitor (default command): `ipctop`, `ipctop --pairs 2`, `ipctop tui ...`."""

from __future__ import annotations

import argparse

from .common import (
    MAX_PAIRS,
    add_metrics_option,
    add_workload_options,
    count,
    metrics_endpoint,
    positive_float,
    run_config,
)
from .screen_options import add_screen_options, screen_settings


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_monitor_arguments(p)
    add_metrics_option(p)


def add_monitor_arguments(p: argparse.ArgumentParser) -> None:
    """The monitor's options, shared with `serve` (which has no --metrics of its own)."""
    add_workload_options(p)
    p.add_argument(
        "--pairs",
        "--groups",
        "--rooms",
        type=count(0, MAX_PAIRS),
        default=1,
        help=f"start with N pairs (1, at most {MAX_PAIRS}); hackbench's groups, chat's rooms",
    )
    p.add_argument("--interval", type=positive_float, default=0.5, help="sample interval (0.5)")
    p.add_argument(
        "--sweep-step",
        type=positive_float,
        default=5.0,
        metavar="K",
        help="auto-sweep (key s) adds a pair every K seconds (5)",
    )
    add_screen_options(p, screenshots="SVG screenshots and key R records")
    p.add_argument("--record", metavar="FILE", help="record the session from the start (key R)")


def run(args: argparse.Namespace) -> int:
    """Check every option before any pair starts (a bad one is one line and exit 2)."""
    from ..live.metrics_feed import MetricsFeed
    from ..live.sources import LiveSource
    from ..output.records.output_paths import check_output_file
    from ..tui.run_app import run_app
    from .progress import start_bar

    theme, baseline = screen_settings(args)
    record = getattr(args, "record", None)
    if record:
        check_output_file(record, "--record")
    config = run_config(args)
    with metrics_endpoint(args) as metrics:  # before any pair: a port in use starts nothing
        source = LiveSource(config, args.interval)
        # drawn before the screen takes the terminal
        source.engine.start_progress = start_bar(args.pairs)
        return run_app(
            source,
            args.pairs,
            sweep_step=getattr(args, "sweep_step", 5.0),
            theme=theme,
            screenshot_dir=getattr(args, "screenshot_dir", "."),
            record=record,
            baseline=baseline,
            metrics=(
                MetricsFeed(metrics.board, lambda: source.engine)  # restarts replace it
                if metrics is not None
                else None
            ),
            present=getattr(args, "present", False),
        )
