"""Two-column data files for gnuplot, as the original sweeps saved them ("cores total")."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ipctop.analysis.scaling import ScalingPoint
from ipctop.output.records.record_io import atomic_write_text


def gnuplot_text(points: Iterable[ScalingPoint]) -> str:
    lines = ["# pairs total_ops_per_s"]
    for p in sorted(points, key=lambda p: p.pairs):
        lines.append(f"{p.pairs} {p.total_ops_per_s:.0f}")
    return "\n".join(lines) + "\n"


def write_gnuplot(
    directory: str | os.PathLike[str], name: str, points: Iterable[ScalingPoint]
) -> Path:
    """Write <directory>/<name> (".dat" added when name has no suffix); returns the path."""
    if not name or os.sep in name:
        raise ValueError(f"gnuplot file name must be a plain file name, got {name!r}")
    filename = name if Path(name).suffix else f"{name}.dat"
    return atomic_write_text(Path(directory) / filename, gnuplot_text(points))
