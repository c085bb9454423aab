"""The registry of workloads, by the name the CLI and records use."""

from __future__ import annotations

from .base import PairResources, Workload
from .sysv import SysvMsg, SysvMsgShared, SysvSem

_CLASSES: list[type[Workload]] = [SysvMsg, SysvSem, SysvMsgShared]

WORKLOADS: dict[str, type[Workload]] = {cls.name: cls for cls in _CLASSES}


def make_workload(name: str) -> Workload:
    return WORKLOADS[name]()


__all__ = ["PairResources", "Workload", "WORKLOADS", "make_workload"]
