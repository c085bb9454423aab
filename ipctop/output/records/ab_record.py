"""The record of an `ipctop ab` run: a normal record (kind "ab") whose steps and
timeline are A's and B's slots, plus an "ab" object with both sides and the
result, so `compare` (one ab record: A against B) and `replay` read it."""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ipctop.analysis.scaling import ScalingPoint
from ipctop.analysis.stats import WINDOW_S, Difference
from ipctop.engine.config import RunConfig
from ipctop.engine.costs import Costs
from ipctop.engine.profile.window import Profile, sides_to_dicts
from ipctop.engine.sample import Sample
from ipctop.errors import RecordError
from ipctop.output.records.record import Record, Step
from ipctop.output.records.record_ab import AbLatency, AbRecord, AbStalls
from ipctop.output.records.record_box import Box

if TYPE_CHECKING:
    import argparse


def run_config(config: RunConfig, kind: str, pairs: int) -> RunConfig:
    """One side's configuration: no fixed duration, the sides alternate until known."""
    return config.as_run(kind, pairs=pairs, window_s=WINDOW_S)


def _timeline(results: list[tuple[str, Any]]) -> list[Sample]:
    # results: (side, live.measure.RunResult); output sits below live, so not imported.
    """Every slot's samples on one clock, each marked with its side."""
    out: list[Sample] = []
    t = 0.0
    for name, r in results:
        for s in r.timeline:
            t += s.dt
            out.append(replace(s, t=t, side=name))
    return out


def ab_record(
    box: Box,
    sides: dict[str, Any],
    blocks: list[tuple[list[float], list[float]]],
    results: list[tuple[str, Any]],
    d: Difference,
    args: argparse.Namespace,
    kind: str,
    elapsed: float,
    latency: AbLatency | None = None,
    profiles: dict[str, Profile] | None = None,
    costs: dict[str, Costs | None] | None = None,
    outside_pct: float | None = None,
    not_judged: str = "",
    stalls: AbStalls | None = None,
) -> Record:
    """The record; latency, the sides' profiles (engine.profile.Profile) and their costs
    when the run measured them, and what stalls left out (live/ab_stalls.py) when any."""
    steps = []
    for s in sides.values():
        total = statistics.median(s.windows) if s.windows else 0.0
        steps.append(Step(pairs=s.pairs, total_ops_per_s=total, windows=list(s.windows)))
    a = sides["A"]
    return Record(
        kind="ab",
        box=box,
        config=run_config(a.config, kind, a.pairs),
        steps=steps[:1],
        points=[ScalingPoint.from_repeats(a.pairs, [steps[0].total_ops_per_s], windows=a.windows)],
        timeline=_timeline(results),
        ab=AbRecord.model_validate(
            {
                "order": "ABBA",
                "metric": args.metric,  # ops: ops/s; cpu: rounds per CPU-second of the ends
                "sides": {
                    s.name: {
                        "options": s.options,
                        "cmd": s.cmd,
                        "config": run_config(s.config, kind, s.pairs),
                        "windows": list(s.windows),
                    }
                    for s in sides.values()
                },
                "restore_cmd": args.restore_cmd,
                "blocks": [{"A": list(x), "B": list(y)} for x, y in blocks],
                "result": _result(d, outside_pct, not_judged),
                "precision_pct": args.precision,
                "max_seconds": args.max_seconds,
                "window_s": args.window,
                "settle_s": args.settle,
                "seconds": elapsed,
                **({"latency": latency} if latency is not None else {}),
                **(
                    {"profile": sides_to_dicts(profiles), "costs": costs}
                    if profiles is not None
                    else {}
                ),
                **({"stalls": stalls} if stalls is not None else {}),
            }
        ),
    )


def _result(d: Difference, outside_pct: float | None, not_judged: str) -> dict[str, Any]:
    """The difference as the record keeps it, with the others' CPU during the run and,
    when ops/s was not judged for it, the verdict "not judged" and why (commands.ab)."""
    out = d.to_dict()
    if outside_pct is not None:
        out["outside_cpu_pct"] = round(outside_pct, 1)
    if not_judged:
        out["verdict"] = NOT_JUDGED
        out["not_judged_why"] = not_judged
    return out


#: an ab result whose ops/s the run declined to judge (a busy box)
NOT_JUDGED = "not judged"


def ab_blocks(record: Record) -> list[tuple[list[float], list[float]]]:
    """The ABBA blocks of an ab record, as paired_difference takes them."""
    if record.ab is None:
        raise RecordError(f"{record.name}: ab.blocks should be a list of A and B rates")
    return [(list(b.A), list(b.B)) for b in record.ab.blocks]
