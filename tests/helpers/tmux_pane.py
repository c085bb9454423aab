"""One tmux server of a test's own, with one command in its only pane.

CI once lost two tests here (stop 42): on a loaded box a `capture-pane` took over
10 s, the test ran out of its 120 s, and its `kill-server` timed out too, which
would leave the app and its pairs spinning under every later test. So each call
gets a longer budget, and `kill` does not trust the server: it kills the server
and every process of its pane by pid, and waits until they are gone.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid

import psutil

#: seconds for one tmux call; a quiet box answers in milliseconds.
CALL = 30.0
#: seconds for a text to show, or the app to quit.
WAIT = 40.0
#: pytest-timeout for a test that drives a pane (the ini default is 120 s).
TEST_TIMEOUT = 300


class Pane:
    """`cmd` in a detached session `t` of size `size`; `tmux()` talks to its server."""

    def __init__(self, cmd: str, size: tuple[int, int], term: str = "xterm-256color") -> None:
        self.sock = f"ipctop-test-{uuid.uuid4().hex[:8]}"
        # A size in the environment would win over the pane's (Textual reads
        # COLUMNS and LINES), and TMUX* would make this a nested client.
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("TMUX") and k not in ("COLUMNS", "LINES")
        }
        self.env.setdefault("TERM", term)  # tmux refuses to start without one
        self.tmux("new-session", "-d", "-s", "t", "-x", str(size[0]), "-y", str(size[1]), cmd)
        self.server = psutil.Process(int(self.tmux("display-message", "-p", "#{pid}")))

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.sock, *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=CALL,
            env=self.env,
        ).stdout

    def text(self, ansi: bool = False) -> str:
        return self.tmux("capture-pane", "-p", *(["-e"] if ansi else []), "-t", "t")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "t", *keys)

    def shell(self) -> psutil.Process:
        """The pane's shell: the process `cmd` runs in."""
        return psutil.Process(int(self.tmux("display-message", "-p", "-t", "t", "#{pane_pid}")))

    def wait_for(self, text: str, timeout: float = WAIT) -> str:
        deadline = time.monotonic() + timeout
        while text not in (shown := self.text()):
            assert time.monotonic() < deadline, f"{text!r} never showed:\n{shown}"
            time.sleep(0.2)
        return shown

    def quit(self, exited: str = "ipctop-exited") -> None:
        """q, and wait for the line the pane's command prints once the app is gone."""
        self.keys("q")
        self.wait_for(exited)

    def kill(self) -> None:
        """The server and everything in its pane gone, whatever state they are in.

        kill-server first: the app gets its SIGHUP and cleans up as a closed
        terminal makes it. Whatever is left a few seconds later is killed."""
        tree = [self.server, *self._children()]
        try:
            subprocess.run(
                ["tmux", "-L", self.sock, "kill-server"], capture_output=True, timeout=10
            )
        except subprocess.TimeoutExpired:
            pass  # a stuck server: killed by pid below
        _, alive = psutil.wait_procs(tree, timeout=10)
        for p in alive:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                continue  # it went between the wait and the kill
        _, alive = psutil.wait_procs(alive, timeout=10)
        assert not alive, f"tmux pane processes outlived SIGKILL: {[p.pid for p in alive]}"

    def _children(self) -> list[psutil.Process]:
        try:
            return self.server.children(recursive=True)
        except psutil.NoSuchProcess:
            return []
