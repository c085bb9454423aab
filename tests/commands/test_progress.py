"""Progress bars: shown on a terminal's stderr, nothing extra when piped."""

from __future__ import annotations

import errno
import os
import pty
import subprocess
import sys
import threading

from conftest import ROOT, run_cli, two_cpus

from ipctop.commands.progress import BULK_PAIRS, PlannedProgress, start_bar
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.live.auto_sweep import AutoSweep

SWEEP = ("sweep", "--max-pairs", "2", "--seconds", "0.4", "--warmup", "0.1", "--repeat", "1")


def with_terminal_stderr(*args: str) -> tuple[int, str, str]:
    """Run ipctop with stderr on a pseudo-terminal and stdout on a pipe."""
    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS="120", TERM="xterm")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ipctop", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(slave)
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    out, _ = proc.communicate(timeout=120)
    reader.join(timeout=10)
    os.close(master)
    return proc.returncode, out.decode(), b"".join(chunks).decode(errors="replace")


@two_cpus
def test_sweep_on_a_terminal_shows_a_bar_with_the_time_left() -> None:
    code, out, err = with_terminal_stderr(*SWEEP)
    assert code in (0, 1), err
    assert "━" in err and "left" in err and "sysv-msg · 2 pair(s) · run 1" in err
    assert "left" not in out and "\x1b[" not in out  # the table on stdout stays clean
    assert "summary" in out


@two_cpus
def test_sweep_piped_writes_nothing_extra() -> None:
    r = run_cli(*SWEEP)
    assert r.returncode in (0, 1), r.stderr
    # (stderr may carry a note about another run's leftovers: "left" alone proves nothing)
    assert "━" not in r.stderr and "\x1b[" not in r.stderr and "\r" not in r.stderr
    assert "sysv-msg · 2 pair(s) · run" not in r.stderr


def test_a_bulk_start_on_a_terminal_counts_the_pairs() -> None:
    n = str(BULK_PAIRS)
    code, out, err = with_terminal_stderr("run", "--cpus", "0", "--pairs", n, "--seconds", "0.3")
    assert code == 0, err
    assert f"starting {n} pairs" in err and f"{n}/{n}" in err
    assert f"{n} pair(s)" in out


def test_the_engine_reports_a_bulk_start_and_draws_nothing(capfd) -> None:
    # The engine only calls back; what is drawn, and where, is the command's.
    calls: list[tuple[int, int, int]] = []
    with Engine(RunConfig("sysv-sem", "same", "threads", (0,))) as e:
        e.start_progress = lambda *c: calls.append(c)
        e.start(3)
        assert len(e.pairs) == 3
    assert calls == [(3, 3, 3)]  # the last pair running is always reported
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_the_monitor_s_bulk_start_bar_is_only_for_a_terminal() -> None:
    # pytest captures stderr (not a terminal), so no callback: nothing to draw
    assert start_bar(BULK_PAIRS) is None
    assert start_bar(1) is None


def _drain(master: int) -> bytes:
    """Everything written to a pty whose other side is closed: one read may return only
    the first write on a loaded box; Linux says EIO once the buffer is empty."""
    chunks = []
    try:
        while chunk := os.read(master, 65536):
            chunks.append(chunk)
    except OSError as e:
        if e.errno != errno.EIO:  # EIO: drained; anything else is a real fault
            raise
    finally:
        os.close(master)
    return b"".join(chunks)


def test_the_monitor_s_bulk_start_bar_draws_and_wipes_on_a_terminal(monkeypatch) -> None:
    n = BULK_PAIRS
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as tty:
        monkeypatch.setattr(sys, "stderr", tty)
        show = start_bar(n)
        assert show is not None
        show(n, 0, n)  # every end launched, none running yet
        show(n, n, n)
    data = _drain(master).decode()
    assert f"starting {n} pairs" in data and f"{n}/{n} launched, {n} running" in data
    assert data.endswith("\r\x1b[K")  # wiped: the screen starts on a clean line


def test_planned_progress_without_a_terminal_only_counts() -> None:
    with PlannedProgress("x", 10.0) as bar:  # pytest captures stderr: not a terminal
        assert not bar.shown
        bar.begin(4.0)
        bar.tick()
        bar.done()
        bar.advance(2.0)
        assert bar._done == 6.0


def test_monitor_sweep_shows_a_bar_and_the_time_left() -> None:
    sw = AutoSweep(target=3, step=5.0, last_change=0.0, pairs=1)
    assert sw.time_left(0.0) == 15.0  # this step, then one for pair 2 and one for pair 3
    assert sw.describe(0.0).startswith("SWEEP ▱▱▱▱▱▱▱▱▱▱ 1→3 pairs")
    sw.next_step(6.0, 2, settled=False)  # the count moved on at 6 s
    assert sw.time_left(8.5) == 7.5
    assert "▰▰▰▰▰" in sw.describe(8.5) and "~8 s left" in sw.describe(8.5)


@two_cpus
def test_ab_on_a_terminal_shows_each_slot_and_the_time_left() -> None:
    code, out, err = with_terminal_stderr(
        "ab", "--window", "0.2", "--settle", "0.05", "--max-seconds", "5",
        "--precision", "0.001", "--b", "--placement same",
    )  # fmt: skip
    assert code in (0, 1), err
    assert "━" in err and "left" in err and "block 1 · A" in err and "block 1 · B" in err
    assert "left" not in out and "\x1b[" not in out
