"""The registry of workloads, by the name the CLI and records use."""

from __future__ import annotations

from .base import PairResources, Workload
from .chat import Chat
from .hackbench import Hackbench
from .msgbench import SysvLifecycle
from .posix import PosixMq, PosixSem
from .signal_token import Signal
from .streams import Eventfd, Pipe, Socket
from .sysv import SysvMsg, SysvMsgShared, SysvSem
from .sysv_multi import SysvSemMulti
from .words import Futex, Spin, SpinYield

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


def make_workload(name: str) -> Workload:
    return WORKLOADS[name]()


def load_unit(name: str | None) -> str | None:
    """The unit a load workload grows by ("group", "room"), None for a pair workload.

    A load workload asks whether a rate holds as units are added on fixed
    CPUs, not whether it scales with them."""
    cls = WORKLOADS.get(name or "")
    return cls.unit if cls is not None and cls.unit != "pair" else None


__all__ = ["PairResources", "Workload", "WORKLOADS", "load_unit", "make_workload"]
