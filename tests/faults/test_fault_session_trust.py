"""Issue 27, findings 4, 6, 8, 11 (a FIFO session file) and 16: the session directory.

ipctop trusts its session directory to say which objects are in use: a live
run must stay claimed even without a reaper, the directory must be the user's
own and private, and whatever else lies in it (a FIFO, a folder, a file left
by a full disk) must neither hang nor break `run` and `clean`. Real runs in
private IPC namespaces (`unshare -i`), real users (nobody) where another user
is the point; the autouse fixture checks that nothing leaked.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from private_fs import fill, tmpfs_over
from terminal import Terminal

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
    # The run outlasts any start-up of clean on a loaded box; SIGTERM ends it after.
    r = sh(
        f'{PY} -c "{NO_REAPER}" run --cpus 0 --seconds 120 --interval 0.5 > {out} 2>&1 & '
        f"{WAIT_FOR_QUEUE} {PY} -m ipctop clean; echo queues=$(($(wc -l < /proc/sysvipc/msg)-1)); "
        "echo reapers=$(pgrep -P $! -f ipctop.engine.reaper); kill -TERM $!; wait $!; echo run-exit=$?",
        timeout=180,
    )
    run_out = out.read_text()
    assert "reapers=\n" in r.stdout, r.stdout  # the run did go without its reaper
    assert "queues=1" in r.stdout, (r.stdout, run_out)  # still there after clean
    assert "run-exit=143" in r.stdout, (r.stdout, run_out)  # and it ended by the signal
    assert "kept    msg" in r.stdout and "removed msg" not in r.stdout, r.stdout
    assert "Traceback" not in r.stderr + run_out


# --- 5: POSIX queues of a killed run, with no mqueue file system at /dev/mqueue ------


@root
@pytest.mark.parametrize(
    "command",
    [
        "run -w posix-mq --cpus 0 --pairs 2 --seconds 20",
        # ab's slots make and remove their queues as run does (the issue: "same with ab").
        "ab -w posix-mq --cpus 0 --pairs 2 --max-seconds 30 --precision 1 --window 0.2 --settle 0",
    ],
    ids=["run", "ab"],
)
def test_clean_removes_posix_queues_without_dev_mqueue_mounted(tmp_path: Path, command) -> None:
    mq = tmp_path / "mq"
    mq.mkdir()
    # The test's own view of the private namespace's queues, away from /dev/mqueue.
    count = f"$(ls {mq} | grep -c '^ipctop-')"
    r = sh(
        # Unmounted in the test's own mount namespace only, where the box mounts it.
        f"(! mountpoint -q /dev/mqueue || umount /dev/mqueue) && mount -t mqueue none {mq} && "
        f"({PY} -m ipctop {command} >/dev/null 2>&1 & "
        f"E=$!; i=0; while [ {count} -lt 4 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; "
        f"R=$(pgrep -P $E -f ipctop.engine.reaper); kill -KILL $E $R; wait $E; "
        f"echo before={count}; {PY} -m ipctop clean; echo after={count})",
        ns=("-i", "-m", "--propagation", "private"),
    )
    assert "before=4" in r.stdout, (r.stdout, r.stderr)
    assert "after=0" in r.stdout, (r.stdout, r.stderr)
    assert r.stdout.count("removed posix queue /ipctop-") == 4, r.stdout
    assert "Traceback" not in r.stderr, r.stderr


# --- 8 and 16: a session directory that is not the user's own and private -----------

USER = 54321  # a uid nobody on the box uses: its /tmp/ipctop-54321 is the test's alone
# setpriv execs the interpreter itself: through env, exec as the user meets /root's 0700.
AS_USER = f"env -u XDG_RUNTIME_DIR setpriv --reuid={USER} --regid={USER} --clear-groups"
# A tmpfs on /tmp (or /run), seen only by the test; tmpfs_over binds this checkout back.
PRIVATE_TMP = ("-m", "--propagation", "private")


def one_line(r: subprocess.CompletedProcess, code: int) -> str:
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    return one_line_of(r.stderr)


def one_line_of(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@root
@pytest.mark.parametrize(
    "make, says",
    [
        # Another user got there first and left it open to all (then forged a session file).
        (f"mkdir -m 0777 /tmp/ipctop-{USER} && chown 1:1 /tmp/ipctop-{USER}", "belongs to uid 1"),
        (f"mkdir -m 0700 /tmp/ipctop-{USER}", "belongs to uid 0"),  # root's: no PermissionError
        (f"mkdir -m 0777 /tmp/ipctop-{USER} && chown {USER}:{USER} /tmp/ipctop-{USER}",
         "is mode 0777"),
        (f"ln -s /tmp /tmp/ipctop-{USER}", "is not a directory"),
    ],
    ids=["other-users-0777", "roots-0700", "own-but-0777", "symlink"],
)  # fmt: skip
@pytest.mark.parametrize("command", ["clean", "run --cpus 0 --seconds 0.3"], ids=["clean", "run"])
def test_an_untrusted_session_directory_is_refused(make: str, says: str, command: str) -> None:
    r = sh(
        f"{tmpfs_over('/tmp')} && {make} && "
        f"echo '1 cpus=0' > /tmp/ipctop-{USER}/abc 2>/dev/null; "
        f"{AS_USER} {PY} -m ipctop {command}",
        ns=("-i", *PRIVATE_TMP),
    )
    line = one_line(r, 2)
    assert f"/tmp/ipctop-{USER}" in line and says in line, line


@root
def test_another_users_link_named_like_a_perf_folder_is_left_alone() -> None:
    # Found by the issue 27 audit (finding 8's "every file ipctop trusts"): clean judged
    # /tmp/ipctop-perf-PID-* by what a link points at, so uid 1's links to the user's
    # own file and folder were "ours": a PermissionError traceback (sticky /tmp), and
    # a folder "removed" that was not.
    attacker = "setpriv --reuid=1 --regid=1 --clear-groups"
    r = sh(
        f"{tmpfs_over('/tmp', 'mode=1777')} && mkdir -m 0700 /tmp/v && echo keep > /tmp/v/f "
        f"&& chown -R {USER}:{USER} /tmp/v && {attacker} ln -s /tmp/v/f /tmp/ipctop-perf-99999-x "
        f"&& {attacker} ln -s /tmp/v /tmp/ipctop-perf-99998-y && "
        f"{AS_USER} {PY} -m ipctop clean; echo exit=$?; ls /tmp; cat /tmp/v/f",
        ns=("-i", *PRIVATE_TMP),
    )
    assert "Traceback" not in r.stderr, r.stderr
    assert "exit=0" in r.stdout, (r.stdout, r.stderr)
    assert "removed /tmp/ipctop-perf" not in r.stdout, r.stdout
    assert "ipctop-perf-99999-x" in r.stdout and "ipctop-perf-99998-y" in r.stdout, r.stdout
    assert r.stdout.strip().splitlines()[-1] == "keep", r.stdout


@root
def test_a_fresh_session_directory_is_made_private() -> None:
    r = sh(
        f"{tmpfs_over('/tmp')} && {AS_USER} {PY} -m ipctop clean && "
        f"stat -c '%a %u' /tmp/ipctop-{USER}",
        ns=("-i", *PRIVATE_TMP),
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == f"700 {USER}", r.stdout


@root
@pytest.mark.parametrize("command", ["clean", "run --cpus 0 --seconds 0.3"], ids=["clean", "run"])
def test_read_only_run_and_tmp_is_one_line(command: str) -> None:
    r = sh(
        f"{tmpfs_over('/run', 'ro')} && {tmpfs_over('/tmp', 'ro')} && "
        f"env -u XDG_RUNTIME_DIR {PY} -m ipctop {command}",
        ns=("-i", *PRIVATE_TMP),
    )
    line = one_line(r, 3)
    assert "no writable directory for ipctop's session files" in line, line


# --- 11 and 16: a FIFO or a folder named like a session tag ---------------------------


@root
@pytest.mark.parametrize("make", ["mkfifo", "mkdir"])
# The run lasts past the engine's first look at the other sessions (after 1 s).
@pytest.mark.parametrize("command", ["clean", "run --cpus 0 --seconds 2"], ids=["clean", "run"])
def test_a_fifo_or_folder_named_like_a_tag_is_passed_over(make: str, command: str) -> None:
    # The engine reads every session file (contention) and clean judges each: neither
    # may block on a FIFO's open or unlink a folder.
    r = sh(
        f"{tmpfs_over('/run')} && mkdir -m 0700 /run/ipctop && {make} /run/ipctop/abc && "
        # Older than clean's grace for a claim in progress, so clean does judge it.
        "touch -d @0 /run/ipctop/abc && "
        f"env -u XDG_RUNTIME_DIR {PY} -m ipctop {command}; echo exit=$?; ls /run/ipctop",
        ns=("-i", *PRIVATE_TMP),
    )
    assert "exit=0" in r.stdout, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "abc", r.stdout  # left as it was, nothing else


# --- 6: a full /run/ipctop, and a monitor SIGKILLed while it holds the live lock -----


# tmpfs gives a file its inode but not its first block: the O_EXCL create of the claim
# succeeds and the write of its pid fails, as on a full disk. With no inode left the
# create itself fails (an inode-exhausted disk).
FULL = {
    "full": f"{tmpfs_over('/run', 'size=64k')} && mkdir -m 0700 /run/ipctop && {fill('/run/fill')}",
    "no-inodes": f"{tmpfs_over('/run', 'nr_inodes=64')} && mkdir -m 0700 /run/ipctop && "
    "i=0; while touch /run/f$i 2>/dev/null; do i=$((i+1)); done",
}


@root
@pytest.mark.parametrize("disk", list(FULL))
def test_a_full_session_directory_is_named_and_leaves_no_empty_claim(disk: str) -> None:
    r = sh(
        f"{FULL[disk]}; "
        f"env -u XDG_RUNTIME_DIR {PY} -m ipctop run --cpus 0 --seconds 0.3; echo exit=$?; "
        "echo files: $(ls /run/ipctop)",
        ns=("-i", *PRIVATE_TMP),
    )
    assert "exit=1" in r.stdout, (r.stdout, r.stderr)
    line = one_line_of(r.stderr)
    # Issue 27 #21: a full one read "cannot write the output: No space left on device".
    assert line.startswith("ipctop: cannot write /run/ipctop/"), line
    assert line.endswith(": No space left on device"), line
    assert r.stdout.strip().splitlines()[-1] == "files:", r.stdout


@root
def test_a_sweep_on_a_full_session_directory_names_it_and_keeps_an_interrupted_record(
    tmp_path: Path,
) -> None:
    out = tmp_path / "sweep.json"
    r = sh(
        f"{FULL['full']}; env -u XDG_RUNTIME_DIR {PY} -m ipctop sweep -w sysv-sem "
        "--max-pairs 1 --cpus 0 --seconds 0.3 --warmup 0 --repeat 1 -q "
        f"--json {out}; echo exit=$?",
        ns=("-i", *PRIVATE_TMP),
    )
    assert "exit=1" in r.stdout, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    said = r.stderr.strip().splitlines()
    assert any(ln.startswith("ipctop: cannot write /run/ipctop/") for ln in said), said
    assert f"record written to {out} (interrupted after 0 step(s))" in said, said
    rec = json.loads(out.read_text())
    assert rec["interrupted"] is True and rec["steps"] == []


@root
def test_clean_removes_the_live_lock_of_a_monitor_killed_in_its_ab(tmp_path: Path) -> None:
    # A folder of the test's bound over /run/ipctop in the monitor's own mount namespace:
    # what the SIGKILL leaves is seen afterwards, and no other session's lock is touched.
    run = tmp_path / "ipctop"
    run.mkdir(mode=0o700)
    bind = f"mkdir -p -m 0700 /run/ipctop && mount --bind {run} /run/ipctop"
    private = ["unshare", "-i", "-m", "--propagation", "private", "sh", "-c"]
    monitor = f"{bind} && exec {PY} -m ipctop --cpus 0 --interval 0.1"
    launcher = f"import os; os.execvp('unshare', {[*private, monitor]!r})"
    # IPCTOP_LIVE_LOCK empty: the lock in the session directory, as for any user.
    with Terminal("-c", launcher, python_args=True, env={"IPCTOP_LIVE_LOCK": ""}) as t:
        assert t.wait_for_text("pairs 1/", 60), t.output[-500:]
        t.press("a")
        assert t.wait_for_text("A/B against the current setting"), t.output[-500:]
        t.press(*"--mode processes", "\r")
        assert t.wait_for_text("slot 1/", 60), t.output[-500:]
        t.proc.kill()
        t.wait()
    lock = run / "live-session.lock"
    assert lock.is_file()  # what the kill leaves: nothing unlinks it
    clean = f"{bind} && IPCTOP_LIVE_LOCK= {PY} -m ipctop clean"
    held = sh(f"flock {lock} sh -c '{clean}'", ns=("-i", *PRIVATE_TMP))  # a live session's
    assert held.returncode == 0 and lock.is_file(), (held.stdout, held.stderr)
    r = sh(clean, ns=("-i", *PRIVATE_TMP))
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "removed stale live-session lock /run/ipctop/live-session.lock" in r.stdout, r.stdout
    assert not lock.exists() and not list(run.iterdir()), list(run.iterdir())
