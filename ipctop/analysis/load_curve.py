"""The monitor's curve for a load workload: rate by load against a flat ideal.

On a fixed set of CPUs that the lightest load already keeps busy, a constant
cost per message means a constant total rate however many groups or rooms
share the CPUs: the ideal is flat at the lightest load's rate, not N times
it. Hold % = rate(N) / rate(lightest) x 100, so 100 % is "it held"; the
seeds' 2.6.4 volanomark fell to 49 % at 60 rooms (2857 of 5850).
"""

from __future__ import annotations

from collections.abc import Iterable

from .scaling import ScalingPoint


def _lightest(points: Iterable[ScalingPoint]) -> ScalingPoint | None:
    settled = [p for p in points if p.settled]
    return min(settled, key=lambda p: p.pairs, default=None)


def flat_line(points: Iterable[ScalingPoint]) -> list[tuple[int, float]] | None:
    """(units, rate at the lightest settled load) for every load present; None without one."""
    points = list(points)
    base = _lightest(points)
    if base is None:
        return None
    return [(p.pairs, base.total_ops_per_s) for p in sorted(points, key=lambda p: p.pairs)]


def hold_pct(points: Iterable[ScalingPoint], units: int) -> float | None:
    """rate(units) / rate(lightest settled load) x 100; None if either is missing."""
    points = list(points)
    base = _lightest(points)
    at = next((p for p in points if p.pairs == units), None)
    if base is None or at is None or base.total_ops_per_s <= 0:
        return None
    return 100.0 * at.total_ops_per_s / base.total_ops_per_s
