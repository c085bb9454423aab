"""Issue 27, findings 4, 6, 8, 11 (a FIFO session file) and 16: the session directory.

ipctop trusts its session directory to say which objects are in use: a live
run must stay claimed even without a reaper, the directory must be the user's
own and private, and whatever else lies in it (a FIFO, a folder, a file left
by a full disk) must neither hang nor break `run` and `clean`. Real runs in
private IPC namespaces (`unshare -i`), real users (nobody) where another user
is the point; the autouse fixture checks that nothing leaked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

root = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare"),
    reason="needs root and unshare for private IPC and mount namespaces",
)
PY = sys.executable

# Stands in for an interpreter the reaper cannot be started with (a venv on a
# path another user cannot reach): Popen of the reaper fails, the run goes on.
NO_REAPER = (
    "import sys; sys.executable = '/nonexistent/python'; "
    "from ipctop.cli import main; sys.exit(main())"
)
# Waits (at most 20 s) until the run in the background has made its queue.
WAIT_FOR_QUEUE = (
    "i=0; while [ $(wc -l < /proc/sysvipc/msg) -lt 2 ] && [ $i -lt 400 ]; "
    "do sleep 0.05; i=$((i+1)); done; "
)


def sh(script: str, *, ns: tuple[str, ...] = ("-i",), timeout: float = 60):
    return subprocess.run(["unshare", *ns, "sh", "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)  # fmt: skip


# --- 4: no reaper, and the user's own clean keeps the live run ------------------------


@root
def test_clean_keeps_a_live_run_whose_reaper_could_not_start(tmp_path: Path) -> None:
    out = tmp_path / "run.out"
    r = sh(
        f'{PY} -c "{NO_REAPER}" run --cpus 0 --seconds 4 --interval 0.5 > {out} 2>&1 & '
        f"{WAIT_FOR_QUEUE} {PY} -m ipctop clean; wait $!; echo run-exit=$?"
    )
    run_out = out.read_text()
    assert "no reaper" in run_out, run_out  # the run did go without its reaper
    assert "run-exit=0" in r.stdout, (r.stdout, run_out)
    assert "kept    msg" in r.stdout and "removed msg" not in r.stdout, r.stdout
    assert "Traceback" not in r.stderr + run_out
