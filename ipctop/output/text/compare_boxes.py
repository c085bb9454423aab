"""What differs between the boxes two records were made on, beyond their kernels.

A kernel against a kernel is what compare is for, so a kernel that differs is
said, never refused. A box that differs too (another CPU model, as an
emulated guest's is; another CPU count or SMT layout; another clocksource, as
a guest's kvm-clock is against a host's tsc; NUMA balancing on against off) makes any difference the boxes'
as much as the kernels': compare refuses that unless --force, and then says
it above the table. A fact one record did not keep is not a difference.
"""

from __future__ import annotations

from collections.abc import Callable

from ipctop.output.records.record_box import Box


def _threads_per_core(box: Box) -> int | None:
    return max((len(g) for g in box.smt_siblings), default=None)


def _cpus(box: Box) -> int | None:
    return len(box.online) or None


# (what, how it is read from a record's box): each compared only if both records kept it.
FACTS: tuple[tuple[str, Callable[[Box], object]], ...] = (
    ("CPU model", lambda b: b.cpu_model),
    ("CPUs online", _cpus),
    ("SMT threads per core", _threads_per_core),
    ("clocksource", lambda b: b.clocksource),
    # The lab's guests run with it off (ipctop.lab --numa-balancing): against a host
    # with it on, a NUMA layout's rates differ by the balancing's own cost.
    ("NUMA balancing", lambda b: b.numa_balancing),
)


def kernel_difference(a: Box, b: Box) -> tuple[str, str] | None:
    """The two kernel releases, when both records kept one and they differ."""
    if a.kernel_release and b.kernel_release and a.kernel_release != b.kernel_release:
        return a.kernel_release, b.kernel_release
    return None


def box_differences(a: Box, b: Box) -> list[str]:
    """Each fact both boxes kept that differs, as 'CPUs online 2 vs 8'."""
    out = []
    for what, read in FACTS:
        mine, theirs = read(a), read(b)
        if mine is not None and theirs is not None and mine != theirs:
            shown = (repr(mine), repr(theirs)) if isinstance(mine, str) else (mine, theirs)
            out.append(f"{what} {shown[0]} vs {shown[1]}")
    return out
