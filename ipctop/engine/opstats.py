"""Per-operation rates across threads, as msgbench printed them."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..plain import to_plain


def op_stats(names: Sequence[str], per_thread: Sequence[Sequence[float]]) -> OpStats:
    """{op: OpRate} from each thread's rate of each op.

    per_s is the sum over threads; avg/stddev/min/max describe how the threads
    shared it (a lookup regression shows as a lower average, contention as a
    wider spread).
    """
    out: OpStats = {}
    for i, name in enumerate(names):
        rates = [t[i] for t in per_thread if i < len(t)]
        if rates:
            out[name] = spread(rates, sum(rates))
    return out


def spread(rates: Sequence[float], per_s: float, n: int | None = None) -> OpRate:
    """The total rate and how `rates` (at least one) spread: avg, stddev, min, max."""
    return OpRate(
        per_s=per_s,
        avg=statistics.fmean(rates),
        stddev=statistics.stdev(rates) if len(rates) > 1 else 0.0,
        min=min(rates),
        max=max(rates),
        n=n,
    )


@dataclass(frozen=True)
class OpRate:
    """One operation's rate in a record's step (a Step's `ops`): one entry of OpStats."""

    per_s: float  # the sum over threads
    avg: float
    stddev: float
    min: float
    max: float
    n: int | None = None  # msgbench: the repeats a phase's rates come from

    def to_dict(self) -> dict[str, float]:
        # Kept: n is absent, as op_stats writes it, when not a msgbench phase.
        d = to_plain(self)
        if self.n is None:
            del d["n"]  # absent, as op_stats writes it, when not a msgbench phase
        return d


#: per operation, in the order the workload names them
OpStats = dict[str, OpRate]


def format_op_stats(stats: Mapping[str, OpRate]) -> list[list[str]]:
    return [
        [name, f"{s.per_s:,.0f}", f"{s.avg:,.0f}", f"{s.stddev:,.0f}",
         f"{s.min:,.0f}", f"{s.max:,.0f}"]
        for name, s in stats.items()
    ]  # fmt: skip
