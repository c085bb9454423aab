"""The lab's tests: in_guest ones run inside a guest booted by `python -m ipctop.lab`.

Outside such a guest they skip with a reason: a 2-CPU host has no second
socket or SMT sibling to check them against, and a fake /sys would only agree
with the code that reads it. Figures a guest measures are TCG emulation (or a
nested guest's): the tests check shapes and counts, never a rate.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _in_lab_guest() -> bool:
    if os.environ.get("IPCTOP_LAB_GUEST") != "1":
        return False
    try:
        # virtme-ng's init names itself on the kernel command line: an env var alone is not a guest.
        return "virtme" in Path("/proc/cmdline").read_text()
    except OSError:
        return False


IN_GUEST = _in_lab_guest()
in_guest = pytest.mark.skipif(
    not IN_GUEST,
    reason="not inside a lab guest (python -m ipctop.lab --cpus 8 boots one and runs these)",
)


def lab_smp() -> tuple[int, int, int]:
    """(sockets, cores per socket, threads per core) QEMU was told to make."""
    s, c, t = (int(x) for x in os.environ["IPCTOP_LAB_SMP"].split(","))
    return s, c, t


def lab_out(sub: str) -> Path:
    """A folder under the lab's out folder, which the host reads back after the guest exits."""
    d = Path(os.environ["IPCTOP_LAB_OUT"]) / sub
    d.mkdir(parents=True, exist_ok=True)
    return d


def command_cpus(cpu: dict[int, dict[str, int]]) -> list[int]:
    """CPUs for check and matrix: all of them, or in the short scope (CI's) four that
    still hold every class: CPU 0, its SMT sibling, a core sharing its LLC, another node."""
    every = sorted(cpu)
    if os.environ.get("IPCTOP_LAB_SCOPE") != "short":
        return every
    first = every[0]

    def pick(want) -> list[int]:
        return [c for c in every if c != first and want(cpu[c], cpu[first])][:1]

    chosen = [first]
    chosen += pick(lambda c, f: c["core"] == f["core"])
    chosen += pick(lambda c, f: c["core"] != f["core"] and c["llc"] == f["llc"])
    chosen += pick(lambda c, f: c["node"] != f["node"])
    return sorted(chosen)
