"""Issue 27, findings 17 and 18: `ipctop replay` as the monitor is, in a real pty.

17: a monitor that fails during a replay said nothing and exited 0 (replay ran
the app itself, without the monitor's one-line message and exit 1).
18: replay (and the monitor) refused to start in a directory it cannot write,
though no screenshot was asked for.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run_cli
from terminal import ROOT, Terminal

ANSI = re.compile(r"\x1b\[[0-9;?<>=$]*[a-zA-Z]|\x1b\][^\x07]*\x07|\x07")


def plain(text: str) -> str:
    return ANSI.sub("", text)


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> Path:
    """A real sweep record of this box, to play back."""
    path = tmp_path_factory.mktemp("rec") / "sweep.json"
    r = run_cli("sweep", "-w", "sysv-sem", "--max-pairs", "1", "--cpus", "0", "--seconds", "1",
                "--warmup", "0", "--repeat", "1", "--json", str(path), timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return path


CRASH = """
import sys
from ipctop.tui.widgets.scaling_panel import ScalingPanel
def boom(self, *a, **k):
    raise RuntimeError("injected fault in the chart")
ScalingPanel.update_from = boom
from ipctop.cli import main
sys.exit(main(["replay", sys.argv[1]]))
"""


def test_fake_widget_fault_in_replay_exits_1_with_one_line(record: Path, tmp_path: Path) -> None:
    # FAKE: no known record crashes the app any more (pairs = 1e30 is now refused when
    # read), so a widget is made to raise, as test_fault_tui does for the live monitor.
    script = tmp_path / "crash.py"
    script.write_text(CRASH)
    with Terminal(str(script), str(record), python_args=True, env={"PYTHONPATH": str(ROOT)}) as t:
        code = t.wait(60)
        out = plain(t.output)
    assert code == 1, out[-2000:]
    assert "Traceback" not in out, out[-3000:]
    line = next(ln for ln in out.splitlines() if ln.startswith("ipctop: the monitor failed"))
    assert "RuntimeError: injected fault in the chart" in line
    kept = Path(re.search(r"traceback in (\S+)\)", line).group(1))
    try:
        assert "injected fault in the chart" in kept.read_text()
    finally:
        kept.unlink()


READ_ONLY = """
import ctypes, os, subprocess, sys
d, rec = sys.argv[1], sys.argv[2]
if os.geteuid() == 0:
    # Root writes anywhere but on a read-only mount: one of its own, in a mount namespace.
    if ctypes.CDLL(None, use_errno=True).unshare(0x00020000) != 0:  # CLONE_NEWNS
        sys.exit(90)
    for args in (["--make-rprivate", "/"], ["--bind", d, d], ["-o", "remount,ro,bind", d, d]):
        subprocess.run(["mount", *args], check=True)
else:
    os.chmod(d, 0o555)
os.chdir(d)
try:
    open("probe", "w").close()
    sys.exit(91)  # the directory was writable after all: the test would prove nothing
except OSError:
    pass
from ipctop.cli import main
sys.exit(main(["replay", rec]))
"""


def test_replay_starts_in_a_directory_it_cannot_write(record: Path, tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    script = tmp_path / "ro.py"
    script.write_text(READ_ONLY)
    with Terminal(str(script), str(ro), str(record), python_args=True,
                  env={"PYTHONPATH": str(ROOT)}) as t:  # fmt: skip
        shown = t.wait_for_text("replay", timeout=60)  # the header names the source
        t.press("q")
        code = t.wait(30)
        out = plain(t.output)
    assert code not in (90, 91), out
    assert "cannot write in" not in out, out[-2000:]
    assert shown, out[-2000:]
    assert code == 0, out[-2000:]
