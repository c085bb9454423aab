"""The live monitor (default command). Placeholder until the TUI lands."""

from __future__ import annotations

import argparse

from .common import add_workload_options, count, positive_float


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_workload_options(p)
    p.add_argument("--pairs", type=count(0, 4096), default=1, help="start with N pairs (1)")
    p.add_argument("--interval", type=positive_float, default=0.5, help="sample interval (0.5)")


def run(args: argparse.Namespace) -> int:
    from ..tui.app import run_app

    return run_app(args)
