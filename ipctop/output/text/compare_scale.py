"""compare's second table: scalability % per side, or hold % for load sweeps.

A pair sweep's row is total(N) / total(1); a load sweep's (hackbench groups,
chat rooms: config.load_unit) is rate(N) / rate(lightest load), whose ideal
is 100 % (analysis/load_curve.py), not N x 100 %.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ipctop.analysis.load_curve import hold_pct
from ipctop.analysis.scaling import ScalingPoint, scalability_pct
from ipctop.output.text.tables import fmt_pct, format_table

if TYPE_CHECKING:
    from ipctop.output.text.compare_rows import Comparison


def scale_pct(unit: str | None, points: Iterable[ScalingPoint], n: int) -> float | None:
    """Scalability % of a pair sweep's point, hold % of a load sweep's."""
    return (hold_pct if unit else scalability_pct)(points, n)


def scale_section(cmp: Comparison) -> str | None:
    """The titled table, or None when only the base load or pair count is present."""
    lightest = cmp.rows[0].pairs if cmp.rows and cmp.unit else 1
    rows = [
        [str(r.pairs)] + [fmt_pct(s) for s in r.scalability] for r in cmp.rows if r.pairs > lightest
    ]
    if not rows:
        return None
    first = f"{cmp.unit}s" if cmp.unit else "pairs"
    table = format_table([first, *cmp.labels], rows, "l" + "r" * len(cmp.labels))
    if not cmp.unit:
        return "Scalability [%]\n" + table
    base = f"{lightest} {cmp.unit}{'' if lightest == 1 else 's'}"
    return f"Hold [%] (messages/s against the lightest load's, {base})\n{table}"
