"""compare across kernels: another kernel alone is compared (the labels name both); a
box that differs too is refused (exit 2) unless --force, which then says the kernels and
every box fact that differs above the table.

The host's record is a real sweep. The other side cannot be a guest's here (a
lab guest boots for minutes): it is the same record with its box facts set to
GUEST_BOX, a named fake holding what the lab's 8-CPU TCG guest recorded
(python -m ipctop.lab --cpus 8, 2026-12-06).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from ipctop.output.records.record_box import Box
from ipctop.output.text.compare_boxes import box_differences

QUICK = ("--seconds", "0.5", "--warmup", "0", "--repeat", "2", "--cpus", "0")

# The box facts of a record made in the lab's 8-CPU guest (2 sockets x 2 cores x 2
# threads) under TCG with -cpu Skylake-Server, on Debian's 6.1 kernel.
GUEST_BOX = {
    "kernel_release": "6.1.0-57-amd64",
    "cpu_model": "Intel Xeon Processor (Skylake)",
    "online": [0, 1, 2, 3, 4, 5, 6, 7],
    "allowed": [0, 1, 2, 3, 4, 5, 6, 7],
    "smt_siblings": [[0, 1], [2, 3], [4, 5], [6, 7]],
    "smt": True,
    "clocksource": "tsc",
}


@pytest.fixture(scope="module")
def host_record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kernels") / "host.json"
    r = run_cli("sweep", "-w", "sysv-sem", "--max-pairs", "1", *QUICK, "--json", str(out))
    assert r.returncode == 0, r.stderr
    return out


def _with_box(src: Path, dst: Path, **box: object) -> Path:
    data = json.loads(src.read_text())
    data["box"] = {**data["box"], **box}
    dst.write_text(json.dumps(data))
    return dst


def test_another_kernel_on_the_same_box_is_compared_without_force(
    host_record: Path, tmp_path: Path
) -> None:
    host_kernel = json.loads(host_record.read_text())["box"]["kernel_release"]
    other = _with_box(host_record, tmp_path / "other.json", kernel_release="6.1.0-57-amd64")
    r = run_cli("compare", str(host_record), str(other))
    assert r.returncode == 0, r.stderr
    # Kernel against kernel is what compare is for: the side labels name both, no note.
    assert r.stdout.splitlines()[0].split() == [
        host_kernel, "(host.json)", "6.1.0-57-amd64", "(other.json)"
    ]  # fmt: skip
    assert "forced" not in r.stdout and "kernels differ" not in r.stdout


def test_a_guests_record_is_refused_naming_each_difference(
    host_record: Path, tmp_path: Path
) -> None:
    host = json.loads(host_record.read_text())["box"]
    guest = _with_box(host_record, tmp_path / "guest.json", **GUEST_BOX)
    r = run_cli("compare", str(host_record), str(guest))
    assert r.returncode == 2, r.stdout
    line = r.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert f"host.json ({host['kernel_release']}) and guest.json (6.1.0-57-amd64)" in line
    assert f"CPU model {host['cpu_model']!r} vs 'Intel Xeon Processor (Skylake)'" in line
    assert f"CPUs online {len(host['online'])} vs 8" in line
    assert "pass --force" in line


@pytest.mark.slow  # the quick loop's slowest (3-19 s); CI runs it
def test_force_shows_the_difference_with_every_box_fact_above_it(
    host_record: Path, tmp_path: Path
) -> None:
    host = json.loads(host_record.read_text())["box"]
    guest = _with_box(host_record, tmp_path / "guest.json", **GUEST_BOX)
    r = run_cli("compare", str(host_record), str(guest), "--force")
    assert r.returncode == 0, r.stderr
    head, _, table = r.stdout.partition("\n\n")
    notes = head.splitlines()
    assert (
        notes[0]
        == f"kernels differ: host.json has {host['kernel_release']}, guest.json 6.1.0-57-amd64"
    )
    assert f"forced: host.json vs guest.json: CPUs online {len(host['online'])} vs 8" in notes
    assert any(n.startswith("forced: host.json vs guest.json: CPU model") for n in notes)
    threads = max(len(g) for g in host["smt_siblings"])
    if threads != 2:
        assert f"forced: host.json vs guest.json: SMT threads per core {threads} vs 2" in notes
    assert "ops/s" in table and "Diff [%]" in table
    j = run_cli("compare", str(host_record), str(guest), "--force", "--json", "-")
    assert j.returncode == 0, j.stderr
    assert any(n.startswith("kernels differ") for n in json.loads(j.stdout)["notes"])


def test_numa_balancing_on_against_off_is_a_box_difference() -> None:
    # Lab guests run with it off (python -m ipctop.lab --numa-balancing): against a NUMA
    # host with it on, their rates differ by the balancing's own cost, not the kernel's.
    on, off, unknown = Box(numa_balancing=1), Box(numa_balancing=0), Box()
    assert box_differences(on, off) == ["NUMA balancing 1 vs 0"]
    assert box_differences(on, unknown) == []  # a fact one record did not keep
    assert box_differences(off, Box(numa_balancing=0)) == []
