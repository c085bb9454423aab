"""Issue 27, findings 1-3: a result is never measured only to be lost, and a knob is restored.

ab, matrix and check refuse an output path they cannot write before the first
pair; a disk that fills while they measure keeps the record in the temp
directory; a SIGTERM while --restore-cmd runs waits for it. Real commands in
subprocesses; the autouse fixture checks that nothing leaked.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from conftest import ROOT, run_cli, wait_for

# A block of four 0.2 s slots took 1.3-18 s on a loaded box, and ab refuses
# (exit 2) a budget of fewer than 2 blocks: 6 s leaves room for a loaded box.
AB = ("ab", "--cpus", "0", "--max-seconds", "6", "--precision", "50", "--window", "0.2",
      "--settle", "0")  # fmt: skip
MATRIX = ("matrix", "-w", "sysv-msg", "--cpus", "0", "--seconds", "0.2", "--warmup", "0",
          "--no-baseline")  # fmt: skip
CHECK = ("check", "--quick", "--cpus", "0")


def one_line(r: subprocess.CompletedProcess, code: int) -> str:
    assert r.returncode == code, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.strip().splitlines() if not ln.startswith("ipctop: note:")]
    assert len(lines) == 1, r.stderr
    return lines[0]


# --- 1: the output path is checked before anything is measured ----------------------


@pytest.mark.parametrize(
    "command, option", [(AB, "--json"), (MATRIX, "--json"), (CHECK, "--record")],
    ids=["ab", "matrix", "check"],
)  # fmt: skip
@pytest.mark.parametrize(
    "target, says",
    [("/proc/x.json", "cannot write in /proc"), ("{tmp}", "is a directory"),
     ("/nonexistent/x.json", "no such directory")],
    ids=["proc", "directory", "missing-folder"],
)  # fmt: skip
def test_unwritable_output_is_refused_before_the_first_pair(
    tmp_path: Path, command: tuple[str, ...], option: str, target: str, says: str
) -> None:
    r = run_cli(*command, option, target.format(tmp=tmp_path), timeout=60)
    line = one_line(r, 2)
    assert says in line and option in line, line
    # Nothing was measured: no block, cell or check line came out.
    assert "block 1" not in r.stdout and "p50" not in r.stdout and "pair" not in r.stdout


# --- 2: a disk that fills while measuring keeps the record --------------------------


# Each measures for 2 s or more, so the disk is full before the record is written.
@pytest.mark.parametrize(
    "command, option",
    [(AB, "--json"), ((*MATRIX, "--seconds", "2"), "--json"), (CHECK, "--record")],
    ids=["ab", "matrix", "check"],
)  # fmt: skip
def test_full_disk_keeps_the_record_in_the_temp_dir(
    filling_disk, command: tuple[str, ...], option: str
) -> None:
    full = filling_disk(" ".join(command), option)
    assert full.run.returncode == 1, full.run.stderr
    assert "Traceback" not in full.run.stderr, full.run.stderr
    assert "No space left on device" in full.line, full.line
    assert json.loads(full.kept.read_text())["schema"].startswith("ipctop.")


# --- 3: SIGTERM while --restore-cmd runs waits for the restore ----------------------


def test_sigterm_during_restore_cmd_lets_the_restore_finish(tmp_path: Path) -> None:
    done = tmp_path / "R"
    started = tmp_path / "S"
    restore = f"touch {started}; sleep 1.5; touch {done}"
    proc = subprocess.Popen([sys.executable, "-m", "ipctop", *AB, "--restore-cmd", restore],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        # The restore's shell is running once it has touched S (ab has measured by then).
        assert wait_for(started.exists, 60), "the restore command never started"
        shells = [c for c in psutil.Process(proc.pid).children() if c.name() == "sh"]
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert shells, "the restore's shell was not a child of ipctop"
    assert done.exists(), f"the restore was killed: {err}"
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err, err
