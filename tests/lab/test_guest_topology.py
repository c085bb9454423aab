"""In a lab guest: the topology classes and the default CPU order, against `lscpu -p`.

lscpu reads CPUID and sysfs through util-linux's own code, ipctop through
ipctop.cpus and ipctop.cpuclass; both must give the layout QEMU was told to
make (-smp sockets, cores, threads; one NUMA node per socket).
"""

from __future__ import annotations

import os
import subprocess

from labguest import in_guest, lab_smp

from ipctop.cpuclass import LLC, NODE, REMOTE, SAME_CPU, SMT, read_classes
from ipctop.cpus import choose_cpus, default_cpus, format_cpu_list, read_topology

pytestmark = in_guest


def _lscpu() -> dict[int, dict[str, int]]:
    """cpu -> {core, socket, node, llc} from `lscpu -p` (its last cache column is the LLC)."""
    text = subprocess.run(
        ["lscpu", "-p=CPU,CORE,SOCKET,NODE,CACHE"], capture_output=True, text=True, check=True
    ).stdout
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        # CACHE comes out as ",L1d,L1i,L2,L3" (an empty column first): the LLC is the last one.
        fields = line.split(",")
        cpu, core, socket, node = (int(f) for f in fields[:4])
        out[cpu] = {"core": core, "socket": socket, "node": node, "llc": int(fields[-1])}
    return out


def _expected_class(a: int, b: int, cpu: dict[int, dict[str, int]]) -> str:
    if a == b:
        return SAME_CPU
    if cpu[a]["core"] == cpu[b]["core"]:
        return SMT
    if cpu[a]["llc"] == cpu[b]["llc"]:
        return LLC
    if cpu[a]["node"] == cpu[b]["node"]:
        return NODE
    return REMOTE


def test_the_guest_has_the_layout_qemu_was_asked_for() -> None:
    sockets, cores, threads = lab_smp()
    cpu = _lscpu()
    assert sorted(cpu) == list(range(sockets * cores * threads))
    assert len({c["socket"] for c in cpu.values()}) == sockets
    assert len({c["node"] for c in cpu.values()}) == sockets  # one node per socket
    assert len({c["core"] for c in cpu.values()}) == sockets * cores
    for core in {c["core"] for c in cpu.values()}:
        assert sum(c["core"] == core for c in cpu.values()) == threads
    assert os.cpu_count() == len(cpu)


def test_every_pair_has_the_class_lscpu_gives() -> None:
    cpu = _lscpu()
    cpus = sorted(cpu)
    classes = read_classes(cpus)
    assert classes.unknown == (), classes.unknown
    wrong = [
        (a, b, classes.classify(a, b), _expected_class(a, b, cpu))
        for a in cpus
        for b in cpus
        if classes.classify(a, b) != _expected_class(a, b, cpu)
    ]
    assert not wrong, wrong[:10]
    found = {classes.classify(a, b) for a in cpus for b in cpus}
    # 2 sockets with SMT: siblings, a shared L3 and another node are all there to find.
    assert {SAME_CPU, SMT, LLC, REMOTE} <= found, found


def test_default_order_takes_one_thread_of_every_core_before_any_sibling() -> None:
    sockets, cores, threads = lab_smp()
    cpu = _lscpu()
    order = default_cpus(read_topology())
    assert sorted(order) == sorted(cpu)
    physical = sockets * cores
    first = order[:physical]
    assert len({cpu[c]["core"] for c in first}) == physical, format_cpu_list(first)
    # Every later CPU is a second (or later) thread of a core already taken.
    assert all(cpu[c]["core"] in {cpu[f]["core"] for f in first} for c in order[physical:])
    assert read_topology().has_smt


def test_cpus_names_every_cpu_in_the_order_given() -> None:
    cpus = sorted(_lscpu())
    topo = read_topology()
    assert choose_cpus(f"0-{cpus[-1]}", topo) == cpus
    backwards = ",".join(str(c) for c in reversed(cpus))
    assert choose_cpus(backwards, topo) == list(reversed(cpus))
    assert choose_cpus(f"0-{cpus[-1]}:2", topo) == cpus[::2]
