"""The monitor's samples and current curve onto the --metrics board (no Textual here)."""

from __future__ import annotations

from typing import Any

from ..engine.sample import Sample
from ..output.metrics import MetricsBoard, RunLabels
from .session import Session


class MetricsFeed:
    """Called on the UI thread after each sample is fed, so the curve is read safely."""

    def __init__(self, board: MetricsBoard) -> None:
        self.board = board

    def __call__(self, sample: Sample, info: Any, session: Session) -> None:
        labels = RunLabels(info.workload, info.placement, info.mode, info.engine)
        self.board.publish(sample, labels, session.curve.points())
