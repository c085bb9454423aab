"""The soak's process cases: a second monitor beside a first, and `ipctop serve` SIGKILLed.

    python -m ipctop.soak --second-monitor 10 --serve-killed 10

A second `ipctop` started while one runs must say so (the contention
notice) and quit cleanly, never crash; SIGKILL of `ipctop serve` while a
browser is connected must take the served monitor along (it dies with its
server) and leave nothing. Run it in a private IPC namespace (`unshare -i`)
so the leak census counts only this soak's objects.
"""

from __future__ import annotations

import asyncio
import os
import pty
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import urllib.request
from fcntl import ioctl
from pathlib import Path

import psutil

from ..cpus import format_cpu_list
from ..live.live_lock import LOCK_ENV

PATIENCE = 60.0  # seconds a step may take on a loaded box before it counts as a failure
HEADER = "pairs 1/"  # the monitor's header once its first pair runs


class _Pty:
    """`python -m ipctop ARGS` on a 120x40 pseudo-terminal; the screen's bytes are kept."""

    def __init__(self, *args: str) -> None:
        master, slave = pty.openpty()
        ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ipctop", *args], stdin=slave, stdout=slave, stderr=slave,
            env=env, close_fds=True,
        )  # fmt: skip
        # No new session: on kernel 6.18 with kernel.sched_autogroup_enabled=1, a
        # monitor in a session of its own (an autogroup) sometimes found its new
        # ends runnable on CPU 0 and never scheduled there for 20 s beside the
        # first monitor's pair (1 start in about 5; none in 28 with autogroup
        # off). That is the kernel's group scheduling, not ipctop's; one session
        # keeps the soak a test of ipctop.
        os.close(slave)
        self.master = master
        self._data = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if not ready:
                if self.proc.poll() is not None:
                    return
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return  # EIO: the terminal's last writer has gone
            if not data:
                return
            self._data += data

    @property
    def text(self) -> str:
        return bytes(self._data).decode("utf-8", "replace")

    def wait_for(self, text: str, timeout: float = PATIENCE) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            if text in self.text:
                return True
            time.sleep(0.05)
        return text in self.text

    def quit(self, timeout: float = PATIENCE) -> int | None:
        """q, then the exit code; None when it had to be killed."""
        try:
            os.write(self.master, b"q")
            return self.proc.wait(timeout)
        except (OSError, subprocess.TimeoutExpired):
            return None
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._reader.join(2)
            os.close(self.master)


def _tail(monitor: _Pty) -> str:
    """The last words on a monitor's terminal, escape sequences left out: why it exited."""
    text = re.sub(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|.)", "",
                  monitor.text)  # fmt: skip
    return repr(" ".join(text.split())[-700:])


def second_monitor(cycles: int, cpus: list[int]) -> list[str]:
    """Problems seen while a second monitor starts and quits `cycles` times beside a first."""
    args = ("--cpus", format_cpu_list(cpus), "--interval", "0.2")
    problems: list[str] = []
    first = _Pty(*args)
    try:
        if not first.wait_for(HEADER):
            return [f"the first monitor never ran a pair: {first.text[-300:]!r}"]
        for i in range(cycles):
            second = _Pty(*args)
            said = second.wait_for("contention:")
            code = second.quit()
            if "Traceback" in second.text:
                problems.append(f"cycle {i}: the second monitor crashed")
            if code != 0:
                problems.append(f"cycle {i}: the second monitor exited {code}: {_tail(second)}")
            if not said:
                problems.append(f"cycle {i}: the second monitor did not say another ipctop runs")
        if first.proc.poll() is not None:
            problems.append(f"the first monitor died (exit {first.proc.returncode})")
    finally:
        code = first.quit()
    if code != 0:
        problems.append(f"the first monitor exited {code}")
    return problems


def serve_killed(cycles: int) -> list[str]:
    """Problems seen when `ipctop serve` is SIGKILLed with a browser connected, `cycles` times."""
    try:
        import aiohttp  # noqa: F401  (textual-serve brings it)
    except ImportError:
        return ["serve case: aiohttp (textual-serve) is not installed"]
    problems: list[str] = []
    for i in range(cycles):
        problems += [f"cycle {i}: {p}" for p in _one_serve_kill()]
    return problems


def _one_serve_kill() -> list[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as private:
        # A lock of its own: a monitor elsewhere on the box would make the served
        # one a read-only notice with no pairs, and nothing would be tested.
        env = {**os.environ, LOCK_ENV: str(Path(private) / "live-session.lock")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "ipctop", "serve", "--port", str(port), "--interval", "0.2"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, start_new_session=True,
        )  # fmt: skip
        try:
            return asyncio.run(_browse_then_kill(proc, f"http://127.0.0.1:{port}"))
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            if proc.stderr is not None:
                proc.stderr.close()


async def _browse_then_kill(proc: subprocess.Popen[bytes], url: str) -> list[str]:
    import aiohttp

    deadline = time.monotonic() + PATIENCE
    while True:
        try:
            await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=2).read())
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                return ["the server never answered"]
            await asyncio.sleep(0.1)
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(f"{url}/ws?width=120&height=40") as ws:
            screen = ""
            while HEADER not in screen:
                left = deadline - time.monotonic()
                if left <= 0:
                    return ["the served monitor never ran a pair"]
                try:
                    msg = await ws.receive(timeout=left)
                except asyncio.TimeoutError:
                    continue
                if msg.type != aiohttp.WSMsgType.BINARY:
                    return [f"the browser's socket closed ({msg.type.name})"]
                screen += msg.data.decode("utf-8", "replace")
            monitors = _served_monitors(proc)
            if len(monitors) != 1:
                return [f"{len(monitors)} served monitors for one browser"]
            proc.kill()  # SIGKILL, the browser still connected
            proc.wait()
            _, alive = await asyncio.to_thread(psutil.wait_procs, monitors, PATIENCE)
    if alive:
        for p in alive:
            p.kill()
        return [f"the served monitor (pid {alive[0].pid}) outlived its SIGKILLed server"]
    return []


def _served_monitors(proc: subprocess.Popen[bytes]) -> list[psutil.Process]:
    out = []
    for kid in psutil.Process(proc.pid).children(recursive=True):
        try:
            if "ipctop.served" in kid.cmdline():
                out.append(kid)
        except psutil.Error:
            continue
    return out
