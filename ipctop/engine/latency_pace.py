"""How often the sampler reads each pair's latency: every sample up to
EVERY_SAMPLE_ENDS ends, every LONG_SPAN_S above them (issue 29).

At 1,024 pairs the reading is about 9 ms of CPU (bench/latency_read.py, 1,024
pairs, 2026-12-07): 1.8 % of a CPU at two samples a second, half of what the
sampler cost there, when the monitor's whole budget at 2,048 threads is 5 %.
The ends count every round in their own histograms whether or not anyone
reads them, so a reading every 2 s loses no round: each pair's figures then
cover the 2 s since the last reading, not one interval, and the samples in
between carry none. The session, the latency panel and the metrics hold the
last reading; the panel and `run` say the step. The threshold is the screen's
(tui/widgets/table_pace.LONG_ROWS): above it the screen steps every 2 s too.
"""

from __future__ import annotations

EVERY_SAMPLE_ENDS = 256  # up to this many ends, every sample has its reading
LONG_SPAN_S = 2.0  # seconds between readings above it


def latency_span_s(ends: int) -> float:
    """Seconds between latency readings at this many ends; 0: every sample."""
    return 0.0 if ends <= EVERY_SAMPLE_ENDS else LONG_SPAN_S


def latency_due(now: float, last: float | None, ends: int, interval: float) -> bool:
    """Whether a reading at `now` reads latency: the first always, then every span.

    Half an interval of slack, so timer jitter does not push a reading a whole
    interval late."""
    span = latency_span_s(ends)
    return last is None or span == 0.0 or now - last >= span - interval / 2.0


def span_note(ends: int) -> str:
    """What a run line says of the pace at this many ends ("" for every sample)."""
    span = latency_span_s(ends)
    if not span:
        return ""
    return (
        f"latency is read every {span:g} s above {EVERY_SAMPLE_ENDS} threads: each reading"
        f" covers the {span:g} s since the last, and the samples between carry none"
    )
