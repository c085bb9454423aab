"""How far apart two CPUs are, in the classes sysfs gives: the matrix's groups.

same CPU < SMT sibling < shared last-level cache < same NUMA node < other node.
Every file may be missing (containers mask /sys): an unknown cache counts
each CPU alone, unknown NUMA puts every CPU on one node, and the classes
that could not be told apart are named in `unknown`.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field

from .cpus import SYSFS_CPU, parse_cpu_list
from .kernel_files import read_kernel_file

SYSFS_NODE = "/sys/devices/system/node"
SAME_CPU, SMT, LLC, NODE, REMOTE = (
    "same CPU",
    "SMT sibling",
    "shared LLC",
    "same node",
    "other node",
)
CLASSES = (SAME_CPU, SMT, LLC, NODE, REMOTE)


@dataclass(frozen=True)
class CpuClasses:
    siblings: dict[int, frozenset[int]] = field(default_factory=dict)
    llc: dict[int, frozenset[int]] = field(default_factory=dict)  # the last-level cache's CPUs
    node: dict[int, int] = field(default_factory=dict)
    unknown: tuple[str, ...] = ()  # what sysfs did not say

    def classify(self, a: int, b: int) -> str:
        if a == b:
            return SAME_CPU
        if b in self.siblings.get(a, frozenset()):
            return SMT
        if b in self.llc.get(a, frozenset()):
            return LLC
        if self.node.get(a, 0) == self.node.get(b, 0):
            return NODE
        return REMOTE


def _read(path: str) -> str | None:
    text = read_kernel_file(path)
    return None if text is None else text.strip()


def _cpu_set(path: str) -> frozenset[int] | None:
    text = _read(path)
    if text is None:
        return None
    try:
        return frozenset(parse_cpu_list(text))
    except ValueError:
        return None


def _last_level_cache(cpu_dir: str) -> frozenset[int] | None:
    """shared_cpu_list of the highest-level data or unified cache."""
    cache = os.path.join(cpu_dir, "cache")
    try:
        names = sorted(n for n in os.listdir(cache) if n.startswith("index"))
    except OSError:
        return None
    best: tuple[int, frozenset[int]] | None = None
    for name in names:
        d = os.path.join(cache, name)
        level, kind = _read(os.path.join(d, "level")), _read(os.path.join(d, "type"))
        shared = _cpu_set(os.path.join(d, "shared_cpu_list"))
        if level is None or not level.isdigit() or kind == "Instruction" or shared is None:
            continue
        if best is None or int(level) > best[0]:
            best = (int(level), shared)
    return best[1] if best else None


def read_classes(
    cpus: list[int], sysfs_cpu: str = SYSFS_CPU, sysfs_node: str = SYSFS_NODE
) -> CpuClasses:
    siblings, llc, node = {}, {}, {}
    unknown = []
    for cpu in cpus:
        d = os.path.join(sysfs_cpu, f"cpu{cpu}")
        sib = _cpu_set(os.path.join(d, "topology", "thread_siblings_list"))
        siblings[cpu] = sib if sib is not None else frozenset({cpu})
        if sib is None and SMT not in unknown:
            unknown.append(SMT)
        shared = _last_level_cache(d)
        llc[cpu] = shared if shared is not None else frozenset({cpu})
        if shared is None and LLC not in unknown:
            unknown.append(LLC)
    try:
        nodes = [n for n in os.listdir(sysfs_node) if n.startswith("node") and n[4:].isdigit()]
    except OSError:
        nodes = []
    for n in nodes:
        for cpu in _cpu_set(os.path.join(sysfs_node, n, "cpulist")) or ():
            node[cpu] = int(n[4:])
    if not nodes:
        unknown.append("NUMA nodes")
    return CpuClasses(siblings, llc, node, tuple(unknown))


def ordered_pairs(
    cpus: list[int], classes: CpuClasses, per_class: int | None, seed: int = 13
) -> list[tuple[int, int]]:
    """Every ordered pair of CPUs (per_class None), or at most per_class of each
    class, drawn with a fixed seed so that two runs measure the same cells."""
    every = [(a, b) for a in cpus for b in cpus]
    if per_class is None:
        return every
    by: dict[str, list[tuple[int, int]]] = {}
    for a, b in every:
        by.setdefault(classes.classify(a, b), []).append((a, b))
    rng = random.Random(seed)
    chosen = []
    for cls in CLASSES:
        cells = by.get(cls, [])
        chosen += cells if len(cells) <= per_class else rng.sample(cells, per_class)
    return sorted(chosen)
