"""A monitor that dies says so in one line, keeps the traceback in a file, and exits 1.

Textual catches an exception raised in a widget, prints a screenful of
traceback after the screen is restored, and lets `run()` return None, which
would read as exit 0. Mixed into IpctopApp: the first exception is written
to a file, and run_app prints crash_line() and exits 1 after the pairs are
stopped.
"""

from __future__ import annotations

import os
import tempfile
import traceback


class CrashReport:
    """Uses Textual's App hooks for an unhandled exception (pinned textual 8.x)."""

    crash_error: BaseException | None = None
    crash_file: str | None = None
    output_gone: bool = False

    def _handle_exception(self, error: Exception) -> None:
        if isinstance(error, BrokenPipeError) and self.crash_error is None:
            # The reader left: a closed browser tab under `ipctop serve`, whose
            # driver then fails to write its goodbye. That is how a served
            # monitor ends, not a failure, and there is no one to tell.
            self.output_gone = True
        elif self.crash_error is None:
            self.crash_error = error
            self.crash_file = _keep_traceback(error)
        super()._handle_exception(error)  # type: ignore[misc]

    def _print_error_renderables(self) -> None:
        if self.output_gone and self.crash_error is None:
            self._exit_renderables.clear()  # type: ignore[attr-defined]
            return
        if self.crash_error is None:
            super()._print_error_renderables()  # type: ignore[misc]
            return
        # The whole story is in crash_file; run_app prints the one line.
        self._exit_renderables.clear()  # type: ignore[attr-defined]

    def crash_line(self) -> str | None:
        """'the monitor failed: ZeroDivisionError: ... (traceback in FILE)', or None."""
        error = self.crash_error
        if error is None:
            return None
        where = f" (traceback in {self.crash_file})" if self.crash_file else ""
        text = str(error).splitlines()[0] if str(error) else ""
        return f"the monitor failed: {type(error).__name__}{': ' + text if text else ''}{where}"


def _keep_traceback(error: BaseException) -> str | None:
    """The traceback in a file of the temp dir; None when even that cannot be written."""
    try:
        fd, path = tempfile.mkstemp(prefix="ipctop-crash-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("".join(traceback.format_exception(error)))
    except OSError:
        return None  # crash_line() then names the error without a file
    return path
