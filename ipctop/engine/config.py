"""What one run is: the workload, where its ends run and how, and its options.

Its own module so that workloads can read it without importing the engine
that imports them.
"""

from __future__ import annotations

from dataclasses import dataclass

# Rounds per timed round by default: timing every round cost sysv-sem over 2 %
# of its throughput at 2 pairs on the 2-CPU VM, 1 in 8 well under 1 %
# (bench/latency_cost.py, BENCHMARKS.md). --latency-every 1 times them all.
LATENCY_EVERY = 8


@dataclass(frozen=True)
class EngineConfig:
    workload: str = "sysv-msg"
    placement: str = "same"
    mode: str = "threads"
    cpus: tuple[int, ...] = (0,)
    engine: str = "auto"
    threads: int | None = None  # sysv-sem-multi: threads in all (default 4 per CPU)
    sems: int = 128  # sysv-sem-multi: semaphores in the one shared array
    latency: bool = True  # time rounds in the native ends (see latency.py)
    latency_every: int = LATENCY_EVERY  # time one round in this many
    rt: int | None = None  # SCHED_FIFO priority of the ends; None: normal scheduling
    think_ns: int = 0  # CPU work per round between receive and send (--think-ns)
    size: int | None = None  # payload bytes of a message workload (None: its seed's default)
    queues: int | None = None  # sysv-lifecycle: queues per thread (None: 32768 capped by msgmni)
    prefill: int = 0  # sysv-lifecycle: idle queues each thread makes before its phases
    fds: int = 20  # hackbench: senders and receivers per group (--fds)
    transport: str | None = None  # hackbench: socket or pipe; chat: tcp or unix (None: default)
