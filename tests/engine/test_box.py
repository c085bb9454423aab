"""Machine facts: this box's real /proc and sysfs, a real /proc copy, and FAKE stripped trees."""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import resource
from dataclasses import fields, replace
from pathlib import Path

import ipctop
from ipctop.box import BoxFacts, IpcLimits, describe, read_box, read_ipc_limits
from ipctop.cpus import format_cpu_list
from ipctop.plain import from_plain, to_plain

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
X86 = str(FIXTURES / "proc_x86_real")
MISSING = str(FIXTURES / "proc_missing_fake")
NOFILE_SOFT = resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def _sysctl(name: str) -> list[int] | None:
    path = Path("/proc/sys") / name
    return [int(v) for v in path.read_text().split()] if path.exists() else None


def test_real_ipc_limits_match_the_sysctls() -> None:
    limits = read_ipc_limits()
    for field, name in [
        ("msgmni", "kernel/msgmni"),
        ("msgmnb", "kernel/msgmnb"),
        ("msgmax", "kernel/msgmax"),
        ("shmmni", "kernel/shmmni"),
        ("mq_queues_max", "fs/mqueue/queues_max"),
        ("file_max", "fs/file-max"),
        ("pipe_max_size", "fs/pipe-max-size"),
    ]:
        values = _sysctl(name)
        assert getattr(limits, field) == (values[0] if values else None), field
    sem = _sysctl("kernel/sem")
    if sem is not None:
        assert (limits.semmsl, limits.semmns, limits.semopm, limits.semmni) == tuple(sem)
        assert limits.semmsl > 0 and limits.semmni > 0
    assert limits.nofile_soft == NOFILE_SOFT


def test_real_box_facts_are_sane() -> None:
    facts = read_box()
    assert facts.kernel_release == platform.release()
    assert facts.hostname == platform.node()
    assert facts.cpu_model
    assert facts.allowed == sorted(os.sched_getaffinity(0))
    assert set(facts.allowed) <= set(facts.online)
    assert sorted(c for group in facts.smt_siblings for c in group) == facts.online
    assert facts.smt == any(len(g) > 1 for g in facts.smt_siblings)
    assert facts.sysv_ipc == os.path.exists("/proc/sysvipc/msg")
    assert facts.python == platform.python_version()
    assert facts.ipctop_version == ipctop.__version__
    available = Path("/sys/devices/system/clocksource/clocksource0/available_clocksource")
    if available.exists():
        assert facts.clocksource in available.read_text().split()
    else:
        assert facts.clocksource is None
    balancing = _sysctl("kernel/numa_balancing")
    assert facts.numa_balancing == (balancing[0] if balancing else None)
    governor = Path(f"/sys/devices/system/cpu/cpu{facts.allowed[0]}/cpufreq/scaling_governor")
    assert facts.governor == (governor.read_text().strip() if governor.exists() else None)


def test_real_box_facts_survive_json() -> None:
    facts = read_box()
    again = from_plain(BoxFacts, json.loads(json.dumps(to_plain(facts))))
    assert again == facts


def test_from_plain_drops_limits_it_does_not_know() -> None:
    d = to_plain(read_box())
    d["limits"]["some_future_limit"] = 7
    assert from_plain(BoxFacts, d).limits == read_box().limits


def test_real_describe() -> None:
    facts = read_box()
    lines = describe(facts)
    assert lines[0].startswith(f"kernel {facts.kernel_release} · {facts.cpu_model}")
    cpus = next(line for line in lines if line.startswith("CPUs: "))
    assert f"online {format_cpu_list(facts.online)}" in cpus
    assert f"allowed {format_cpu_list(facts.allowed)}" in cpus
    assert ("SMT on" in cpus) == facts.smt
    ipc = next(line for line in lines if line.startswith("IPC limits: "))
    assert f"msgmni {facts.limits.msgmni}" in ipc
    gov = next(line for line in lines if line.startswith("cpufreq governor: "))
    assert gov == f"cpufreq governor: {facts.governor or 'n/a (no cpufreq in sysfs)'}"
    assert all("\n" not in line for line in lines)


