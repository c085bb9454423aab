"""The tmux helper under a real stall: its server stopped with SIGSTOP.

CI lost three runs to tmux calls that did not answer (stops 42 to 44), the last
one in an unbounded wait for a killed client. These check that a stalled server
costs a bounded time, leaves no client behind, and says what the box and the
server were doing; and that the pane works again once the server runs.
"""

from __future__ import annotations

import shutil
import signal
import time

import psutil
import pytest
import tmux_pane
from tmux_pane import Pane

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_a_stopped_server_fails_a_read_in_bounded_time_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pane = Pane("echo ready; sleep 60", (80, 24))
    try:
        pane.wait_for("ready")
        monkeypatch.setattr(tmux_pane, "CALL", 1.0)
        monkeypatch.setattr(tmux_pane, "READ_TRIES", 2)
        before = {p.pid for p in psutil.Process().children()}
        pane.server.send_signal(signal.SIGSTOP)
        try:
            t0 = time.monotonic()
            with pytest.raises(AssertionError) as failed:
                pane.text()
            took = time.monotonic() - t0
        finally:
            pane.server.send_signal(signal.SIGCONT)
        why = str(failed.value)
        assert "did not answer in 2 tries" in why
        assert "box during the call: user" in why and "steal" in why
        assert "pressure cpu:" in why
        # /proc/PID/status of the stopped server
        assert "State:\tT (stopped)" in why, why
        # 2 tries of a 1 s call, each killed client waited for at most KILL_WAIT
        assert took < 2 * (1.0 + tmux_pane.KILL_WAIT) + 2.0, took
        tmux_pane._reap_left()
        left = {p.pid for p in psutil.Process().children()} - before
        assert not left, f"tmux clients left behind: {left}"
        assert "ready" in pane.text()  # the server answers again
    finally:
        pane.kill()
