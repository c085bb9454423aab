"""The monitor's samples and current curve onto the --metrics board (no Textual here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.sample import Sample
from ..output.exports.metrics import MetricsBoard, RunLabels
from ..output.exports.metrics_histograms import LatencyAccumulator
from .session import Session


class MetricsFeed:
    """Called on the UI thread after each sample is fed, so the curve is read safely.

    engine_of() is the source's current engine (None for a replay): its latency
    histograms are exported, restarted when the run's labels change."""

    def __init__(self, board: MetricsBoard, engine_of: Callable[[], Any] = lambda: None) -> None:
        self.board = board
        self.engine_of = engine_of
        self._labels: RunLabels | None = None
        self._latency = LatencyAccumulator(engine_of)

    def __call__(self, sample: Sample, info: Any, session: Session) -> None:
        labels = RunLabels(
            info.config.workload, info.config.placement, info.config.mode, info.config.engine
        )
        if labels != self._labels:  # w, p or m: another run, new series
            self._labels, self._latency = labels, LatencyAccumulator(self.engine_of)
        self._latency.feed()
        self.board.publish(sample, labels, session.curve.points(), self._latency.snapshot())
