"""The live monitor (default command): `ipctop`, `ipctop --pairs 2`, `ipctop tui ...`."""

from __future__ import annotations

import argparse

from .common import add_workload_options, count, positive_float


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_workload_options(p)
    p.add_argument("--pairs", type=count(0, 4096), default=1, help="start with N pairs (1)")
    p.add_argument("--interval", type=positive_float, default=0.5, help="sample interval (0.5)")
    p.add_argument(
        "--sweep-step",
        type=positive_float,
        default=5.0,
        metavar="K",
        help="auto-sweep (key s) adds a pair every K seconds (5)",
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
    from ..output.output_paths import check_output_dir, check_output_file
    from ..tui.app import run_app

    # Before any pair starts: a record or screenshot that cannot be saved is exit 2 now.
    if args.record:
        check_output_file(args.record, "--record")
    check_output_dir(args.screenshot_dir, "--screenshot-dir")
    return run_app(args)
