"""Options of the commands that open the monitor's screen: tui (and serve), demo, replay.

Declared and checked here once, so that a bad theme, directory or baseline
is the same one line and exit 2 from each of them, before any screen opens.
"""

from __future__ import annotations

import argparse
from typing import Any

PRESENT_HELP = "start in presentation mode: large figures, the curve, high contrast (key F)"


def add_screen_options(
    p: argparse.ArgumentParser,
    *,
    present: bool = True,
    screenshots: str | None = "SVG screenshots",
    baseline: str = "overlay this record's scaling curve (key b)",
) -> None:
    """--present, --theme, --screenshot-dir (where key S saves `screenshots`), --baseline.

    present=False or screenshots=None leave those options out.
    """
    if present:
        p.add_argument("--present", action="store_true", help=PRESENT_HELP)
    p.add_argument(
        "--theme",
        default=None,
        help="Textual theme, e.g. textual-light for a projector (default textual-dark)",
    )
    if screenshots is not None:
        p.add_argument(
            "--screenshot-dir",
            default=None,  # None: "." unchecked; key S says so if it cannot write there
            metavar="DIR",
            help=f"where key S saves {screenshots} (the current directory)",
        )
    p.add_argument("--baseline", metavar="FILE", help=baseline)


def screen_settings(args: argparse.Namespace) -> tuple[str | None, Any]:
    """The checked theme and the loaded baseline (or None); a bad one is a UsageError."""
    from textual.theme import BUILTIN_THEMES

    from ..errors import UsageError
    from ..live.baseline import load_baseline
    from ..output.records.output_paths import check_output_dir

    theme = getattr(args, "theme", None)
    if theme is not None and theme not in BUILTIN_THEMES:
        raise UsageError(
            f"--theme: unknown theme {theme!r}; choose from {', '.join(BUILTIN_THEMES)}"
        )
    if getattr(args, "screenshot_dir", None) is not None:
        check_output_dir(args.screenshot_dir, "--screenshot-dir")
    elif hasattr(args, "screenshot_dir"):
        # Not asked for: a monitor or replay started in / must not refuse over it.
        args.screenshot_dir = "."
    path = getattr(args, "baseline", None)
    return theme, load_baseline(path) if path else None
