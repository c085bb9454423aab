"""What one run is: the workload, where its ends run and how, and its options.

Its own module so that workloads can read it without importing the engine
that imports them. The fields every run has are `RunFields`'; each
workload's own options (`Workload.options`) are added to `EngineConfig`
from their declarations, keyword-only, with the declared default.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .workloads import OPTIONS

# Rounds per timed round by default (why 8: BENCHMARKS.md, "Latency: the cost of timing").
# --latency-every 1 times them all.
LATENCY_EVERY = 8


@dataclass(frozen=True)
class RunFields:
    """The options every run has, whatever its workload."""

    workload: str = "sysv-msg"
    placement: str = "same"
    mode: str = "threads"
    cpus: tuple[int, ...] = (0,)
    engine: str = "auto"
    latency: bool = True  # time rounds in the native ends (see latency.py)
    latency_every: int = LATENCY_EVERY  # time one round in this many
    rt: int | None = None  # SCHED_FIFO priority of the ends; None: normal scheduling
    think_ns: int = 0  # CPU work per round between receive and send (--think-ns)
    size: int | None = None  # payload bytes of a message workload (None: its seed's default)
    transport: str | None = None  # hackbench: socket or pipe; chat: tcp or unix (None: default)


def _engine_config() -> type[RunFields]:
    fields = [
        (o.field, int | None, dataclasses.field(default=o.default, kw_only=True))
        for o in OPTIONS.values()
    ]
    cls = dataclasses.make_dataclass(
        "EngineConfig", fields, bases=(RunFields,), frozen=True, namespace={"__module__": __name__}
    )
    cls.__doc__ = "The frozen description of a run's pairs: RunFields plus the workloads' options."
    return cls


if TYPE_CHECKING:

    class EngineConfig(RunFields):
        """RunFields plus every workload's options (threads, sems, queues, ...)."""

        def __init__(self, *args: Any, **options: Any) -> None: ...
        def __getattr__(self, name: str) -> Any: ...

else:
    EngineConfig = _engine_config()
