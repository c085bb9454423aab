"""Run ipctop in a real pseudo-terminal: keys in, the screen's bytes out, the exit code."""

from __future__ import annotations

import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from fcntl import ioctl
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class Terminal:
    """`python -m ipctop ARGS` (or `python ARGS`) on a 120x40 pty; output is read in a thread."""

    def __init__(
        self, *args: str, env: dict[str, str] | None = None, python_args: bool = False
    ) -> None:
        master, slave = pty.openpty()
        ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        full_env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [sys.executable, *args] if python_args else [sys.executable, "-m", "ipctop", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=ROOT,
            env=full_env,
            start_new_session=True,  # the pty becomes its controlling terminal
            close_fds=True,
        )
        os.close(slave)
        self.master = master
        self._chunks: list[bytes] = []
        self._lock = threading.Lock()
        self.reading = threading.Event()  # clear it to stop reading: a terminal that hangs
        self.reading.set()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            if not self.reading.wait(0.1):
                if self.proc.poll() is not None:
                    return
                continue
            if self.master < 0:
                return  # hung up: nothing left to read
            try:
                ready, _, _ = select.select([self.master], [], [], 0.1)
                if not ready:
                    if self.proc.poll() is not None:
                        return
                    continue
                data = os.read(self.master, 65536)
            except OSError:
                return  # EIO: every writer of the pty has gone
            if not data:
                return
            with self._lock:
                self._chunks.append(data)

    @property
    def output(self) -> str:
        with self._lock:
            return b"".join(self._chunks).decode("utf-8", "replace")

    def wait_for_text(self, text: str, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.output:
                return True
            if self.proc.poll() is not None:
                return text in self.output
            time.sleep(0.05)
        return False

    def press(self, *keys: str, gap: float = 0.0) -> None:
        for k in keys:
            os.write(self.master, k.encode())
            if gap:
                time.sleep(gap)

    def signal(self, sig: int = signal.SIGINT) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float = 30.0) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self._reader.join(2)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.reading.set()
        self._reader.join(2)
        if self.master >= 0:
            os.close(self.master)
            self.master = -1

    def hang_up(self) -> None:
        """Close our end, as a terminal emulator that was killed does."""
        self.reading.clear()
        time.sleep(0.2)  # the reader is out of its read
        os.close(self.master)
        self.master = -1

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


ENTER, DOWN, ESCAPE = "\r", "\x1b[B", "\x1b"
