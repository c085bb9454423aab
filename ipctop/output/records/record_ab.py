"""The "ab" object of an `ipctop ab` record, typed: both sides, the ABBA blocks, the result.

output/records/ab_record.py writes it; compare (one ab record: B against A) and replay
read it. Keys a newer ipctop adds are kept as they are.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ipctop.engine.config import RunConfig
from ipctop.engine.costs import Costs
from ipctop.engine.stalls import StallSummary
from ipctop.output.records.profile_record import StepProfile


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow", allow_inf_nan=False)


class AbSide(_Part):
    options: str | None = None  # the side's own options, as typed
    cmd: str | None = None  # the hook run before each of its slots
    config: RunConfig | None = None  # the side's run, as a record's own config says it
    windows: tuple[float, ...] = ()  # every slot's window rates, in order


class AbSides(_Part):
    A: AbSide
    B: AbSide


class AbBlock(_Part):
    """One ABBA block: each side's window rates in it."""

    A: tuple[float, ...]
    B: tuple[float, ...]


class AbLatencyBlock(_Part):
    A: dict[str, tuple[float, ...]]  # figure -> each slot's percentile, ns
    B: dict[str, tuple[float, ...]]


class AbResult(_Part):
    """B against A as a record keeps it: analysis.stats.Difference.to_dict (no se or
    notes, df null when infinite, its verdict), in that order. Every key is optional:
    records from before `unit` and `df` lack them, and a record writes the keys it read."""

    n_a: int | None = None
    n_b: int | None = None
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    test: str | None = None
    unit: str | None = None
    df: float | None = None
    verdict: str | None = None
    # ab's own (output/records/ab_record.py): other processes' CPU during the run, and
    # why ops/s was not judged when the verdict is "not judged".
    outside_cpu_pct: float | None = None
    not_judged_why: str | None = None


class AbLatency(_Part):
    notes: dict[str, str | None] = {}  # side -> how its rounds were timed
    blocks: tuple[AbLatencyBlock, ...] = ()
    result: dict[str, AbResult] | None = None  # figure -> B against A, its latency verdict


class AbProfiles(_Part):
    A: StepProfile
    B: StepProfile


class AbCosts(_Part):
    """Each side's costs over all its slots (engine.costs.merge), as a step's are kept:
    a record read and written again keeps every field of Costs; keys a newer ipctop
    adds inside a side's costs are dropped, as they are from a step's."""

    A: Costs | None = None
    B: Costs | None = None


class AbStalls(_Part):
    """What stalls took out of an ab run (live/ab_stalls.py): each side's stalled
    windows, summed over its slots as a step's are (None: none stalled), and the
    blocks with a side left without a window, which give no log ratio."""

    A: StallSummary | None = None
    B: StallSummary | None = None
    blocks_left_out: int = 0


class AbRecord(_Part):
    """Both sides, the blocks and the result; latency, profile and costs when measured."""

    order: str = "ABBA"
    metric: str = "ops"  # ops: ops/s; cpu: rounds per CPU-second of the ends
    sides: AbSides
    blocks: tuple[AbBlock, ...]
    result: AbResult | None = None
    restore_cmd: str | None = None
    latency: AbLatency | None = None
    profile: AbProfiles | None = None
    costs: AbCosts | None = None
    stalls: AbStalls | None = None  # only when a window stalled or a block was left out
