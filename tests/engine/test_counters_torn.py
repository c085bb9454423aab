"""A Python end's count is never read torn.

struct.pack_into wrote a slot's 8-byte count a byte at a time, and a reader beside
it read 0 or a few rounds in about 3 % of its readings while the writer ran flat
out (real forked writer, this box): the sampler made a negative rate of it, then a
spike, and tests/engine/test_engine.py's grid failed once in about 400 runs with
one end of a running pair at 0 rounds. Here a real forked process writes the
count through the Python engine's SlotWriter as fast as it can, on the other CPU
where there is one, while this one reads it the way the sampler does.
"""

from __future__ import annotations

import os
import signal
import time

from ipctop.engine.counters import CounterBlock, SlotWriter, read_slot

READ_FOR = 2.0


def test_a_forked_writers_count_never_goes_back_while_read() -> None:
    block = CounterBlock(capacity=4)
    slot = block.allocate()
    cpus = sorted(os.sched_getaffinity(0))
    pid = os.fork()
    if pid == 0:
        try:
            os.sched_setaffinity(0, {cpus[-1]})
            writer = SlotWriter(block, slot)
            writer.start(os.getpid())
            n = 0
            while True:
                n += 1
                writer.rounds(n)
                writer.error(n, 0)
        finally:
            os._exit(1)
    try:
        os.sched_setaffinity(0, {cpus[0]})
        went_back: list[tuple[int, int]] = []
        last = last_errors = reads = 0
        deadline = time.monotonic() + READ_FOR
        while time.monotonic() < deadline:
            r = read_slot(block.buf, slot)
            n, errors = block.rounds(slot), r.errors
            reads += 1
            if r.rounds < last or n < r.rounds or errors < last_errors:
                went_back.append((last, min(r.rounds, n)))
            last, last_errors = max(last, r.rounds, n), errors
        assert last > 10_000, f"the writer barely ran: {last} rounds"
        assert not went_back, f"{len(went_back)} of {reads} readings went back: {went_back[:5]}"
    finally:
        os.sched_setaffinity(0, set(cpus))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        block.close()
