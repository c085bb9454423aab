"""On the host: boot the small lab guest (8 CPUs, 2 sockets, 2 nodes, SMT 2) and run
tests/lab inside it; and kill a guest by timeout and by SIGTERM.

They run wherever the lab's needs are installed (`python -m ipctop.lab --needs`;
.ci/run installs them), so the README's `pytest` runs them; they skip with the
install line where the needs are missing, and inside a guest. All are slow
(tests/conftest.py SLOW_FILES): `pytest -m "not slow"` leaves them out. The
smoke boot is CI's (under 6 minutes on a quiet host); the --short run took
16 minutes under TCG and needs IPCTOP_LAB=1. Timings in lab.json are
emulation and are not judged.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import psutil
import pytest
from conftest import ROOT
from labguest import IN_GUEST

from ipctop.lab.needs import missing, missing_line

_gaps = missing()
pytestmark = [
    pytest.mark.skipif(IN_GUEST, reason="already inside a lab guest"),
    pytest.mark.skipif(bool(_gaps), reason=missing_line(_gaps) if _gaps else ""),
]
long_run = pytest.mark.skipif(
    os.environ.get("IPCTOP_LAB") != "1",
    reason="boots a guest for over 15 minutes under TCG: IPCTOP_LAB=1 pytest tests/lab runs it",
)


def _lab(*args: str) -> list[str]:
    return [sys.executable, "-m", "ipctop.lab", *args]


def _guest_processes(out: Path) -> list[psutil.Process]:
    """vng, virtme-run and qemu of a guest: each names the out folder on its command line."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        if str(out) in " ".join(p.info["cmdline"] or ()):
            found.append(p)
    return found


def _run_to_the_end(argv: list[str], timeout: float) -> subprocess.CompletedProcess:
    """Like subprocess.run, but a test that runs out of time stops the lab with SIGTERM:
    subprocess.run's SIGKILL would leave the guest's process group running."""
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        proc.terminate()
        proc.communicate(timeout=60)
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


@pytest.mark.timeout(600)
def test_timeout_kills_the_whole_guest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = _run_to_the_end(
        _lab("--cpus", "8", "--accel", "tcg", "--timeout", "20", "--out", str(out)), timeout=300
    )
    assert res.returncode == 1, res.stderr
    assert "guest killed after --timeout 20 s" in res.stderr
    assert "Traceback" not in res.stderr
    assert not _guest_processes(out)
    assert json.loads((out / "lab.json").read_text())["returncode"] is None


@pytest.mark.timeout(600)
def test_a_boot_that_does_not_reach_its_command_is_killed_and_tried_once_more(
    tmp_path: Path,
) -> None:
    """No guest boots in 5 s under TCG, so both boots hit --boot-timeout: the real path a
    hung boot takes (one in four quiet 64-CPU boots here never reached its command)."""
    out = tmp_path / "out"
    argv = _lab("--cpus", "8", "--accel", "tcg", "--boot-timeout", "5", "--out", str(out))
    res = _run_to_the_end(argv, timeout=300)
    assert res.returncode == 1, res.stderr
    assert res.stderr.count("did not reach its command in 5 s") == 2, res.stderr
    assert "killed; booting once more" in res.stderr
    assert "Traceback" not in res.stderr
    assert not _guest_processes(out)
    summary = json.loads((out / "lab.json").read_text())
    assert summary["boot_seconds"] is None and summary["boot_retried"] is True


