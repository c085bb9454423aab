"""The live monitor (default command): `ipctop`, `ipctop --pairs 2`, `ipctop tui ...`."""

from __future__ import annotations

import argparse

from .common import (
    MAX_PAIRS,
    add_metrics_option,
    add_workload_options,
    count,
    engine_config,
    metrics_endpoint,
    positive_float,
    resolve_cpus,
    workload_names,
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_monitor_arguments(p)
    add_metrics_option(p)


def add_monitor_arguments(p: argparse.ArgumentParser) -> None:
    """The monitor's options, shared with `serve` (which has no --metrics of its own)."""
    add_workload_options(p)
    p.add_argument(
        "--pairs",
        type=count(0, MAX_PAIRS),
        default=1,
        help=f"start with N pairs (1, at most {MAX_PAIRS})",
    )
    p.add_argument("--interval", type=positive_float, default=0.5, help="sample interval (0.5)")
    p.add_argument(
        "--sweep-step",
        type=positive_float,
        default=5.0,
        metavar="K",
        help="auto-sweep (key s) adds a pair every K seconds (5)",
    )
    p.add_argument(
        "--present",
        action="store_true",
        help="start in presentation mode: large figures, the curve, high contrast (key F)",
    )
    p.add_argument(
        "--theme",
        default=None,
        help="Textual theme, e.g. textual-light for a projector (default textual-dark)",
    )
    p.add_argument(
        "--screenshot-dir",
        default=".",
        metavar="DIR",
        help="where key S saves SVG screenshots and key R records (the current directory)",
    )
    p.add_argument("--record", metavar="FILE", help="record the session from the start (key R)")
    p.add_argument("--baseline", metavar="FILE", help="overlay this record's scaling curve (key b)")


def run(args: argparse.Namespace) -> int:
    """Check every option before any pair starts (a bad one is one line and exit 2)."""
    from textual.theme import BUILTIN_THEMES

    from ..errors import UsageError
    from ..live.baseline import load_baseline
    from ..live.metrics_feed import MetricsFeed
    from ..live.sources import LiveSource
    from ..output.output_paths import check_output_dir, check_output_file
    from ..tui.launch import run_app

    theme = getattr(args, "theme", None)
    if theme is not None and theme not in BUILTIN_THEMES:
        raise UsageError(
            f"--theme: unknown theme {theme!r}; choose from {', '.join(BUILTIN_THEMES)}"
        )
    record = getattr(args, "record", None)
    if record:
        check_output_file(record, "--record")
    check_output_dir(getattr(args, "screenshot_dir", "."), "--screenshot-dir")
    baseline_file = getattr(args, "baseline", None)
    baseline = load_baseline(baseline_file) if baseline_file else None
    (workload,) = workload_names(args.workload)[:1]
    cpus = resolve_cpus(args.cpus)
    with metrics_endpoint(args) as metrics:  # before any pair: a port in use starts nothing
        source = LiveSource(engine_config(args, workload, cpus), args.interval)
        source.engine.show_progress = True  # printed before the screen takes the terminal
        return run_app(
            source,
            args.pairs,
            sweep_step=getattr(args, "sweep_step", 5.0),
            theme=theme,
            screenshot_dir=getattr(args, "screenshot_dir", "."),
            record=record,
            baseline=baseline,
            metrics=MetricsFeed(metrics.board) if metrics is not None else None,
            present=getattr(args, "present", False),
        )
