"""In a lab guest: /proc/interrupts and /proc/schedstat parsed at the guest's CPU count.

The guest's kernel writes one column per CPU (64 on the big preset); the
parser must give every CPU its own count, the same as splitting the row by
hand, and schedstat a line per CPU.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from labguest import in_guest

from ipctop.box import describe, read_box
from ipctop.engine.procfs import read_ipis, read_schedstat_cpus

pytestmark = in_guest


def _row(name: bytes) -> tuple[list[int], list[int]]:
    """CPU numbers of the header and the row's counts, split by hand."""
    lines = Path("/proc/interrupts").read_bytes().split(b"\n")
    cpus = [int(t[3:]) for t in lines[0].split()]
    for line in lines[1:]:
        head, _, rest = line.partition(b":")
        if head.strip() == name:
            return cpus, [int(x) for x in rest.split()[: len(cpus)]]
    raise AssertionError(f"no {name!r} row in /proc/interrupts")


def _ping_every_cpu() -> None:
    """A thread on each CPU in turn, woken from this one: rescheduling IPIs everywhere."""
    for cpu in sorted(os.sched_getaffinity(0)):
        ev = threading.Event()

        def body(target: int = cpu, done: threading.Event = ev) -> None:
            os.sched_setaffinity(0, {target})
            done.wait(5)

        t = threading.Thread(target=body)
        t.start()
        ev.set()
        t.join()


def test_ipi_rows_have_a_column_per_cpu_equal_to_the_raw_row() -> None:
    n = os.cpu_count()
    before = read_ipis()
    assert before is not None
    _ping_every_cpu()
    ipis = read_ipis()
    assert ipis is not None and set(ipis) == {"resched", "callfunc"}
    for kind, row in (("resched", b"RES"), ("callfunc", b"CAL")):
        assert sorted(ipis[kind]) == list(range(n))
        cpus, raw = _row(row)
        assert cpus == list(range(n))
        # Read after the parser, so the raw counts can only be the same or higher.
        assert all(raw[c] >= ipis[kind][c] for c in cpus), (kind, raw, ipis[kind])
    assert sum(ipis["resched"].values()) > sum(before["resched"].values())


def test_schedstat_has_a_line_per_cpu_and_its_counters_move() -> None:
    n = os.cpu_count()
    before = read_schedstat_cpus()
    assert before is not None and sorted(before) == list(range(n))
    _ping_every_cpu()
    after = read_schedstat_cpus()
    assert after is not None
    assert sum(s.sched_count for s in after.values()) > sum(s.sched_count for s in before.values())


def test_numa_balancing_is_what_the_lab_booted_and_the_box_facts_say_it() -> None:
    # The lab puts numa_balancing=disable (or enable) on the guest's command line; the
    # box facts every record keeps must read the kernel's own state, not the request.
    args = Path("/proc/cmdline").read_text().split()
    asked = [a.split("=", 1)[1] for a in args if a.startswith("numa_balancing=")]
    assert asked in (["disable"], ["enable"]), args
    state = int(Path("/proc/sys/kernel/numa_balancing").read_text())
    assert (state != 0) == (asked == ["enable"])
    facts = read_box()
    assert facts.numa_balancing == state
    word = "on" if state else "off"
    assert f"NUMA balancing: {word} (kernel.numa_balancing {state})" in describe(facts)