@pytest.mark.timeout(600)
def test_sigterm_kills_the_whole_guest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.Popen(
        _lab("--cpus", "8", "--accel", "tcg", "--out", str(out)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not any("qemu-system" in " ".join(p.cmdline()) for p in _guest_processes(out)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "qemu never started"
            time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert "the guest was killed" in err and "Traceback" not in err
    assert not _guest_processes(out)
    summary = json.loads((out / "lab.json").read_text())  # a stopped try still says what it was
    assert summary["stopped_by"] == "SIGTERM" and summary["preset"] == 8
    assert summary["numa_balancing"] == "off"


def _junit_counts(out: Path) -> tuple[dict[str, int], list[ET.Element]]:
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    counts = {k: int(suite.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")}
    guest_tests = [
        tc for tc in suite.iter("testcase") if ".test_guest_" in "." + tc.get("classname", "")
    ]
    return counts, guest_tests


@pytest.mark.timeout(1200)
def test_smoke_guest_runs_the_topology_and_proc_tests_on_its_own_kernel(tmp_path: Path) -> None:
    # A boot hung once (under load, 14 min without reaching its command; the smoke
    # run takes about 190 s): a guest that never reached its command is booted once
    # more, and a second hang fails. A guest that ran its command is judged as it is.
    for attempt in (1, 2):
        out = tmp_path / f"out{attempt}"
        # A boot that hangs (TCG, now and then) is tried once more after 300 s.
        argv = _lab(
            "--cpus", "8", "--smoke", "--boot-timeout", "300", "--timeout", "780", "--out", str(out)
        )  # fmt: skip
        res = _run_to_the_end(argv, timeout=840)
        reached = (out / "facts" / "uname.txt").exists()
        if reached or attempt == 2:
            break
        print(f"lab guest never reached its command (attempt 1): {res.stderr[-400:]}")
    log = (out / "pytest.log").read_text() if (out / "pytest.log").exists() else res.stderr
    assert res.returncode == 0, log[-4000:]
    assert not _guest_processes(out)
    summary = json.loads((out / "lab.json").read_text())
    assert summary["scope"] == "smoke" and summary["returncode"] == 0
    assert summary["accelerator"] in ("kvm", "tcg") and summary["note"]
    counts, guest_tests = _junit_counts(out)
    # Each topology and /proc test ran in the guest, none skipped, nothing else collected.
    names = {tc.get("classname", "").rsplit(".", 1)[-1] for tc in guest_tests}
    assert names == {"test_guest_topology", "test_guest_procfs"}, names
    assert len(guest_tests) >= 6, counts
    assert all(tc.find("skipped") is None for tc in guest_tests), log[-4000:]
    assert counts["failures"] == counts["errors"] == 0, counts
    # The guest's own kernel, not the host's.
    release = Path(summary["kernel"]).name.removeprefix("vmlinuz-")
    assert release in (out / "facts" / "uname.txt").read_text()
    lscpu = (out / "facts" / "lscpu-p.csv").read_text()
    assert sum(1 for ln in lscpu.splitlines() if ln[:1].isdigit()) == 8


@long_run
@pytest.mark.timeout(3000)
def test_small_guest_runs_the_in_guest_tests_and_brings_back_what_they_made(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    res = _run_to_the_end(_lab("--cpus", "8", "--short", "--out", str(out)), timeout=2700)
    log = (out / "pytest.log").read_text() if (out / "pytest.log").exists() else res.stderr
    assert res.returncode == 0, log[-4000:]
    assert not _guest_processes(out)
    summary = json.loads((out / "lab.json").read_text())
    assert summary["accelerator"] in ("kvm", "tcg") and summary["note"]
    assert summary["boot_seconds"] is not None and summary["returncode"] == 0
    counts, guest_tests = _junit_counts(out)
    # Every in-guest test ran there (only the host-side ones skip inside a guest).
    assert len(guest_tests) >= 8, counts
    assert all(tc.find("skipped") is None for tc in guest_tests), log[-4000:]
    assert counts["failures"] == counts["errors"] == 0, counts
    lscpu = (out / "facts" / "lscpu-p.csv").read_text()
    assert sum(1 for ln in lscpu.splitlines() if ln[:1].isdigit()) == 8
    # --short: check and matrix on 4 CPUs that hold every class.
    assert (out / "records" / "check-guest-4cpu.json").exists()
    assert (out / "records" / "matrix-guest-4cpu.json").exists()
