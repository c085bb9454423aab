"""The latency matrix as terminal text: a heatmap per mechanism and the class table."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...engine.latency import format_ns
from ...engine.matrix_runs import Cell, ClassRow
from .tables import format_table

if TYPE_CHECKING:
    from ..records.matrix_record import MatrixRecord

RAMP = " .:-=+*#%@"  # from the fastest cell to the slowest, on a log scale
# 256-colour backgrounds from green through yellow to red
HEAT = (22, 28, 34, 70, 106, 142, 178, 172, 166, 160)
WIDE = 16  # above this many CPUs a cell is one character, not a figure


def _value(c: Cell, figure: str) -> float | None:
    return c.oneway.p99 if figure == "p99" else c.oneway.p50


def _level(v: float, lo: float, hi: float, steps: int) -> int:
    if hi <= lo:
        return 0
    x = (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return min(steps - 1, max(0, int(x * steps)))


def heatmap(cells: Sequence[Cell], cpus: Sequence[int], figure: str = "p50",
            colour: bool = False) -> str:  # fmt: skip
    """Rows are the sending CPU, columns the woken one; '·' was not measured."""
    by = {(c.src, c.dst): _value(c, figure) for c in cells}
    vals = [v for v in by.values() if v]
    if not vals:
        return "(no cell was timed)"
    lo, hi = min(vals), max(vals)
    wide = len(cpus) > WIDE
    width = 1 if wide else max(len(format_ns(v)) for v in vals) + 1
    label = max(len(str(c)) for c in cpus)
    head = " " * (label + 3)
    if not wide:
        head += "".join(f"{c:>{width}}" for c in cpus)
    lines = [f"one-way {figure}, from (rows) to (columns)", head]
    for a in cpus:
        row = f"{a:>{label}} | "
        for b in cpus:
            v = by.get((a, b))
            if v is None:
                text = "·" if wide else f"{'·':>{width}}"
            elif wide:
                text = RAMP[_level(v, lo, hi, len(RAMP))]
            else:
                text = f"{format_ns(v):>{width}}"
            if colour and v is not None:
                text = f"\x1b[48;5;{HEAT[_level(v, lo, hi, len(HEAT))]}m{text}\x1b[0m"
            row += text
        lines.append(row)
    if wide:
        lines.append(f"scale (log): '{RAMP[0]}' {format_ns(lo)} .. '{RAMP[-1]}' {format_ns(hi)}")
    return "\n".join(lines)


def class_table(rows: Sequence[ClassRow]) -> str:
    headers = ["mechanism", "class", "cells", "p50", "p99", "spin p50", "kernel p50",
               "spin p99", "kernel p99"]  # fmt: skip
    body = [
        [
            r.workload,
            r.cls,
            f"{r.cells}" + (f" (+{r.few} few)" if r.few else ""),
            format_ns(r.p50),
            format_ns(r.p99),
            format_ns(r.base_p50),
            format_ns(r.kernel_p50),
            format_ns(r.base_p99),
            format_ns(r.kernel_p99),
        ]  # fmt: skip
        for r in rows
    ]
    return format_table(headers, body, "llrrrrrrr")


def compare_table(records: Sequence[MatrixRecord], labels: Sequence[str]) -> str:
    """Per mechanism and class: each record's median one-way p50 and p99, and the
    change against the first (a single matrix has no interval: its cells are one
    run each, so only the change is shown, with the cell counts)."""
    keyed = [{(r.workload, r.cls): r for r in rec.classes} for rec in records]
    keys = list(dict.fromkeys(k for rows in keyed for k in rows))
    headers = ["mechanism", "class"]
    for i, label in enumerate(labels):
        headers += [f"p50 {label}", f"p99 {label}"]
        if i:
            headers += ["p50 Diff [%]", "p99 Diff [%]"]
    body = []
    for key in keys:
        first = keyed[0].get(key)
        row = [key[0], key[1]]
        for i, rows in enumerate(keyed):
            r = rows.get(key)
            row += [format_ns(r.p50) if r else "-", format_ns(r.p99) if r else "-"]
            if i:
                row += [_diff(first.p50 if first else None, r.p50 if r else None),
                        _diff(first.p99 if first else None, r.p99 if r else None)]  # fmt: skip
        body.append(row)
    return format_table(headers, body, "ll" + "r" * (len(headers) - 2))


def _diff(a: float | None, b: float | None) -> str:
    if a is None or b is None or a <= 0:
        return "-"
    return f"{100.0 * (b - a) / a:+.0f}"
