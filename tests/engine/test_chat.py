"""chat: real rooms of 80 threads added and removed live, with nothing left after."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import psutil
import pytest
from conftest import ROOT, run_cli, two_cpus, wait_for
from ipctop_child import ipctop

from ipctop.engine.config import RunConfig
from ipctop.engine.counters import check_slots
from ipctop.engine.engine import Engine
from ipctop.engine.objects import _native
from ipctop.engine.workloads.chat import USERS, room_load
from ipctop.errors import UsageError
from ipctop.live.priority import RAISE

needs_native = pytest.mark.skipif(_native is None, reason="the native extension is not built")


def _sockets() -> int:
    """This process's socket descriptors."""
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            continue  # the listing's own descriptor, closed meanwhile
    return n


def test_a_room_is_80_tasks_40_descriptors_and_a_tcp_backlog() -> None:
    load = room_load(3, "tcp")
    assert (load.tasks, load.fds, load.listen_backlog) == (240, 120, 20)
    assert room_load(1, "unix").listen_backlog == 0


@needs_native
@two_cpus
# Processes mode forks 80 ends a room through the engine's forker: slow on a
# loaded box, so it runs over one transport; the waits are long for the same reason.
@pytest.mark.parametrize(
    ("mode", "transport"), [("threads", "tcp"), ("threads", "unix"), ("processes", "unix")]
)
@pytest.mark.timeout(300)  # 80 forked ends a room on a box that stress-ng shares
def test_rooms_added_and_removed_live_deliver_and_leave_nothing(transport: str, mode: str) -> None:
    cpus = tuple(sorted(os.sched_getaffinity(0))[:2])
    config = RunConfig(workload="chat", cpus=cpus, mode=mode, transport=transport)
    sockets_before = _sockets()
    me = psutil.Process()
    threads_before = me.num_threads()
    engine = Engine(config)
    try:
        engine.start(2)
        room = engine.pairs[0]
        assert len(room.ends) == 4 * USERS
        roles = [e.role for e in room.ends]
        assert roles[0] == "CS0" and roles[USERS] == "CR0" and roles[-1] == f"SS{USERS - 1}"

        def delivered(pair) -> int:
            return sum(engine.counters.rounds(e.slot) for e in pair.ends)

        assert wait_for(lambda: all(delivered(p) > 0 for p in engine.pairs), 30)
        # Only the client receivers count rounds; the server receiver handed each
        # message on to the other 19 members' queues. A message delivered to a member
        # may be another member's: on a loaded box member 0 may not have sent yet.
        by_role = {e.role: e for e in room.ends}
        first = (by_role["CS0"].slot, by_role["SS0"].slot)
        assert wait_for(lambda: all(engine.counters.read(s).ops[0] > 0 for s in first), 30)
        ends = {e.role: engine.counters.read(e.slot) for e in room.ends}
        assert ends["CS0"].rounds == 0 and ends["CS0"].ops[0] > 0
        assert ends["SR0"].rounds == 0 and ends["SS0"].ops[0] > 0
        engine.remove_pair()
        still = delivered(engine.pairs[0])
        assert wait_for(lambda: delivered(engine.pairs[0]) > still, 30)  # the other room goes on
        engine.add_pair()
        assert wait_for(lambda: delivered(engine.pairs[1]) > 0, 30)
        assert not [m for m in engine.poll() if "failed" in m]  # contention notes may come
    finally:
        engine.stop()
    assert not [e for e in engine.events if "did not stop" in e or "killed" in e], engine.events
    assert _sockets() == sockets_before
    assert wait_for(lambda: me.num_threads() <= threads_before)
    assert not [c for c in me.children() if c.status() != psutil.STATUS_ZOMBIE]


def test_a_hackbench_transport_is_refused_for_chat() -> None:
    with pytest.raises(UsageError, match="chat takes tcp or unix"):
        Engine(RunConfig(workload="chat", cpus=(0,), transport="pipe"))


