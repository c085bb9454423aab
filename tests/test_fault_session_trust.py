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


# --- 5: POSIX queues of a killed run, with no mqueue file system at /dev/mqueue ------


@root
def test_clean_removes_posix_queues_without_dev_mqueue_mounted(tmp_path: Path) -> None:
    if os.path.ismount("/dev/mqueue"):
        pytest.skip("/dev/mqueue is mounted here: clean lists the queues there")
    mq = tmp_path / "mq"
    mq.mkdir()
    # The test's own view of the private namespace's queues, away from /dev/mqueue.
    count = f"$(ls {mq} | grep -c '^ipctop-')"
    r = sh(
        f"mount -t mqueue none {mq} && "
        f"({PY} -m ipctop run -w posix-mq --cpus 0 --pairs 2 --seconds 20 >/dev/null 2>&1 & "
        f"E=$!; i=0; while [ {count} -lt 4 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; "
        f"R=$(pgrep -P $E -f ipctop.engine.reaper); kill -KILL $E $R; wait $E; "
        f"echo before={count}; {PY} -m ipctop clean; echo after={count})",
        ns=("-i", "-m", "--propagation", "private"),
    )
    assert "before=4" in r.stdout, (r.stdout, r.stderr)
    assert "after=0" in r.stdout, (r.stdout, r.stderr)
    assert r.stdout.count("removed posix queue /ipctop-") == 4, r.stdout
    assert "Traceback" not in r.stderr, r.stderr
