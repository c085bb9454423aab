"""What a workload is: its objects per pair, its loop arguments, how it stops."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...errors import UsageError
from ..counters import SlotWriter


@dataclass
class PairResources:
    """The kernel objects of one pair and what each end's loop is given."""

    args: tuple[tuple[int, ...], tuple[int, ...]]  # native loop arguments for A and B
    objects: list[Any] = field(default_factory=list)  # SysvObject and the like
    shm: Any = None  # a shared mapping handed to the native loop, if any
    py: tuple[Any, Any] = (None, None)  # per-end handles for the Python loops
    closers: list[Any] = field(default_factory=list)  # callables run at teardown


class Workload:
    """A ping-pong mechanism. Subclasses fill in the hooks they need."""

    name: str = ""
    original: str = ""  # which seed program it reproduces
    summary: str = ""
    #: None when the Python engine can run it, else why it cannot
    python_unavailable: str | None = None
    #: printed with every output that used the Python engine, e.g. a semantic difference
    python_note: str | None = None

    def check(self, placement: str, engine: str) -> None:
        """Refuse a combination that cannot mean anything; raise UsageError."""
        if engine == "python" and self.python_unavailable:
            raise UsageError(
                f"{self.name} is unavailable on the Python engine: {self.python_unavailable}"
            )
        if engine == "python" and self.python_loop is Workload.python_loop:
            raise UsageError(f"{self.name} has no Python loop")

    def open(self, engine: str) -> None:
        """Create objects shared by all pairs (most workloads have none)."""

    def close(self) -> None:
        """Remove the shared objects; idempotent."""

    def create_pair(self, index: int, engine: str) -> PairResources:
        raise NotImplementedError

    def wake(self, res: PairResources, index: int) -> None:
        """Wake ends blocked in the kernel once their stop flags are set.

        The originals removed the objects (IPC_RMID) so blocked ends saw EIDRM.
        """
        self.destroy_pair(res, index)

    def destroy_pair(self, res: PairResources, index: int) -> None:
        for obj in res.objects:
            obj.remove()
        for close in res.closers:
            close()
        res.closers.clear()

    def python_loop(self, res: PairResources, role: int, writer: SlotWriter) -> int:
        """Run one end in Python until stopped; return 0 or the errno that ended it."""
        raise NotImplementedError
