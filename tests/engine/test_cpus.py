"""CPU lists, topology and --cpus selection: this box's real sysfs plus a FAKE 64-CPU tree."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from ipctop.cpus import (
    CpuSpecError,
    Topology,
    choose_cpus,
    default_cpus,
    format_cpu_list,
    parse_cpu_list,
    read_topology,
)
from ipctop.errors import EXIT_USAGE, UsageError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ALLOWED = sorted(os.sched_getaffinity(0))
needs_two_cpus = pytest.mark.skipif(len(ALLOWED) < 2, reason="needs 2 allowed CPUs")


def _load_generator():
    spec = importlib.util.spec_from_file_location(
        "make_sysfs_64cpu_fake", FIXTURES / "make_sysfs_64cpu_fake.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fake_sysfs(tmp_path_factory: pytest.TempPathFactory) -> str:
    dest = tmp_path_factory.mktemp("sysfs") / "sysfs_64cpu_fake"
    return _load_generator().make(str(dest))


@pytest.fixture
def fake_topo(fake_sysfs: str) -> Topology:
    # isolcpus removes isolated CPUs from the inherited affinity, and offline
    # CPUs are never in it: this is the mask a process on that box would see.
    allowed = [c for c in range(64) if c != 62 and not 56 <= c <= 59]
    return read_topology(fake_sysfs, allowed=allowed)


# --- cpu-list syntax ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", [0]),
        ("0-3,8", [0, 1, 2, 3, 8]),
        ("8,0-3", [0, 1, 2, 3, 8]),
        ("0-7:2", [0, 2, 4, 6]),
        ("1-2,2-3", [1, 2, 3]),
        (" 0-1\n", [0, 1]),
        ("", []),
        ("\n", []),
    ],
)
def test_parse_cpu_list(text: str, expected: list[int]) -> None:
    assert parse_cpu_list(text) == expected


@pytest.mark.parametrize("text", ["0-", "-1", "a", "3-1", "1,,2", "0-7:0", "0:2", "1 2", ","])
def test_parse_cpu_list_rejects_malformed(text: str) -> None:
    with pytest.raises(ValueError):
        parse_cpu_list(text)


@pytest.mark.parametrize(
    ("cpus", "expected"),
    [([0, 1, 2, 3, 8], "0-3,8"), ([5, 1, 0], "0-1,5"), ([3, 3], "3"), ([], "")],
)
def test_format_cpu_list(cpus: list[int], expected: str) -> None:
    assert format_cpu_list(cpus) == expected
    assert parse_cpu_list(format_cpu_list(cpus)) == sorted(set(cpus))


# --- this box ----------------------------------------------------------------


def test_real_topology_is_consistent() -> None:
    topo = read_topology()
    assert topo.allowed == tuple(ALLOWED)
    assert set(topo.allowed) <= set(topo.online)
    # Python's os.cpu_count() asks sysconf for online CPUs: a second source.
    assert len(topo.online) == os.cpu_count()
    for cpu in topo.online:
        assert cpu in topo.smt_siblings_of(cpu)
    assert topo.has_smt == any(len(topo.smt_siblings_of(c)) > 1 for c in topo.online)


def test_real_default_is_a_subset_of_allowed() -> None:
    topo = read_topology()
    chosen = default_cpus(topo)
    assert chosen
    assert set(chosen) <= set(topo.allowed)
    assert len(chosen) == len(set(chosen))
    assert choose_cpus(None, topo) == chosen


@needs_two_cpus
def test_real_choose_keeps_the_given_order() -> None:
    topo = read_topology()
    first, second = ALLOWED[0], ALLOWED[1]
    assert choose_cpus(f"{second},{first}", topo) == [second, first]
    assert choose_cpus(f"{first},{first},{second}", topo) == [first, second]


def test_real_cpu_outside_the_allowed_set() -> None:
    topo = read_topology()
    beyond = max(topo.present + topo.online) + 1000
    with pytest.raises(CpuSpecError) as info:
        choose_cpus(str(beyond), topo)
    allowed = format_cpu_list(topo.allowed)
    assert str(info.value) == f"--cpus: CPU {beyond} is not in the allowed set {allowed}"
    assert isinstance(info.value, UsageError)
    assert info.value.exit_code == EXIT_USAGE


@pytest.mark.parametrize("spec", ["0-", "", "x", "1-0", "0,,1"])
def test_real_malformed_spec_names_the_allowed_set(spec: str) -> None:
    topo = read_topology()
    with pytest.raises(CpuSpecError) as info:
        choose_cpus(spec, topo)
    message = str(info.value)
    assert message.startswith(f"--cpus: malformed list {spec!r}")
    assert message.endswith(f"allowed CPUs: {format_cpu_list(topo.allowed)}")
    assert "\n" not in message


def test_missing_sysfs_falls_back_to_the_allowed_cpus(tmp_path: Path) -> None:
    # A container that hides /sys: nothing to read, nothing to crash on.
    topo = read_topology(str(tmp_path / "no-such-sysfs"), allowed=[0, 1])
    assert topo.online == (0, 1)
    assert topo.isolated == ()
    assert topo.smt_siblings_of(1) == (1,)
    assert not topo.has_smt
    assert topo.core_id == {}
    assert default_cpus(topo) == [0, 1]


# --- FAKE 64-CPU, 2-socket, SMT-2 tree ----------------------------------------


def test_fake_64cpu_topology_is_read(fake_topo: Topology) -> None:
    assert fake_topo.online == tuple(c for c in range(64) if c != 62)
    assert fake_topo.present == tuple(range(64))
    assert fake_topo.isolated == (56, 57, 58, 59)
    assert fake_topo.has_smt
    assert fake_topo.smt_siblings_of(5) == (4, 5)
    assert fake_topo.smt_siblings_of(63) == (63,)  # its sibling 62 is offline
    assert fake_topo.package_id[31] == 0 and fake_topo.package_id[32] == 1
    assert fake_topo.core_id[33] == 0 and fake_topo.core_id[31] == 15


def test_fake_64cpu_default_puts_physical_cores_first(fake_topo: Topology) -> None:
    chosen = default_cpus(fake_topo)
    # One thread per core (the even CPUs, and 63 whose sibling is offline),
    # skipping the isolated 56-59; then the second threads.
    firsts = list(range(0, 56, 2)) + [60, 63]
    seconds = list(range(1, 56, 2)) + [61]
    assert chosen == firsts + seconds
    cores_seen = {(fake_topo.package_id[c], fake_topo.core_id[c]) for c in chosen[: len(firsts)]}
    assert len(cores_seen) == len(firsts)


def test_fake_64cpu_first_thread_outside_mask(fake_sysfs: str) -> None:
    # CPUs 0 and 4 are outside the mask: 1 and 5 then stand for their cores.
    topo = read_topology(fake_sysfs, allowed=[1, 3, 2, 5])
    assert default_cpus(topo) == [1, 2, 5, 3]


def test_fake_64cpu_offline_cpu_is_refused(fake_topo: Topology) -> None:
    with pytest.raises(CpuSpecError) as info:
        choose_cpus("60-63", fake_topo)
    assert str(info.value) == "--cpus: CPU 62 is offline; allowed CPUs: 0-55,60-61,63"


def test_fake_64cpu_isolated_cpus_only_when_named(fake_topo: Topology) -> None:
    assert not set(default_cpus(fake_topo)) & {56, 57, 58, 59}
    assert choose_cpus("58,56-57", fake_topo) == [58, 56, 57]


def test_fake_64cpu_cpu_outside_a_narrow_mask(fake_sysfs: str) -> None:
    topo = read_topology(fake_sysfs, allowed=range(32))
    assert choose_cpus("0-31:8", topo) == [0, 8, 16, 24]
    with pytest.raises(CpuSpecError) as info:
        choose_cpus("8,40", topo)
    assert str(info.value) == "--cpus: CPU 40 is not in the allowed set 0-31"


def test_fake_64cpu_all_isolated_falls_back_to_allowed(fake_sysfs: str) -> None:
    topo = read_topology(fake_sysfs, allowed=[57, 56])
    assert default_cpus(topo) == [56, 57]
