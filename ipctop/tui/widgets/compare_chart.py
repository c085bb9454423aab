"""One curve per mechanism on the scaling chart (keys w and W), and its table.

The mechanisms measured earlier keep their settled points; the current one
is drawn by the scaling panel as before. Each curve is labelled by its
workload name in the chart's legend.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from ...analysis.scaling import ScalingPoint, scalability_pct
from .chart_lines import line
from .spark import si

#: plotext colours for earlier mechanisms, in order; the current run keeps blue+
COLORS = ("green+", "magenta+", "cyan+", "yellow", "red", "white")


def draw_others(plt: Any, compared: dict[str, list[ScalingPoint]]) -> None:
    """Plot each earlier mechanism's settled points as a line of its own."""
    for k, (name, points) in enumerate(compared.items()):
        line(
            plt,
            [p.pairs for p in points],
            [p.total_ops_per_s for p in points],
            COLORS[k % len(COLORS)],
            name,
            "■",
        )


def extent(compared: dict[str, list[ScalingPoint]]) -> tuple[list[int], float]:
    """Pair counts and the highest total of the earlier curves, for the axes."""
    xs = [p.pairs for pts in compared.values() for p in pts]
    top = max((p.total_ops_per_s for pts in compared.values() for p in pts), default=0.0)
    return xs, top


def comparison_table(
    current: str, points: list[ScalingPoint], compared: dict[str, list[ScalingPoint]]
) -> Text:
    """Ops/s and scalability % per pair count, one column per mechanism (current first)."""
    curves = {current: [p for p in points if p.settled], **compared}
    width = max(9, *(len(n) for n in curves))
    head = Text(f"{'pairs':>5}", "bold")
    for name in curves:
        head.append(f" {name[:width]:>{width}} {'scal%':>5}", "bold")
    lines = [head]
    counts = sorted({p.pairs for pts in curves.values() for p in pts})
    for n in counts:
        line = f"{n:>5}"
        for pts in curves.values():
            at = next((p for p in pts if p.pairs == n), None)
            scal = scalability_pct(pts, n)
            ops = "-" if at is None else si(at.total_ops_per_s)
            pct = "-" if scal is None else f"{scal:.0f}"
            line += f" {ops:>{width}} {pct:>5}"
        lines.append(Text(line))
    if not counts:
        lines.append(Text("no settled reading yet"))
    return Text("\n").join(lines)
