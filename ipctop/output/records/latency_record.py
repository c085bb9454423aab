"""Latency in records: per step and pair, with the windows an interval is built from.

A step's optional "latency" object (the record version does not change):

    {"note": how rounds were timed,
     "pairs": [{"pair", "rtt", "oneway"} ...] of the median run, whole window,
              and pair -1 for all pairs together,
     "windows": {"rtt_p50": [...], "rtt_p99": [...], "oneway_p50": [...],
                 "oneway_p99": [...]}: every sampler interval of every run, in ns}
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ...engine.latency import PairLatency, whole
from ...plain import to_plain

FIGURES = ("rtt_p50", "rtt_p99", "oneway_p50", "oneway_p99")


@dataclass(frozen=True)
class StepLatency:
    """A step's "latency" object, typed (a Step's `latency`)."""

    note: str = ""  # how rounds were timed (Engine.latency_note)
    pairs: tuple[PairLatency, ...] = ()  # the median run's, pair -1 for all together
    windows: dict[str, tuple[float, ...]] = field(default_factory=dict)  # FIGURES, in ns

    def to_dict(self) -> dict[str, Any]:
        # Kept for the pairs' rounding (LatencySummary.rounded).
        return to_plain(replace(self, pairs=tuple(p.rounded() for p in self.pairs)))


def step_latency(runs: list[Any], middle: Any) -> StepLatency | None:
    """The latency object of a step (from live.measure's RunResults), None when
    its rounds were not timed."""
    if not middle.latency:
        return None
    pairs = [p.rounded() for p in middle.latency]
    if len(middle.latency) > 1 and middle.latency_all is not None:
        pairs.append(middle.latency_all.rounded())
    windows: dict[str, list[float]] = {k: [] for k in FIGURES}
    for r in runs:
        for s in r.timeline:
            p = whole(s.latency)
            if p is None:
                continue
            figures = {
                "rtt_p50": p.rtt.p50,
                "rtt_p99": p.rtt.p99,
                "oneway_p50": p.oneway.p50,
                "oneway_p99": p.oneway.p99,
            }
            if any(v is None for v in figures.values()):
                continue  # a window with no timed round (a starved pair) has no percentile
            for k, v in figures.items():
                if v is not None:  # none is (the check above): said for the type checker
                    windows[k].append(v)
    return StepLatency(
        note=middle.latency_note,
        pairs=tuple(pairs),
        windows={k: tuple(xs) for k, xs in windows.items()},
    )


def problems(latency: Any, at: str) -> list[str]:
    """What is wrong with a recorded latency object, as short phrases."""
    if latency is None:
        return []
    if not isinstance(latency, dict):
        return [f"{at}latency should be an object"]
    out = []
    if not isinstance(latency.get("pairs", []), list):
        out.append(f"{at}latency.pairs should be a list")
    windows = latency.get("windows", {})
    if not isinstance(windows, dict):
        out.append(f"{at}latency.windows should be an object")
    else:
        for k, xs in windows.items():
            if not isinstance(xs, list) or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 for x in xs
            ):
                out.append(f"{at}latency.windows.{k} should be a list of non-negative numbers")
    return out
