"""The guest's CPU layout: sockets, cores, SMT threads and NUMA nodes, as QEMU options."""

from __future__ import annotations

from dataclasses import dataclass

# An Intel model: QEMU gives SMT siblings to an AMD model only with topoext,
# which TCG does not emulate (it warns and shows 1 thread per core); Intel
# models describe threads through CPUID leaf 0xB, which TCG fills in.
CPU_MODEL = "Skylake-Server"


@dataclass(frozen=True)
class LabTopology:
    sockets: int = 2
    cores: int = 16  # per socket
    threads: int = 2  # per core
    memory_mb: int = 4096  # split evenly over the nodes, one node per socket

    @property
    def cpus(self) -> int:
        return self.sockets * self.cores * self.threads

    @property
    def nodes(self) -> int:
        return self.sockets

    def node_cpus(self, node: int) -> tuple[int, int]:
        """First and last CPU of a node: QEMU numbers CPUs socket, then core, then thread."""
        per = self.cores * self.threads
        return node * per, (node + 1) * per - 1

    def smp(self) -> str:
        return f"{self.cpus},sockets={self.sockets},cores={self.cores},threads={self.threads}"

    def vng_numa(self) -> list[str]:
        per_node = self.memory_mb // self.nodes
        out = []
        for n in range(self.nodes):
            first, last = self.node_cpus(n)
            out += ["--numa", f"{per_node}M,cpus={first}-{last}"]
        return out

    def describe(self) -> str:
        return (
            f"{self.cpus} CPUs: {self.sockets} sockets x {self.cores} cores x "
            f"{self.threads} threads, {self.nodes} NUMA nodes, {self.memory_mb} MB"
        )


PRESETS = {
    64: LabTopology(2, 16, 2, 4096),
    32: LabTopology(2, 8, 2, 4096),
    8: LabTopology(2, 2, 2, 2048),
}
