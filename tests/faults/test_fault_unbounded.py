"""Issue 27, finding 11: nothing ipctop is given makes it hang or read without bound.

Real FIFOs (no writer ever comes), /dev/zero, a 300 MiB sparse file, and a
`--cpus` range of a billion under `ulimit -v` (a MemoryError there was the
fault). Each is one line and exit 2, within the subprocess timeout that
stands for "did not hang". A FIFO named like a session tag is in
test_fault_session_trust.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from test_report import synthetic_check
from test_tui_live import live, run, wait_for

PY = sys.executable
LIMIT_VM = "ulimit -v 1500000; "  # as the hostile run: an unbounded read dies of it


def sh(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)  # fmt: skip


def one_line(r: subprocess.CompletedProcess, code: int = 2) -> str:
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "MemoryError" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_report_of_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    line = one_line(sh(f"{PY} -m ipctop report {fifo}"))
    assert "is not a regular file" in line, line


def test_report_of_dev_zero_is_refused_before_reading() -> None:
    line = one_line(sh(f"{LIMIT_VM}{PY} -m ipctop report /dev/zero"))
    assert "/dev/zero is not a regular file" in line, line


def test_report_refuses_a_300_mib_file_as_compare_does(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(300 * 2**20)  # sparse: the size is what is judged, before any read
    line = one_line(sh(f"{LIMIT_VM}{PY} -m ipctop report {big}"))
    assert "big.json is 300 MiB; a record is at most 256 MiB" in line, line
    # In a folder it is named and skipped; the folder's other record is still reported.
    (tmp_path / "c.json").write_text(json.dumps(synthetic_check("box-a")))
    r = sh(f"{LIMIT_VM}{PY} -m ipctop report {tmp_path}")
    assert r.returncode == 0 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
    assert f"skipped {big}: big.json is 300 MiB" in r.stdout, r.stdout
    assert "box-a" in r.stdout, r.stdout


@pytest.mark.parametrize(
    "cpus, says",
    [
        ("0-999999999", "CPU 999999999 is above the highest id Linux has (65535)"),
        (",".join(["0-65535"] * 3), "the list names more than 65536 CPUs"),
    ],
    ids=["a-billion", "repeats"],
)
def test_a_huge_cpu_list_is_refused_before_it_is_built(cpus: str, says: str) -> None:
    line = one_line(sh(f"{LIMIT_VM}{PY} -m ipctop run --cpus {cpus} --seconds 0.3"))
    assert line.startswith("ipctop: --cpus: ") and says in line, line


def test_the_monitor_names_a_fifo_given_as_a_matrix_record(tmp_path: Path) -> None:
    from textual.widgets import Input

    from ipctop.tui.app import IpctopApp
    from ipctop.tui.screens.prompts import PathInputScreen

    fifo = tmp_path / "m.json"
    os.mkfifo(fifo)
    source = live(1)
    said: list[str] = []

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("x")
            await wait_for(pilot, lambda: isinstance(app.screen, PathInputScreen), "the prompt")
            app.screen.query_one(Input).value = str(fifo)
            await pilot.press("enter")  # open() of the FIFO blocked the app's loop here
            # _message: the last thing said (a notification expires after 4 s).
            await wait_for(pilot, lambda: "no matrix from" in app._message, "the refusal")
            said.append(app._message)
            await pilot.press("q")

    run(go())
    assert source.engine._closed
    assert any("is not a regular file" in m for m in said), said
