"""`ipctop replay FILE [--speed 4]`: a record played back in the monitor, read-only.

The demo that needs no particular box: no pair starts, no IPC object is made.
A bad file is one line on stderr and exit 2, before any screen opens.
"""

from __future__ import annotations

import argparse

from .common import positive_float
from .screen_options import add_screen_options, screen_settings


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("record", metavar="RECORD.json", help="a session or sweep record")
    p.add_argument(
        "--speed",
        type=positive_float,
        default=1.0,
        metavar="X",
        help="play X times as fast as recorded (1)",
    )
    add_screen_options(p)


def run(args: argparse.Namespace) -> int:
    from ..errors import IpctopError
    from ..live.replay_source import ReplaySource
    from ..output.records.record_io import read_record
    from ..signals import Interrupted
    from ..tui.app import IpctopApp

    theme, baseline = screen_settings(args)
    source = ReplaySource(read_record(args.record), speed=args.speed)
    app = IpctopApp(
        source,
        theme=theme,
        screenshot_dir=args.screenshot_dir,
        baseline=baseline,
        present=args.present,
    )
    try:
        code = app.run()
    finally:
        source.stop()
    if app.signalled is not None:
        raise Interrupted(app.signalled)
    crashed = app.crash_line()  # as run_app: one line and exit 1, not a blank exit 0
    if crashed:
        raise IpctopError(crashed)
    return int(code or 0)
