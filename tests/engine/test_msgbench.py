"""sysv-lifecycle as msgbench: phases over M queues, each timed, nothing left behind.

As root each unit's thread makes IPC_PRIVATE queues in an IPC namespace of its
own, as msgbench made them; the tests read that namespace through the thread's
/proc/<pid>/task/<tid>/ns/ipc. Without CAP_SYS_ADMIN (here: dropped from the
bounding set with setpriv, a real unprivileged start) the queues carry
ipctop's key prefix and a session tag. The exit tests run in a private IPC
namespace (`unshare -i`), where every queue is ours and a count says it all.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from ipctop.engine.engine import Engine, RunConfig, resolve_engine
from ipctop.engine.reaper import IDS_OFFSET, session_dir
from ipctop.engine.workloads.msgbench import LIFECYCLE_OPS

native = pytest.mark.skipif(resolve_engine() != "native", reason="needs the native engine")
as_root = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("nsenter"),
    reason="needs root (an own IPC namespace per thread) and nsenter to look into it",
)
# Runs a command without CAP_SYS_ADMIN, so the loop cannot unshare and keys its queues.
NO_ADMIN = "setpriv --bounding-set -sys_admin"
private_ns = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare"),
    reason="needs root and unshare for a private IPC namespace",
)


def _queues(ns: str | None = None) -> list[list[str]]:
    """/proc/sysvipc/msg's rows (key, id, ...) in our IPC namespace, or in the one
    `ns` (an ns/ipc path) names."""
    if ns is None:
        text = Path("/proc/sysvipc/msg").read_text()
    else:
        text = subprocess.run(["nsenter", f"--ipc={ns}", "cat", "/proc/sysvipc/msg"],
                              capture_output=True, text=True, check=True).stdout  # fmt: skip
    return [ln.split() for ln in text.splitlines()[1:]]


def _queue_ids(ns: str | None = None) -> set[int]:
    return {int(row[1]) for row in _queues(ns)}


def _thread_ns(e: Engine) -> str:
    end = e.ends()[0]
    return f"/proc/{end.pid}/task/{end.tid}/ns/ipc"


def _listed(area, start: int, n: int) -> list[int]:
    return list(struct.unpack_from(f"<{n}i", area, IDS_OFFSET + 4 * start))


def _wait_repeats(e: Engine, n: int, patience: float = 30.0) -> None:
    deadline = time.monotonic() + patience
    while any(p.res.py[0].repeats() < n for p in e.pairs):
        assert time.monotonic() < deadline, "msgbench did not finish its repeats"
        time.sleep(0.02)


def _in_namespace(script: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["unshare", "-i", "sh", "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)  # fmt: skip


COUNT = "echo queues-left $(($(wc -l < /proc/sysvipc/msg) - 1))"
# Polls (up to 60 s) until the run holds over 1,000 queues: a loaded box starts it late.
UNTIL_QUEUES = "i=0; while [ $(wc -l < /proc/sysvipc/msg) -lt 1000 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done"
# After a kill the reaper removes the keyed queues: on a loaded box that takes seconds.
# Polled for up to 60 s, and the wait is printed.
UNTIL_REAPED = ("i=0; while [ $(wc -l < /proc/sysvipc/msg) -gt 1 ] && [ $i -lt 600 ]; "
                "do sleep 0.1; i=$((i+1)); done; echo reaped after $i x 0.1 s")  # fmt: skip
# Polls (up to 60 s) until the run's tasks have held a namespace of their own, or, keyed,
# our namespace holds its queues: the phase the test kills it in.
UNTIL_OWN = ("i=0; while [ -z \"$(own_ns)\" ] && [ $(wc -l < /proc/sysvipc/msg) -lt 1000 ] "
             "&& [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; sleep 1")  # fmt: skip


@native
@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_each_phase_has_its_own_rate_over_repeats(mode: str) -> None:
    m = 256
    with Engine(RunConfig("sysv-lifecycle", "same", mode, (0,), "native", queues=m)) as e:
        e.start(1)
        _wait_repeats(e, 4)
        stats = e.workload.phase_stats(e.pairs)
        slot = e.ends()[0].slot
        e.counters.request_stop(slot)
        deadline = time.monotonic() + 10
        while e.counters.read(slot).state == "running":
            assert time.monotonic() < deadline, "the msgbench loop did not stop"
            time.sleep(0.01)
        r = e.counters.read(slot)
    assert stats is not None and list(stats) == list(LIFECYCLE_OPS)
    for name, s in stats.items():
        assert s.n is not None and s.n >= 4, (name, s)
        assert s.min <= s.avg <= s.max and s.stddev >= 0
    # Five phases timed apart: five rates, not one number copied five times.
    assert len({round(s.avg) for s in stats.values()}) > 1, stats
    ops = dict(zip(LIFECYCLE_OPS, r.ops))
    assert r.state == "done"
    # Phases run in order over all M queues; a stop ends a repeat mid-phase.
    assert ops["msgget"] >= ops["msgsnd"] >= ops["IPC_STAT"] >= ops["MSG_STAT"]
    assert ops["MSG_STAT"] >= ops["IPC_RMID"] == r.rounds
    assert r.rounds % m == 0 and r.rounds >= 4 * m


@native
@as_root
@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_prefilled_private_queues_live_in_the_threads_own_namespace(mode: str) -> None:
    cfg = RunConfig("sysv-lifecycle", "same", mode, (0,), "native", queues=64, prefill=128)
    before = _queue_ids()
    with Engine(cfg) as e:
        e.start(1)
        _wait_repeats(e, 2)
        area = e.pairs[0].res.shm
        idle = _listed(area, 64, 128)
        assert all(i >= 0 for i in idle)
        ns = _thread_ns(e)
        assert os.readlink(ns) != os.readlink("/proc/self/ns/ipc")
        assert e.pairs[0].res.py[0].keys() == "private"
        # 128 real queues with key 0, held through every repeat, none of them in ours.
        assert set(idle) <= _queue_ids(ns)
        assert {row[0] for row in _queues(ns)} == {"0"}
        # Other processes on the box may make and remove queues in ours meanwhile
        # (a CI run beside other work); a queue of this run would carry one of its
        # ends as the last sender or receiver (/proc/sysvipc/msg's lspid, lrpid).
        ends = {os.getpid(), *(end.pid for end in e.ends())}
        mine = [r for r in _queues() if int(r[1]) not in before and {int(r[5]), int(r[6])} & ends]
        assert not mine, mine
        assert "128 prefilled" in e.describe() and "own IPC namespace" in e.describe()


def test_queues_over_msgmni_is_exit_3_naming_it() -> None:
    msgmni = int(Path("/proc/sys/kernel/msgmni").read_text())
    r = run_cli("run", "-w", "sysv-lifecycle", "--queues", str(msgmni + 1), "--seconds", "1")
    assert r.returncode == 3, r.stderr
    # A shared box may add a note about someone else's leftovers; the error is one line.
    lines = [ln for ln in r.stderr.strip().splitlines() if not ln.startswith("ipctop: note:")]
    assert len(lines) == 1 and "kernel.msgmni" in lines[0] and "--queues" in lines[0]
    assert "Traceback" not in r.stderr


@private_ns
def test_queues_over_msgmni_creates_nothing() -> None:
    r = _in_namespace(
        "echo 100 > /proc/sys/kernel/msgmni && "
        f"{sys.executable} -m ipctop run -w sysv-lifecycle --queues 101 --seconds 1; "
        f"echo rc=$?; {COUNT}"
    )
    assert "rc=3" in r.stdout and "queues-left 0" in r.stdout, (r.stdout, r.stderr)


@private_ns
@native
def test_default_is_32768_capped_by_msgmni_with_the_cap_stated(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = _in_namespace(
        f"echo 600 > /proc/sys/kernel/msgmni && {sys.executable} -m ipctop sweep "
        f"-w sysv-lifecycle --cpus 0 --max-pairs 1 --seconds 0.5 --warmup 0.2 --repeat 1 "
        f"--json {out}; {COUNT}"
    )
    assert r.returncode == 0, r.stderr
    assert "600 queues, msgbench's 32768 capped by kernel.msgmni 600" in r.stdout
    assert "queues-left 0" in r.stdout
    import json

    config = json.loads(out.read_text())["config"]
    assert config["queues"] == 600 and "capped" in config["queues_note"]
    assert config["queue_keys"] == "private" and "own IPC namespace" in r.stdout
    step = json.loads(out.read_text())["steps"][0]
    assert set(step["ops"]) == set(LIFECYCLE_OPS)


# What the run's own tasks are, and which IPC namespaces they hold: noted every 50 ms
# while it runs, as "tid starttime ns" lines in $seen. Only the run's tasks count: any
# other task on the machine (a container, another `unshare -i`, a second copy of this
# suite) may make or hold namespaces meanwhile, and is none of this test's business.
# A tid is the same task only with the same start time (tids are reused).
WATCH = (
    "before=$(readlink /proc/self/ns/ipc); seen=$(mktemp); "
    "tree() { echo $1; for c in $(pgrep -P $1); do tree $c; done; }; "
    # stat's fields after "(comm) " (comm may hold spaces), read without a fork:
    # $1 the state, ${20} the start time.
    "stat_of() { read -r l < /proc/$1/stat || return; l=${l##*') '}; echo $l; }; "
    "start_of() { set -- $(stat_of $1 2>/dev/null); echo ${20}; }; "
    # Until the run has gone or is a zombie (which kill -0 would still find).
    "state_of() { set -- $(stat_of $1 2>/dev/null); echo $1; }; "
    'watch() { while s=$(state_of $1); [ -n "$s" ] && [ "$s" != Z ]; do '
    "for p in $(tree $1); do for t in /proc/$p/task/*; do "
    'n=$(readlink $t/ns/ipc 2>/dev/null) && echo "${t##*/} $(start_of ${t##*/}) $n"; '
    "done; done; sleep 0.2; done >> $seen 2>/dev/null; }; "
    # The run's own namespaces: those its tasks held, other than the one it started in.
    "own_ns() { cut -d' ' -f3 $seen | sort -u | grep -vxF \"$before\"; }; "
)
# How many queues the run's own namespaces hold, read through one of its tasks in each.
IN_OWN_NS = (
    "n=0; for l in $(own_ns); do t=$(grep -F \" $l\" $seen | tail -1 | cut -d' ' -f1); "
    "n=$((n + $(nsenter --ipc=/proc/$t/ns/ipc cat /proc/sysvipc/msg | wc -l) - 1)); done; "
    "echo own-ns-queues $n"
)
# Each namespace the run made is freed with its last task: none of the tasks that held
# one may still live. (Its queues go with it; the run's queues in ours are COUNT's.)
# The kernel takes a while to end a killed run's processes on a loaded box: polled for
# up to 60 s, and the wait is printed.
OWN_NS_HELD = (
    'held() { n=0; while read tid start ns; do [ "$ns" = "$before" ] && continue; '
    '[ -n "$start" ] && [ "$(start_of $tid)" = "$start" ] && n=$((n + 1)); done < $seen; '
    "echo $n; }; i=0; while [ $(held) -gt 0 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; "
    "echo own-ns-seen $(own_ns | wc -l) own-ns-held $(held) after $i x 0.1 s; rm -f $seen"
)


@private_ns
@native
@pytest.mark.parametrize("keys", ["private", "tagged"])
@pytest.mark.parametrize("mode", ["threads", "processes"])
@pytest.mark.parametrize("how", ["stop", "SIGINT", "SIGKILL"])
@pytest.mark.timeout(300)  # a loaded box starts and ends the run's processes late
def test_no_queue_outlives_any_exit(mode: str, how: str, keys: str) -> None:
    prefix = "" if keys == "private" else f"{NO_ADMIN} "
    run = (f"{prefix}{sys.executable} -m ipctop run -w sysv-lifecycle --mode {mode} --cpus 0 "
           "--queues 3000 --prefill 500")  # fmt: skip
    if how == "stop":
        script = (f"{WATCH}{run} --seconds 1 > /dev/null & pid=$!; watch $pid; wait $pid; "
                  f"{COUNT}; {OWN_NS_HELD}")  # fmt: skip
    else:
        sig = "-INT" if how == "SIGINT" else "-KILL"
        # Killed mid-phase, thousands of queues alive; the reaper (or the signal path)
        # removes the keyed ones, the kernel frees an own namespace with its last task.
        script = (f"{WATCH}{run} --seconds 60 > /dev/null 2>&1 & pid=$!; watch $pid & w=$!; "
                  f"{UNTIL_OWN}; {IN_OWN_NS}; kill {sig} $pid; wait $pid; wait $w; "
                  f"{UNTIL_REAPED}; {COUNT}; {OWN_NS_HELD}")  # fmt: skip
    r = _in_namespace(script, timeout=280)
    assert "queues-left 0" in r.stdout and "own-ns-held 0" in r.stdout, (r.stdout, r.stderr)
    seen = int(r.stdout.split("own-ns-seen ")[1].split()[0])
    # Private: each unit's thread made its own namespace; tagged: it could not.
    assert seen >= 1 if keys == "private" else seen == 0, r.stdout
    if how != "stop":
        held = int(r.stdout.split("own-ns-queues ")[1].split()[0])
        # Private: the thousands were in the unit's namespace; tagged: in ours, none apart.
        assert held >= 500 if keys == "private" else held == 0, r.stdout


@private_ns
@native
@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_clean_finds_every_queue_after_engine_and_reaper_are_killed(mode: str) -> None:
    # The worst case without an own namespace: no reaper to sweep. Every queue
    # must carry an ipctop key (a key-0 queue is nobody's to clean), so
    # `ipctop clean` removes them all.
    run = (f"{NO_ADMIN} {sys.executable} -m ipctop run -w sysv-lifecycle --mode {mode} "
           "--cpus 0 --queues 3000 --prefill 500 --seconds 60")  # fmt: skip
    r = _in_namespace(
        f"{run} > /dev/null 2>&1 & pid=$!; {UNTIL_QUEUES}; "
        "echo keyless $(awk 'NR > 1 && $1 == 0' /proc/sysvipc/msg | wc -l); "
        "kill -KILL $(pgrep -P $pid -f ipctop.engine.reaper); kill -KILL $pid; wait $pid; "
        f"sleep 1; {sys.executable} -m ipctop clean | tail -1; {COUNT}; "
        f"echo areas-left $(ls {session_dir()} | grep -c ^msgbench-$pid-)"
    )
    assert "keyless 0" in r.stdout and "queues-left 0" in r.stdout, (r.stdout, r.stderr)
    assert "areas-left 0" in r.stdout, r.stdout  # the unit's shared area file went too
    assert "object(s) removed" in r.stdout, r.stdout


@native
@as_root
def test_without_cap_sys_admin_the_queues_are_keyed_and_it_says_so() -> None:
    r = subprocess.run(
        [*NO_ADMIN.split(), sys.executable, "-m", "ipctop", "run", "-w", "sysv-lifecycle",
         "--cpus", "0", "--queues", "64", "--seconds", "0.5"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "keyed queues (no CAP_SYS_ADMIN" in r.stdout.splitlines()[0], r.stdout
