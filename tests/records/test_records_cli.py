"""Records from the command line: bad files are one line and exit 2; SIGTERM still saves."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import psutil
import pytest
from conftest import ROOT

from ipctop.engine.reaper import session_dir
from ipctop.live.live_lock import LOCK_NAME
from ipctop.output.records.record import Record
from ipctop.output.records.record_io import read_record, write_record

TIMEOUT = 30.0


def ipctop(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ipctop", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def error_lines(stderr: str) -> list[str]:
    # A note about an earlier run's leftovers may come first; it is not the error.
    return [ln for ln in stderr.splitlines() if "note:" not in ln]


@pytest.fixture
def bad_records(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    cut = tmp_path / "cut.json"
    cut.write_text('{"schema": "ipctop.record/1", "kind": "sess')
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"schema": "ipctop.record/9", "kind": "session", "laps": []}))
    empty = tmp_path / "empty.json"
    write_record(empty, Record(kind="session", box={}, config=_config()))
    return {
        "cut": (cut, "cut.json is truncated or not JSON"),
        "newer": (
            newer,
            "newer.json is ipctop.record/9; this ipctop reads ipctop.record/1, ipctop.record/2 and ipctop.record/3",
        ),
        "empty": (empty, "empty.json holds no samples and no sweep steps to replay"),
    }


def _config() -> dict:
    return {
        "workload": "sysv-msg",
        "placement": "same",
        "mode": "threads",
        "engine": "native",
        "cpus": [0],
        "seconds": None,
        "warmup": None,
        "repeat": None,
        "interval": 0.5,
    }


@pytest.mark.parametrize("which", ["cut", "newer", "empty"])
def test_replay_of_a_bad_record_is_one_line_and_exit_2(bad_records, which: str) -> None:
    path, message = bad_records[which]
    r = ipctop("replay", str(path))
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert error_lines(r.stderr) == [f"ipctop: {message}" + _tail(r.stderr, message)]


def _tail(stderr: str, message: str) -> str:
    """What follows the fixed part of the message on its line (a line/column position)."""
    line = next(ln for ln in stderr.splitlines() if message in ln)
    return line[line.index(message) + len(message) :]


@pytest.mark.parametrize("which", ["cut", "newer"])
def test_baseline_from_a_bad_record_is_one_line_and_exit_2(bad_records, which: str) -> None:
    path, message = bad_records[which]
    r = ipctop("--baseline", str(path), "--pairs", "1")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    (line,) = error_lines(r.stderr)
    assert line.startswith(f"ipctop: {message}")


def test_baseline_without_points_is_refused(bad_records) -> None:
    path, _ = bad_records["empty"]
    r = ipctop("--baseline", str(path))
    assert r.returncode == 2
    assert error_lines(r.stderr) == ["ipctop: empty.json has no scaling points to compare against"]


def test_serve_checks_its_replay_file_before_listening(bad_records) -> None:
    path, message = bad_records["newer"]
    r = ipctop("serve", "--port", "1", "--replay", str(path))
    assert r.returncode == 2
    assert error_lines(r.stderr) == [f"ipctop: {message}"]


def test_record_into_a_missing_directory_is_refused(tmp_path: Path) -> None:
    r = ipctop("--record", str(tmp_path / "no" / "such" / "f.json"))
    assert r.returncode == 2
    (line,) = error_lines(r.stderr)
    assert line.startswith("ipctop: --record") and "no such directory" in line


ANSI = re.compile(
    rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()=>][0-9A-Za-z]?"
)


def test_sigterm_saves_the_recording_marked_interrupted(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    lock = session_dir() / LOCK_NAME
    lock_before = lock.exists()
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "TEXTUAL"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ipctop", "--record", str(path), "--interval", "0.2"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=ROOT,
        env={**env, "TERM": "xterm-256color"},
        start_new_session=True,
    )
    os.close(slave)
    screen = bytearray()

    def drain() -> None:
        # Keep reading, or the app blocks on a full terminal.
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return  # EIO: the last writer closed the terminal
            if not data:
                return
            screen.extend(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + TIMEOUT
        while b"REC " not in ANSI.sub(b"", bytes(screen)):
            assert proc.poll() is None, ANSI.sub(b"", bytes(screen)).decode(errors="replace")
            assert time.monotonic() < deadline, "REC never showed"
            time.sleep(0.1)
        children = psutil.Process(proc.pid).children(recursive=True)

        def recorded() -> int:
            """The header's "REC f.json (N)": the samples in the record so far."""
            text = ANSI.sub(b"", bytes(screen)).decode(errors="replace")
            return max((int(n) for n in re.findall(r"REC f\.json \((\d+)\)", text)), default=0)

        # A few samples into the record: counted on screen, as a loaded box may
        # take more than a fixed second to sample at all.
        while recorded() < 3:
            assert proc.poll() is None, ANSI.sub(b"", bytes(screen)).decode(errors="replace")
            assert time.monotonic() < deadline, f"{recorded()} samples recorded"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(timeout=5)
        os.close(master)
    assert rc == 128 + signal.SIGTERM
    rec = read_record(path)
    assert rec.interrupted is True
    assert len(rec.timeline) >= 1 and rec.timeline[-1].pairs == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json"], "a temp file was left"
    text = ANSI.sub(b"", bytes(screen)).decode(errors="replace")
    assert f"record saved to {path}" in text
    assert not any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children)
    if not lock_before:
        assert not lock.exists(), "the live-session lock outlived the run"
