"""A load sweep's record: the usual sweep record, its pair counts being loads.

Each step is one load (groups or rooms), its total the median messages/s of
the load's fresh runs, and each run's rate one of its windows: the run is the
replicate, so compare's interval of B/A is built from the runs. hackbench's
time is messages / rate (config.messages_per_group), so the record keeps
rates only; config.load_unit says what a step counts, and compare refuses to
set groups against pairs. Each step also keeps its median run's units
(groups or rooms: ends, messages/s, CPUs), the rows a replay shows as the
monitor does; a record without them still reads and replays without rows.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ..analysis.scaling import ScalingPoint
from ..box import read_box
from ..engine.config import RunConfig
from ..output.records.output_paths import check_output_file, write_or_keep
from ..output.records.record import Record, Step, StepUnit
from ..output.records.record_box import Box
from ..output.records.record_io import write_record
from ..signals import Interrupted


def new_record(
    workload: str,
    unit: str,
    mode: str,
    placement: str,
    cpus: Sequence[int],
    *,
    repeat: int,
    seconds: float | None = None,
    warmup: float | None = None,
    **config: object,
) -> Record:
    run = RunConfig(
        workload, placement, mode, cpus, "native", seconds=seconds, warmup=warmup, repeat=repeat
    )
    # The run's nine keys, then what a load sweep adds (load_unit, fds, loops, ...).
    said = {**run.said(), "load_unit": unit, **config}
    return Record(kind="sweep", box=Box.of(read_box()), config=RunConfig.model_validate(said))


def median_run(rates: Sequence[float]) -> int:
    """The index of the run whose rate is the (lower) median: the run a step's units are from."""
    order = sorted(range(len(rates)), key=lambda i: rates[i])
    return order[(len(order) - 1) // 2]


def add_load(
    record: Record,
    units: int,
    rates: Sequence[float],
    rows: Sequence[StepUnit] = (),
    no_rate: str | None = None,
) -> None:
    """One load's runs: a step and a settled point whose windows are the runs;
    rows are the median run's units. A load with no rate (no_rate: why) is a step
    that says so and no point."""
    if no_rate is not None:
        step = Step(pairs=units, total_ops_per_s=0.0, units=list(rows), no_rate=no_rate)
        record.steps.append(step)
        return
    point = ScalingPoint.from_repeats(units, rates, settled=True, windows=rates)
    record.steps.append(
        Step(
            pairs=units,
            total_ops_per_s=point.total_ops_per_s,
            repeats=list(rates),
            windows=list(rates),
            units=list(rows),
        )
    )
    record.points.append(point)


def check_record_path(path: str | None) -> None:
    """Before anything runs or prints: a record that cannot be saved is found out now."""
    if path:
        check_output_file(path, "--json")


@contextmanager
def recording(path: str | None) -> Iterator[list[Record]]:
    """Hands out a list to put the record in; writes it however the sweep ends
    (marked interrupted on Ctrl-C)."""
    check_record_path(path)
    holder: list[Record] = []
    try:
        yield holder
    except Interrupted:
        for r in holder:
            r.interrupted = True
        raise
    finally:
        if path and holder and holder[0].steps:
            said, ok = write_or_keep(
                check_output_file(path, "--json"), lambda p: write_record(p, holder[0])
            )
            print(f"{'' if ok else 'ipctop: '}{said}", file=sys.stderr)