def test_real_proc_copy_limits_and_model() -> None:
    limits = read_ipc_limits(X86)
    assert limits == IpcLimits(
        msgmni=32000,
        msgmnb=16384,
        msgmax=8192,
        semmsl=32000,
        semmns=1024000000,
        semopm=500,
        semmni=32000,
        shmmni=4096,
        mq_queues_max=256,
        mq_msg_max=10,
        mq_msgsize_max=8192,
        file_max=2466097,
        nofile_soft=NOFILE_SOFT,
        pipe_max_size=1048576,
    )
    facts = read_box(proc=X86)
    assert facts.cpu_model == "AMD EPYC"
    assert facts.sysv_ipc


def test_fake_stripped_proc_gives_none_not_a_crash() -> None:
    limits = read_ipc_limits(MISSING)
    assert limits.msgmni == 32000
    # kernel/sem holds 3 numbers instead of 4: unreadable, so all four are None.
    assert (limits.semmsl, limits.semmns, limits.semopm, limits.semmni) == (None,) * 4
    unread = [f.name for f in fields(IpcLimits) if f.name not in ("msgmni", "nofile_soft")]
    assert all(getattr(limits, name) is None for name in unread)
    facts = read_box(proc=MISSING)
    assert not facts.sysv_ipc
    assert facts.cpu_model == f"unknown {platform.machine()}"
    lines = describe(facts)
    assert any("msgmnb n/a" in line for line in lines)
    assert any(line.startswith("SysV IPC: n/a") for line in lines)


def _fake_sysfs(dest: Path) -> Path:
    spec = importlib.util.spec_from_file_location(
        "make_sysfs_64cpu_fake", FIXTURES / "make_sysfs_64cpu_fake.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Path(module.make(str(dest / "cpu")))


def test_fake_64cpu_sysfs_with_a_governor_and_clocksource(tmp_path: Path) -> None:
    sysfs = _fake_sysfs(tmp_path)
    first = min(os.sched_getaffinity(0))
    (sysfs / f"cpu{first}" / "cpufreq").mkdir()
    (sysfs / f"cpu{first}" / "cpufreq" / "scaling_governor").write_text("performance\n")
    clock = tmp_path / "clocksource" / "clocksource0"
    clock.mkdir(parents=True)
    (clock / "current_clocksource").write_text("hpet\n")
    facts = read_box(proc=X86, sysfs=str(sysfs))
    assert facts.smt
    assert [4, 5] in facts.smt_siblings and [63] in facts.smt_siblings
    assert len(facts.smt_siblings) == 32  # 31 two-thread cores and cpu63 alone
    assert facts.isolated == [56, 57, 58, 59]
    assert facts.governor == "performance"
    assert facts.clocksource == "hpet"
    lines = describe(facts)
    assert "cpufreq governor: performance" in lines
    assert "clocksource: hpet" in lines
    cpus = next(line for line in lines if line.startswith("CPUs: "))
    assert "online 0-61,63" in cpus and "isolated 56-59" in cpus and "SMT on (0,1 2,3" in cpus


def test_fake_sysfs_without_cpufreq_or_clocksource(tmp_path: Path) -> None:
    facts = read_box(proc=X86, sysfs=str(_fake_sysfs(tmp_path)))
    assert facts.governor is None
    assert facts.clocksource is None
    lines = describe(facts)
    assert "cpufreq governor: n/a (no cpufreq in sysfs)" in lines
    assert "clocksource: n/a (not in sysfs)" in lines


def test_numa_balancing_is_said_on_off_or_not_there() -> None:
    facts = read_box()
    lines = {v: describe(replace(facts, numa_balancing=v)) for v in (None, 0, 1, 2)}
    assert "NUMA balancing: n/a (no kernel.numa_balancing)" in lines[None]
    assert "NUMA balancing: off (kernel.numa_balancing 0)" in lines[0]
    assert "NUMA balancing: on (kernel.numa_balancing 1)" in lines[1]
    assert "NUMA balancing: on (kernel.numa_balancing 2)" in lines[2]  # 2: memory tiering
