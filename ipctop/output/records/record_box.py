"""The box facts a record carries ("box"): box.BoxFacts as a record reads it back.

Every fact is optional: an older ipctop, a hand-made record or a test's says
less, and a reader prints "unknown" for what is missing. Facts a newer ipctop
adds are kept as they are; the file holds only what was said (Record.to_dict
dumps it with exclude_unset).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ipctop.box import BoxFacts
from ipctop.plain import to_plain


class Box(BaseModel):
    """The machine a record was made on (box.read_box, written by BoxFacts.to_dict)."""

    model_config = ConfigDict(frozen=True, extra="allow", allow_inf_nan=False)

    kernel_release: str | None = None
    kernel_version: str | None = None
    hostname: str | None = None
    cpu_model: str | None = None
    online: tuple[int, ...] = ()
    allowed: tuple[int, ...] = ()
    isolated: tuple[int, ...] = ()
    smt_siblings: tuple[tuple[int, ...], ...] = ()  # one group per physical core
    smt: bool | None = None
    limits: dict[str, int | None] = {}  # box.IpcLimits: None where it was not readable
    governor: str | None = None  # cpufreq scaling_governor of the first allowed CPU
    clocksource: str | None = None
    numa_balancing: int | None = None  # kernel.numa_balancing
    python: str | None = None
    ipctop_version: str | None = None
    sysv_ipc: bool | None = None  # /proc/sysvipc/msg existed

    @classmethod
    def of(cls, facts: BoxFacts) -> Box:
        """The facts read at the start of this run, as the record keeps them."""
        return cls.model_validate(to_plain(facts))

    @property
    def kernel(self) -> str:
        return self.kernel_release or "unknown kernel"

    @property
    def cpu(self) -> str:
        return self.cpu_model or "unknown CPU"