@needs_native
def test_ipctop_run_streams_chat_rooms() -> None:
    r = run_cli("run", "-w", "chat", "--pairs", "1", "--seconds", "1", "--transport", "unix")
    assert r.returncode == 0, r.stderr
    assert "chat · 20 users a room · 100 B · unix" in r.stdout
    rows = [x for x in r.stdout.splitlines() if x.startswith("t=")]
    assert rows and all("0CR19@" in x for x in rows)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_the_c_reference_runs_rooms_and_reports_delivered_messages(tmp_path, transport) -> None:
    binary = tmp_path / "chat"
    src = ROOT / "bench" / "ref" / "chat.c"
    subprocess.run(["gcc", "-O2", "-Wall", "-pthread", "-o", binary, src], check=True)
    r = subprocess.run(
        [binary, "--rooms", "1", "--transport", transport, "--seconds", "0.5", "--warmup", "0.2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["threads"] == 4 * USERS and out["transport"] == transport
    assert out["delivered_per_s"] > 0
    r = subprocess.run([binary, "--rooms", "0"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 2 and r.stderr.count("\n") == 1


@needs_native
@two_cpus
@pytest.mark.slow  # the quick loop's slowest (3-19 s); CI runs it
def test_the_rooms_sweep_prints_each_load_s_rate_with_its_interval() -> None:
    r = run_cli(
        "sweep", "-w", "chat", "--rooms", "1", "--transport", "unix", "--seconds", "0.5",
        "--warmup", "0.2", "--repeat", "2",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "rooms 1 · 2 fresh run(s) per load" in lines[0]
    row = lines[2].split()
    assert row[:2] == ["1", "80"] and row[2].replace(",", "").isdigit() and "n=2" in lines[2]
    assert "collapse" in lines[3]
    r = run_cli("sweep", "-w", "hackbench", "--rooms", "1,2")
    assert r.returncode == 2 and "-w chat" in r.stderr


def test_ends_past_the_counter_block_are_refused_with_what_fits() -> None:
    with pytest.raises(UsageError, match=r"^52 rooms of chat are 4,160 ends; .* at most 51 rooms$"):
        check_slots(52, 4 * USERS, "room", "chat")
    with pytest.raises(UsageError, match=r": 1 more room fits$"):
        check_slots(2, 4 * USERS, "room", "chat", free=100)
    with pytest.raises(UsageError, match=r"^3 rooms of chat .*: 2 more rooms fit$"):
        check_slots(3, 4 * USERS, "room", "chat", free=200)
    with pytest.raises(UsageError, match=r"^1 room of chat .*: 0 more rooms fit$"):
        check_slots(1, 4 * USERS, "room", "chat", free=40)
    check_slots(51, 4 * USERS, "room", "chat")  # 4,080 of 4,096: fits


@needs_native
def test_a_rooms_sweep_past_the_counter_block_is_refused_before_its_first_load() -> None:
    """60 rooms ran out of counter slots after the smaller loads had run: a traceback."""
    before = _sockets()
    r = run_cli("sweep", "-w", "chat", "--rooms", "1,60", "--transport", "unix")
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert r.stderr.startswith("ipctop: 60 rooms of chat are 4,800 ends"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert _sockets() == before


@needs_native
@two_cpus
def test_an_engine_refuses_rooms_it_has_no_slots_for_and_starts_none() -> None:
    cpus = tuple(sorted(os.sched_getaffinity(0))[:2])
    with Engine(RunConfig(workload="chat", cpus=cpus, transport="unix")) as engine:
        with pytest.raises(UsageError, match="at most 51 rooms"):
            engine.start(52)
        assert engine.pairs == [] and engine.counters.free == 4096


def _nices(pid: int) -> dict[int, int]:
    """tid -> nice of every thread of `pid` (field 19 of its stat)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                out[int(tid)] = int(f.read().rsplit(")", 1)[1].split()[16])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended between the listing and the read
    return out


@needs_native
@two_cpus
@pytest.mark.skipif(os.geteuid() != 0, reason="raising the monitor needs CAP_SYS_NICE")
def test_the_rooms_sweep_samples_above_its_rooms() -> None:
    """80 runnable threads a room starved a sampler at their nice: every reading came
    late and every window was dropped as a stall (15 rooms measured 0 msgs/s). The
    sweep's own thread, which samples, runs raised; the room's ends at nice 0."""
    with ipctop("sweep", "-w", "chat", "--rooms", "1", "--transport", "unix",
                "--seconds", "4", "--warmup", "0.5", "--repeat", "1") as proc:  # fmt: skip
        seen: dict[int, int] = {}

        def room_running() -> bool:
            seen.update(_nices(proc.pid))
            return sum(1 for n in seen.values() if n == 0) >= 4 * USERS

        assert wait_for(room_running, 60), f"no room of {4 * USERS} ends at nice 0: {seen}"
        raised = max(-20, os.getpriority(os.PRIO_PROCESS, 0) - RAISE)
        assert seen[proc.pid] == raised, "the sampling thread runs at its process's nice"
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "stall" not in err


@needs_native
@two_cpus
@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_the_fidelity_bench_sets_ipctop_against_the_reference_in_abba_blocks() -> None:
    # The bench's workings only: tiny slots on a loaded box, no figure is judged.
    r = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "chat_fidelity.py"), "--rooms", "1",
         "--transport", "unix", "--seconds", "0.3", "--warmup", "0.1", "--blocks", "2"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [x.split(":")[0] for x in lines if x.startswith("block ")] == ["block 1", "block 2"]
    assert lines[-1].startswith("ipctop/reference rate: ") and "within 5 %: " in lines[-1]
