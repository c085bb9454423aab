"""Headless Chromium driven through the DevTools protocol, for the `ipctop serve` page.

One browser per test, with a profile of its own that is removed afterwards;
the DevTools port is the one Chromium picked (DevToolsActivePort), so tests
never collide on a shared box.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

TIMEOUT = 30.0
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)"
)


@contextmanager
def headless_chromium(scale: int = 1, size: tuple[int, int] = (1280, 800)) -> Iterator[str]:
    """A blank page; yields its DevTools websocket URL. scale: device pixels per CSS pixel."""
    profile = tempfile.mkdtemp(prefix="ipctop-chromium-")
    browser = subprocess.Popen(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--remote-debugging-port=0",
            f"--window-size={size[0]},{size[1]}",
            f"--force-device-scale-factor={scale}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        port_file = Path(profile) / "DevToolsActivePort"
        deadline = time.monotonic() + TIMEOUT
        while not (port_file.exists() and port_file.read_text().strip()):
            assert browser.poll() is None, "chromium exited"
            assert time.monotonic() < deadline, "chromium never opened its DevTools port"
            time.sleep(0.1)
        devtools = int(port_file.read_text().split()[0])
        targets = json.loads(
            urllib.request.urlopen(f"http://127.0.0.1:{devtools}/json/list", timeout=5).read()
        )
        yield next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"]
    finally:
        os.killpg(browser.pid, signal.SIGTERM)
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(browser.pid, signal.SIGKILL)
            browser.wait()
        shutil.rmtree(profile, ignore_errors=True)


class DevTools:
    """Calls on one page, and the events that arrive between their answers."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self._next = 0
        self._answers: dict[int, dict] = {}
        self.events: list[dict] = []

    async def call(self, method: str, **params: object) -> dict:
        self._next += 1
        n = self._next
        await self.ws.send_json({"id": n, "method": method, "params": params})
        while n not in self._answers:
            await self.pump(f"the answer to {method}")
        answer = self._answers.pop(n)
        assert "error" not in answer, f"{method}: {answer['error']}"
        return answer["result"]

    async def pump(self, waiting_for: str = "a message") -> None:
        t0 = time.monotonic()
        try:
            message = await self.ws.receive(timeout=TIMEOUT)
        except TimeoutError:  # aiohttp's (asyncio's) says nothing of what was awaited
            raise AssertionError(
                f"Chromium sent nothing in {time.monotonic() - t0:.1f} s "
                f"(waiting for {waiting_for})"
            ) from None
        data = json.loads(message.data)
        if "id" in data:
            self._answers[data["id"]] = data
        else:
            self.events.append(data)

    async def event(self, method: str) -> dict:
        """The next event named method (those before it stay in self.events)."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == method:
                    return self.events.pop(i)["params"]
            assert time.monotonic() < deadline, f"no {method} within {TIMEOUT} s"
            await self.pump(f"the event {method}")

    async def evaluate(self, expression: str) -> Any:
        r = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in r, f"{expression[:60]}: {r['exceptionDetails']}"
        return r["result"].get("value")
