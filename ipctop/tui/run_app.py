"""run_app: start the pairs, run the monitor, and clean up on every way out.

The command (commands/tui.py, commands/demo.py) has checked every option;
this owns the order of things around the app: the live-session lock, the
pairs before the screen (so a start error is a plain line), the record and
the stop after it, and the exit status (a signal, a crash, or the app's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.sample import Sample
from ..errors import IpctopError
from ..live.baseline import Baseline
from ..live.live_lock import live_session
from ..live.session import Session
from ..live.sources import LiveSource
from ..output.text.stdout_errors import say
from ..signals import Interrupted
from .app import IpctopApp
from .signal_exit import signals_deferred, watch_terminal


def run_app(
    source: LiveSource,
    pairs: int,
    *,
    sweep_step: float = 5.0,
    theme: str | None = None,
    screenshot_dir: str = ".",
    record: str | None = None,
    baseline: Baseline | None = None,
    metrics: Callable[[Sample, Any, Session], None] | None = None,
    present: bool = False,
    make_app: Callable[..., IpctopApp] | None = None,
) -> int:
    """Start the pairs, run the app, always clean up. Options were checked by the caller."""
    app = (make_app or IpctopApp)(
        source,
        sweep_step=sweep_step,
        theme=theme,
        screenshot_dir=screenshot_dir,
        record=record,
        baseline=baseline,
        metrics=metrics,
        present=present,
    )
    with live_session():  # tells a served monitor that this box is busy
        try:
            source.open(pairs)
            watch_terminal()
            code = app.run()
        finally:
            app._records_finish(interrupted=True)  # only if an exception got here first
            if app.record_message:
                say(f"ipctop: {app.record_message}")
            with signals_deferred():
                source.stop()
            for warning in source.unsaid_warnings():  # the stop's own, after the screen
                say(f"ipctop: {warning}")
    if app.signalled is not None:
        raise Interrupted(app.signalled)
    crashed = app.crash_line()
    if crashed:
        raise IpctopError(f"{crashed}; every pair was stopped and removed")
    return int(code or 0)
