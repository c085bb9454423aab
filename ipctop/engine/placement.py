"""Where each end of a pair runs."""

from __future__ import annotations

from ..errors import UsageError

PLACEMENTS = ("same", "cross", "free")
MODES = ("threads", "processes")


def check_placement(placement: str, cpus: list[int]) -> None:
    if placement not in PLACEMENTS:
        raise UsageError(f"--placement must be one of {', '.join(PLACEMENTS)}, not {placement!r}")
    if placement == "cross" and len(cpus) < 2:
        raise UsageError("cross placement needs at least 2 CPUs; this run has only 1")


def place(
    placement: str, cpus: list[int], index: int, cpu: int | None = None
) -> tuple[int | None, int | None]:
    """CPUs of ends A and B of pair `index` (None = unpinned).

    same: both on one CPU (as the seeds); cross: A on one CPU, B on the next;
    more pairs than CPUs wrap round-robin (oversubscribed).
    """
    if placement == "free":
        return (None, None)
    n = len(cpus)
    pos = cpus.index(cpu) if cpu is not None and cpu in cpus else index % n
    a = cpu if cpu is not None else cpus[pos]
    if placement == "same":
        return (a, a)
    return (a, cpus[(pos + 1) % n])


def oversubscribed(pairs: int, cpus: list[int]) -> bool:
    return pairs > len(cpus)
