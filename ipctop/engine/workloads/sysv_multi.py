"""semop-multi: many threads on random semaphores of ONE array (msgbench is msgbench.py).

A unit is what a sweep adds per step: the threads of one CPU (T / number of
CPUs), all on the ONE shared array. Nothing blocks for long, so the stop flag
alone ends them.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from ...errors import UsageError
from ..objects import SysvObject, create_sem_array
from .base import PairResources, Workload
from .limits import check_sem_array
from .option import Option

if TYPE_CHECKING:
    from ..config import RunConfig

THREADS_PER_CPU = 4
DEFAULT_SEMS = 128


def _seed() -> int:
    return secrets.randbits(62) | 1


class SysvSemMulti(Workload):
    name = "sysv-sem-multi"
    original = "semop-multi"
    summary = (
        "T threads (default 4 per CPU) lock and unlock random semaphores of ONE array of M "
        "(default 128); a unit is one CPU's threads"
    )
    one_round = "T threads lock and unlock random semaphores of one array"
    timed = False
    python_unavailable = (
        "sysv_ipc makes sets of one semaphore only; semop-multi needs one array of M"
    )

    options = (
        Option(
            "--threads", 1, 65536, None, "threads in all, split evenly over the CPUs",
            f"{THREADS_PER_CPU} per CPU",
        ),
        Option("--sems", 1, 65535, DEFAULT_SEMS, "semaphores in the one shared array"),
    )  # fmt: skip

    def __init__(self) -> None:
        self.array: SysvObject | None = None
        self.threads = 0
        self.sems = DEFAULT_SEMS

    def configure(self, config: RunConfig) -> None:
        super().configure(config)
        n = len(self.cpus)
        self.threads = config.threads if config.threads is not None else THREADS_PER_CPU * n
        self.sems = config.sems
        if self.threads < n:
            raise UsageError(
                f"--threads {self.threads} is fewer than the {n} CPUs: a unit is one CPU's "
                "share of the threads, so give at least one thread per CPU"
            )
        if not 1 <= self.sems <= 65535:
            raise UsageError(f"--sems must be 1..65535, not {self.sems}")

    def unit_size(self, index: int) -> int:
        """Unit i gets T // ncpus threads, plus one of the remainder for the first units."""
        base, extra = divmod(self.threads, len(self.cpus))
        return base + (1 if index % len(self.cpus) < extra else 0)

    def roles(self, index: int) -> tuple[str, ...]:
        return tuple(f"T{i}" for i in range(self.unit_size(index)))

    def place_unit(
        self, placement: str, cpus: list[int], index: int, cpu: int | None = None
    ) -> tuple[int | None, ...]:
        k = self.unit_size(index)
        if placement == "free":
            return (None,) * k
        n = len(cpus)
        pos = cpus.index(cpu) if cpu is not None and cpu in cpus else index % n
        if placement == "same":
            return (cpus[pos],) * k  # round-robin pinned: unit i's threads on CPU i
        return tuple(cpus[(pos + j) % n] for j in range(k))  # each thread on the next CPU

    def open(self, engine: str) -> None:
        check_sem_array(self.sems)
        self.array = create_sem_array([1] * self.sems)

    def close(self) -> None:
        if self.array is not None:
            self.array.remove()
            self.array = None

    def create_pair(self, index: int, engine: str) -> PairResources:
        if self.array is None:
            raise RuntimeError("sysv-sem-multi: the engine did not open the shared array")
        ident = self.array.id
        k = self.unit_size(index)
        return PairResources(
            args=tuple((ident, self.sems, _seed()) for _ in range(k)), py=(None,) * k
        )

    def wake(self, res: PairResources, index: int) -> None:
        """Nothing to do: every semaphore is released by the thread that took it."""
