"""`ipctop serve`: the monitor reaches a browser, and a second browser starts no benchmark.

The served page draws with xterm.js on a canvas, so the header is never in
the DOM. The tests read what the terminal is sent instead: a websocket
client speaking textual-serve's protocol, and headless Chromium watched
through the DevTools protocol (the frames its page received, and a
screenshot).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import psutil
import pytest
from conftest import ROOT, sysv_objects

from ipctop.live.live_lock import LOCK_ENV

TIMEOUT = 30.0
ANSI = re.compile(
    r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()=>][0-9A-Za-z]?"
)
HEADER = "ipctop sysv-msg · same · threads"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def plain(text: str) -> str:
    return ANSI.sub("", text)


class Served:
    def __init__(self, proc: subprocess.Popen[bytes], port: int, lock: Path) -> None:
        self.proc = proc
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.lock = lock  # its private live-session lock (IPCTOP_LIVE_LOCK)

    def monitors(self) -> list[psutil.Process]:
        """The per-browser processes textual-serve started (under its shell)."""
        try:
            kids = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        return [k for k in kids if "ipctop.served" in _cmdline(k)]


def _cmdline(p: psutil.Process) -> list[str]:
    try:
        return p.cmdline()
    except psutil.Error:
        return []


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    # A lock of its own: someone's live monitor elsewhere on the box must not
    # make these tests skip (or be told the box is busy by them).
    lock = tmp_path / "live-session.lock"
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ipctop", "serve", "--port", str(port), "--interval", "0.2"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, LOCK_ENV: str(lock)},
    )
    s = Served(proc, port, lock)
    deadline = time.monotonic() + TIMEOUT
    while True:
        try:
            urllib.request.urlopen(s.url, timeout=2).read()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the server never answered"
            time.sleep(0.1)
    try:
        yield s
    finally:
        everyone = s.monitors()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=TIMEOUT)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        _, alive = psutil.wait_procs(everyone, timeout=TIMEOUT)
        assert not alive, f"served monitors outlived the server: {alive}"


async def read_screen(ws: aiohttp.ClientWebSocketResponse, want: str) -> str:
    """Terminal output as text, until `want` shows (or the time is up)."""
    got = ""
    deadline = time.monotonic() + TIMEOUT
    while want not in plain(got):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{want!r} never came; the screen had:\n{plain(got)[-2000:]}")
        try:
            msg = await ws.receive(timeout=left)
        except asyncio.TimeoutError:
            continue
        if msg.type == aiohttp.WSMsgType.BINARY:
            got += msg.data.decode("utf-8", "replace")
        elif msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
            raise AssertionError(f"closed before {want!r}:\n{plain(got)[-2000:]}")
    return plain(got)


def test_page_is_served_and_the_terminal_stream_shows_the_header(served: Served) -> None:
    html = urllib.request.urlopen(served.url, timeout=5).read().decode()
    assert f'data-session-websocket-url="ws://127.0.0.1:{served.port}/ws"' in html
    assert "textual.js" in html

    async def go() -> None:
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(f"{served.url}/ws?width=120&height=40") as ws:
                screen = await read_screen(ws, "pairs 1/")
                assert HEADER in screen

    asyncio.run(go())


def test_second_browser_is_told_and_starts_no_second_benchmark(served: Served) -> None:
    async def go() -> None:
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(f"{served.url}/ws?width=120&height=40") as first:
                await read_screen(first, "pairs 1/")
                holder = int(served.lock.read_text())
                (monitor,) = served.monitors()
                assert holder == monitor.pid
                objects = sysv_objects()
                assert objects, "the first browser's pair made no SysV object?"
                async with http.ws_connect(f"{served.url}/ws?width=120&height=40") as second:
                    screen = await read_screen(second, "this view is read-only")
                    assert f"a live session is already running (pid {holder})" in screen
                    assert len(served.monitors()) == 2
                    assert sysv_objects() == objects, "the second browser made IPC objects"
                    second_pid = next(p.pid for p in served.monitors() if p.pid != holder)
                    assert psutil.Process(second_pid).children() == []
                await read_screen(first, "ops/s")  # the first one still runs

    asyncio.run(go())


# -- headless Chromium -------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_headless_chromium_loads_the_page_and_receives_the_header(
    served: Served, tmp_path: Path
) -> None:
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
            "--window-size=1280,800",
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
        page = next(t for t in targets if t["type"] == "page")
        shot = asyncio.run(_watch_page(page["webSocketDebuggerUrl"], served.url))
        png = tmp_path / "served.png"
        png.write_bytes(shot)
        assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 10_000
    finally:
        os.killpg(browser.pid, signal.SIGTERM)
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(browser.pid, signal.SIGKILL)
            browser.wait()
        shutil.rmtree(profile, ignore_errors=True)


async def _watch_page(debugger_url: str, url: str) -> bytes:
    """Open url in the page; return a screenshot once its terminal was sent the header."""
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(debugger_url, max_msg_size=0) as cdp:
            ids = iter(range(1, 1_000_000))
            answers: dict[int, dict] = {}
            frames: list[str] = []

            async def call(method: str, **params: object) -> dict:
                n = next(ids)
                await cdp.send_json({"id": n, "method": method, "params": params})
                while n not in answers:
                    await pump()
                return answers.pop(n)

            async def pump() -> None:
                msg = await cdp.receive(timeout=TIMEOUT)
                data = json.loads(msg.data)
                if "id" in data:
                    answers[data["id"]] = data
                elif data.get("method") == "Network.webSocketFrameReceived":
                    r = data["params"]["response"]
                    payload = r["payloadData"]
                    if r["opcode"] == 2:
                        payload = base64.b64decode(payload).decode("utf-8", "replace")
                    frames.append(payload)

            await call("Network.enable")
            await call("Page.enable")
            await call("Page.navigate", url=url)
            deadline = time.monotonic() + TIMEOUT
            while "pairs 1/" not in plain("".join(frames)):
                assert time.monotonic() < deadline, "the page's terminal never got the header"
                await pump()
            assert HEADER in plain("".join(frames))
            canvas = await call(
                "Runtime.evaluate",
                expression="document.querySelectorAll('.xterm canvas').length",
                returnByValue=True,
            )
            assert canvas["result"]["result"]["value"] > 0, "xterm.js drew nothing"
            shot = await call("Page.captureScreenshot", format="png")
            return base64.b64decode(shot["result"]["data"])
