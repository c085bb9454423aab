"""The registry of workloads, by the name the CLI and records use.

Each class says all there is to say about its workload (how to add one:
README.md in this folder); the CLI's options, `RunConfig`'s fields and a
record's payload are read from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import PairResources, Workload
from .chat import Chat
from .hackbench_groups import Hackbench
from .msgbench import SysvLifecycle
from .option import Option
from .posix import PosixMq, PosixSem
from .signal_token import Signal
from .streams import Eventfd, Pipe, Socket
from .sysv import SysvMsg, SysvMsgShared, SysvSem
from .sysv_multi import SysvSemMulti
from .words import Futex, Spin, SpinYield

if TYPE_CHECKING:
    from ..config import RunConfig

_CLASSES: list[type[Workload]] = [
    SysvMsg,
    SysvSem,
    SysvMsgShared,
    SysvSemMulti,
    SysvLifecycle,
    Pipe,
    Socket,
    PosixSem,
    PosixMq,
    Futex,
    Eventfd,
    Signal,
    Spin,
    SpinYield,
    Hackbench,
    Chat,
]

WORKLOADS: dict[str, type[Workload]] = {cls.name: cls for cls in _CLASSES}


def _options() -> dict[str, Option]:
    """Every workload's options by field; two workloads may share one only if they
    declare it alike (one flag, one default)."""
    out: dict[str, Option] = {}
    for cls in _CLASSES:
        for o in cls.options:
            if out.setdefault(o.field, o) != o:
                raise TypeError(f"{cls.name} declares {o.flag} unlike another workload")
    return out


OPTIONS: dict[str, Option] = _options()


def takers(option: Option) -> list[str]:
    """The workloads that take an option, in registry order."""
    return [cls.name for cls in _CLASSES if option in cls.options]


def make_workload(name: str) -> Workload:
    return WORKLOADS[name]()


def load_unit(name: str | None) -> str | None:
    """The unit a load workload grows by ("group", "room"), None for a pair workload.

    A load workload asks whether a rate holds as units are added on fixed
    CPUs, not whether it scales with them."""
    cls = WORKLOADS.get(name or "")
    return cls.unit if cls is not None and cls.unit != "pair" else None


def configured(config: RunConfig) -> Workload:
    """The run's workload, configured (no kernel object made): what outputs describe."""
    w = make_workload(config.workload)
    w.configure(config)
    return w


def record_payload(config: RunConfig) -> dict[str, Any]:
    """What a record says of the run's workload besides the run's fields."""
    return configured(config).record_payload()


def readme_table() -> str:
    """README.md's table of workloads, one row per class (tests/engine/test_workload_registry.py)."""
    rows = ["| workload | original | one round of one end |", "|---|---|---|"]
    rows += [f"| `{c.name}` | {c.original} | {c.one_round} |" for c in _CLASSES]
    return "\n".join(rows)


__all__ = [
    "OPTIONS",
    "Option",
    "PairResources",
    "Workload",
    "WORKLOADS",
    "configured",
    "load_unit",
    "make_workload",
    "readme_table",
    "record_payload",
    "takers",
]
