"""`ipctop replay FILE [--speed 4]`: a record played back in the monitor, read-only.

The demo that needs no particular box: no pair starts, no IPC object is made.
A bad file is one line on stderr and exit 2, before any screen opens.
"""

from __future__ import annotations

import argparse

from .common import positive_float


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("record", metavar="RECORD.json", help="a session or sweep record")
    p.add_argument(
        "--speed",
        type=positive_float,
        default=1.0,
        metavar="X",
        help="play X times as fast as recorded (1)",
    )
    p.add_argument("--baseline", metavar="FILE", help="overlay this record's scaling curve")
    p.add_argument(
        "--present",
        action="store_true",
        help="start in presentation mode: large figures, the curve, high contrast (key F)",
    )
    p.add_argument("--theme", default=None, help="Textual theme, e.g. textual-light")
    p.add_argument(
        "--screenshot-dir",
        default=".",
        metavar="DIR",
        help="where key S saves SVG screenshots (the current directory)",
    )


def run(args: argparse.Namespace) -> int:
    from textual.theme import BUILTIN_THEMES

    from ..errors import UsageError
    from ..live.baseline import load_baseline
    from ..live.replay_source import ReplaySource
    from ..output.record_io import read_record
    from ..signals import Interrupted
    from ..tui.app import IpctopApp

    if args.theme is not None and args.theme not in BUILTIN_THEMES:
        raise UsageError(
            f"--theme: unknown theme {args.theme!r}; choose from {', '.join(BUILTIN_THEMES)}"
        )
    source = ReplaySource(read_record(args.record), speed=args.speed)
    baseline = load_baseline(args.baseline) if args.baseline else None
    app = IpctopApp(
        source,
        theme=args.theme,
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
    return int(code or 0)
